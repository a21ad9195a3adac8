"""The IoU family for axis-aligned boxes in PyTorch (catalogue section 5, seed 001).

Boxes are rows ``(x1, y1, x2, y2)`` with ``x1 <= x2`` and ``y1 <= y2`` in
continuous coordinates (no "+1 pixel" in widths). For boxes ``a``, ``b`` with
intersection ``a & b``, union ``a | b``, smallest enclosing box ``C`` of
width ``W`` and height ``H``, centre distance ``rho`` and ``c^2 = W^2 + H^2``:

    box_iou = |a & b| / |a | b|
    giou    = IoU - |C \\ (a | b)| / |C|                 (Rezatofighi et al., CVPR 2019)
    diou    = IoU - rho^2 / c^2                          (Zheng et al., AAAI 2020)
    ciou    = DIoU - alpha v,  v = (4/pi^2)(atan(w_b/h_b) - atan(w_a/h_a))^2,
              alpha = v / ((1 - IoU) + v), a constant in the gradient (Zheng et al.)

Losses are ``1 - value``.

Conventions shared by every function here:

* ``a`` and ``b`` are floating tensors of shapes ``(..., 4)`` that broadcast
  against each other; the result has the broadcast batch shape. float16 and
  bfloat16 are computed in float32 and cast back: the output dtype is the
  promoted dtype of ``a`` and ``b``.
* Degenerate boxes (zero width or height) are outside the catalogue's domain;
  here they give finite values and finite gradients: IoU = 0 when the union
  has zero area, the GIoU penalty is 0 when ``|C| = 0``, the DIoU penalty is 0
  when ``c = 0``, the aspect angle is ``atan2(w, h)`` (pi/2 for a flat box, 0
  for a point) and alpha = 0 where ``(1 - IoU) + v = 0`` (``a = b``). Every
  0/0 is avoided by a ``where`` whose other branch sees a safe denominator,
  so no NaN reaches the backward pass either.
* Bad input raises ``ValueError`` naming the argument: not a floating tensor,
  last axis not of length 4, shapes that do not broadcast, or (CPU tensors
  only; skipped elsewhere to avoid a device synchronisation) ``x2 < x1`` or
  ``y2 < y1`` in some box.

Stability: the textbook formulas overflow (areas of boxes at ``|x| ~ 1e20``
in float32), underflow (areas of tiny boxes) and lose the intersection of
thin boxes.  Here each axis is first scaled by a power of two (exact) that
brings its largest coordinate into [0.5, 1), so every difference of
coordinates is correctly rounded and cannot overflow. IoU's areas are
divided by the power of two 2^k of the larger box's area, each product of
two lengths formed as ``(x 2^-k1)(y 2^-k2)`` with ``k1 + k2 = k``, so that
the union is >= 1/4 and no area overflows or underflows unless it is
negligible (two thin boxes crossing each other keep their tiny IoU, and
the backward pass meets no ``inf``); GIoU's ``|C \\ (a | b)|/|C|`` as a sum of
nonnegative products of ratios ``length/W`` and ``length/H`` in [0, 1] (the
part of C outside the union, split by which box covers each x), which has
no cancellation: it is exactly 0 for nested boxes and for boxes that share
an edge and fill C, where ``1 - |a | b|/|C|`` would leave a rounding error
of ``eps``, while its gradient is that of ``1 - |a | b|/|C|`` (single terms
such as ``h_b/|C|``, where the sum's would cancel); DIoU's ``rho^2/c^2`` and CIoU's angles after
rescaling both axes to the common scale of ``W, H`` by powers of two, so
that the larger of the two lies in [0.5, 1); CIoU's angles ``atan2(w, h)``
from each box's own lengths (scale free). Scale factors are computed
without gradient (they are exact constants).
"""

from __future__ import annotations

import math

import torch

__all__ = ["box_iou", "giou", "diou", "ciou"]

_HALF = (torch.float16, torch.bfloat16)
_LOW = -(1 << 20)  # the exponent of a zero length
_BIAS = {torch.float32: 127, torch.float64: 1023}  # exponent bias = largest exponent


def _check_boxes(x, name: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of boxes (..., 4), got {type(x).__name__}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.ndim < 1 or x.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (..., 4) (x1, y1, x2, y2), got {tuple(x.shape)}")
    if x.device.type == "cpu" and x.numel():
        for k, axis in ((0, "x"), (1, "y")):
            if bool((x[..., k + 2] < x[..., k]).any()):
                raise ValueError(f"{name} has boxes with {axis}2 < {axis}1 (boxes are (x1, y1, x2, y2), "
                                 f"x1 <= x2, y1 <= y2)")


def _prepare(a, b):
    _check_boxes(a, "a")
    _check_boxes(b, "b")
    out_dtype = torch.promote_types(a.dtype, b.dtype)
    dtype = torch.float32 if out_dtype in _HALF else out_dtype
    a = a.to(dtype)
    b = b.to(device=a.device, dtype=dtype)
    try:
        a, b = torch.broadcast_tensors(a, b)
    except RuntimeError as e:
        raise ValueError(f"b of shape {tuple(b.shape)} does not broadcast against a of shape {tuple(a.shape)}") from e
    return a, b, out_dtype


def _pow2(k: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """2**k exactly for an integer tensor k, built from its bits (k clamped to the normal range)."""
    bias = _BIAS[dtype]
    bits, shift = (torch.int32, 23) if dtype == torch.float32 else (torch.int64, 52)
    return ((k.clamp(1 - bias, bias).to(bits) + bias) << shift).view(dtype)


def _scaled(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """x * 2**k, exact unless the result is subnormal; two factors, so |k| may reach twice the
    largest exponent (beyond that the result is 0 or, for |x| <= 2, irrelevant)."""
    bias = _BIAS[x.dtype]
    k = k.clamp(-2 * bias, 2 * bias)
    k1 = torch.div(k, 2, rounding_mode="floor")
    return x * _pow2(k1, x.dtype) * _pow2(k - k1, x.dtype)


def _exponent(x: torch.Tensor) -> torch.Tensor:
    """e with |x| = m 2^e, m in [0.5, 1); _LOW for x = 0."""
    _, e = torch.frexp(x)
    return torch.where(x != 0, e, _LOW)


def _axes(a, b):
    """Per axis: the coordinates of a and b scaled by 2^-E (largest |coordinate| in [0.5, 1)) and E."""
    out = []
    for k in (0, 1):
        with torch.no_grad():
            e = _exponent(torch.maximum(a[..., k::2].abs().amax(-1), b[..., k::2].abs().amax(-1)))
            e = torch.where(e == _LOW, 0, e)  # all coordinates 0: no scaling
        out.append((_scaled(a[..., k], -e), _scaled(a[..., k + 2], -e), _scaled(b[..., k], -e),
                    _scaled(b[..., k + 2], -e), e))
    return out


def _common(u, eu, v, ev):
    """Lists u (true values u * 2^eu) and v (v * 2^ev) rescaled by powers of two to one common
    scale, at which the larger of u[0], v[0] lies in [0.5, 1) (both 0: unchanged)."""
    with torch.no_grad():
        ku = torch.where(u[0] != 0, _exponent(u[0]) + eu, _LOW)
        kv = torch.where(v[0] != 0, _exponent(v[0]) + ev, _LOW)
        k = torch.maximum(ku, kv)
        k = torch.where(k == _LOW, torch.maximum(eu, ev), k)
    return [_scaled(t, eu - k) for t in u], [_scaled(t, ev - k) for t in v]


def _outside(a_lo, a_hi, b_lo, b_hi, ext, flat):
    r"""Lengths along one axis, divided by the enclosing extent ``ext`` (1 where ``flat``):
    covered by a only, by b only, by both; the gap between the intervals; the extent not
    covered by a (resp. b).  A point of C lies outside a | b iff its x is in the gap, or its
    x is covered by a only and its y is not covered by a, or likewise for b, or its x is
    covered by both and its y lies in the gap: |C \ (a | b)| = only_a_x out_a_y + only_b_x
    out_b_y + both_x gap_y + gap_x H."""
    lo, hi = torch.minimum(a_lo, b_lo), torch.maximum(a_hi, b_hi)
    e = torch.where(flat, torch.ones_like(ext), ext)
    return {
        "only_a": ((torch.minimum(a_hi, b_lo) - a_lo).clamp(min=0) + (a_hi - torch.maximum(a_lo, b_hi)).clamp(min=0)) / e,
        "only_b": ((torch.minimum(b_hi, a_lo) - b_lo).clamp(min=0) + (b_hi - torch.maximum(b_lo, a_hi)).clamp(min=0)) / e,
        "both": (torch.minimum(a_hi, b_hi) - torch.maximum(a_lo, b_lo)).clamp(min=0) / e,
        "gap": (torch.maximum(a_lo, b_lo) - torch.minimum(a_hi, b_hi)).clamp(min=0) / e,
        "out_a": ((a_lo - lo) + (hi - a_hi)) / e,
        "out_b": ((b_lo - lo) + (hi - b_hi)) / e,
        "len_a": (a_hi - a_lo) / e,
        "len_b": (b_hi - b_lo) / e,
    }


def _terms(a, b, want):
    """The quantities in ``want`` ("iou", "giou", "rho2c2", "v") for broadcast boxes a, b."""
    (ax1, ax2, bx1, bx2, ex), (ay1, ay2, by1, by2, ey) = _axes(a, b)
    wa, ha, wb, hb = ax2 - ax1, ay2 - ay1, bx2 - bx1, by2 - by1
    iw = torch.minimum(ax2, bx2) - torch.maximum(ax1, bx1)
    ih = torch.minimum(ay2, by2) - torch.maximum(ay1, by1)
    W = torch.maximum(ax2, bx2) - torch.minimum(ax1, bx1)
    H = torch.maximum(ay2, by2) - torch.minimum(ay1, by1)
    one = torch.ones_like(W)
    out = {}
    # IoU = |a & b| / |a | b| with every area divided by 2^k, k the exponent of the larger of
    # |a|, |b|: then |a | b| / 2^k >= 1/4, and a product x y 2^-k is formed as (x 2^-k1)(y 2^-k2)
    # (k1 + k2 = k), which neither overflows nor underflows unless it is negligible; 0 where the
    # intersection is empty (also a 0/0 union)
    meet = (iw > 0) & (ih > 0)
    with torch.no_grad():
        k = torch.maximum(_exponent(wa) + _exponent(ha), _exponent(wb) + _exponent(hb))
        k = torch.where(k < _LOW // 2, 0, k)
        k1 = torch.div(k, 2, rounding_mode="floor")

    def area(x, y):
        return _scaled(x, -k1) * _scaled(y, k1 - k)

    inter = area(iw.clamp(min=0), ih.clamp(min=0))
    union = area(wa, ha) + area(wb, hb) - inter
    iou = torch.where(meet, inter / torch.where(meet, union, one), torch.zeros_like(W))
    out["iou"] = iou
    if "giou" in want:
        # |C \ (a | b)| / |C| as a sum of nonnegative products (no cancellation; exactly 0 for
        # nested or edge-sharing boxes that fill C), each length divided by W or H; 0 where |C| = 0
        flat = (W == 0) | (H == 0)
        px, py = _outside(ax1, ax2, bx1, bx2, W, flat), _outside(ay1, ay2, by1, by2, H, flat)
        penalty = px["only_a"] * py["out_a"] + px["only_b"] * py["out_b"] + px["both"] * py["gap"] + px["gap"]
        # its gradient is that of 1 - |a|/|C| - |b|/|C| + |a & b|/|C| (whose partial derivatives are
        # single terms like h_b/|C|; the sum's would cancel +-1/W terms): value + (q - q) = value exactly
        q = 1 - (px["len_a"] * py["len_a"] + px["len_b"] * py["len_b"] - px["both"] * py["both"])
        penalty = penalty.detach() + (q - q.detach())
        out["giou"] = iou - torch.where(flat, torch.zeros_like(W), penalty)
    if "rho2c2" in want:
        dx = ((ax1 - bx1) + (ax2 - bx2)) / 2
        dy = ((ay1 - by1) + (ay2 - by2)) / 2
        (Wc, dxc), (Hc, dyc) = _common([W, dx], ex, [H, dy], ey)
        c2 = Wc * Wc + Hc * Hc
        point = c2 == 0
        out["rho2c2"] = torch.where(point, torch.zeros_like(c2), (dxc * dxc + dyc * dyc) / torch.where(point, one, c2))
    if "v" in want:
        out["v"] = (4 / math.pi ** 2) * (_angle(b) - _angle(a)) ** 2
    return out


def _angle(box):
    """atan2(w, h) of boxes in their own coordinates (scale free; a pair-wide scaling could make
    a small box's lengths subnormal), with (w, h) scaled by a power of two so that the larger
    lies in [0.5, 1) (no underflow of w^2 + h^2 in the derivative); lengths halved where a coordinate exceeds max/4 (x2 - x1
    could overflow); 0 for a point, with a zero gradient."""
    with torch.no_grad():
        big = box.abs().amax(-1) > torch.finfo(box.dtype).max / 4
    half = box * 0.5
    w = torch.where(big, half[..., 2] - half[..., 0], box[..., 2] - box[..., 0])
    h = torch.where(big, half[..., 3] - half[..., 1], box[..., 3] - box[..., 1])
    with torch.no_grad():  # max(w, h) into [0.5, 1): the derivative h/(w^2 + h^2) must not meet 0/0
        k = _exponent(torch.maximum(w, h))
        k = torch.where(k == _LOW, 0, k)
    w, h = _scaled(w, -k), _scaled(h, -k)
    pt = (w == 0) & (h == 0)
    one = torch.ones_like(w)
    return torch.where(pt, torch.zeros_like(w), torch.atan2(torch.where(pt, one, w), torch.where(pt, one, h)))


def box_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Intersection over union ``|a & b| / |a | b|`` of box pairs (catalogue 5).

    Args:
        a, b: floating tensors of boxes ``(x1, y1, x2, y2)``, shapes ``(..., 4)``
            that broadcast; float16, bfloat16, float32 or float64, any device.

    Returns:
        Tensor of the broadcast batch shape and the promoted dtype; values in
        [0, 1], 1 at ``a = b``, 0 for disjoint (or touching) boxes, whose
        gradient is exactly 0 there. The loss is ``1 - box_iou``.

    Areas are formed after exact power-of-two scaling (see the module
    docstring); 0 where the intersection is empty, including degenerate pairs.

    Raises:
        ValueError: see the module docstring.
    """
    a, b, out_dtype = _prepare(a, b)
    return _terms(a, b, ())["iou"].to(out_dtype)


def giou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Generalized IoU ``IoU - |C \\ (a | b)| / |C|`` (Rezatofighi et al., CVPR 2019).

    ``C`` is the smallest box enclosing ``a`` and ``b``. Values lie in
    (-1, 1]; GIoU = IoU when one box contains the other, and unlike IoU its
    gradient does not vanish for disjoint boxes. Shapes, dtypes and errors as
    :func:`box_iou`. The penalty is a sum of nonnegative products of length
    ratios in [0, 1] (see the module docstring): no overflow, underflow or
    cancellation; it is 0 where ``|C| = 0`` (a degenerate pair).
    """
    a, b, out_dtype = _prepare(a, b)
    return _terms(a, b, ("giou",))["giou"].to(out_dtype)


def diou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Distance IoU ``IoU - rho^2 / c^2`` (Zheng et al., AAAI 2020).

    ``rho`` is the distance between the box centres, ``c`` the diagonal of the
    smallest enclosing box. Values lie in [-1, 1], DIoU <= IoU. Shapes, dtypes
    and errors as :func:`box_iou`. ``rho^2/c^2`` is formed after rescaling both
    axes to a common power-of-two scale (the larger of W, H in [0.5, 1)), with
    centre offsets as sums of coordinate differences; 0 where ``c = 0``.
    """
    a, b, out_dtype = _prepare(a, b)
    t = _terms(a, b, ("rho2c2",))
    return (t["iou"] - t["rho2c2"]).to(out_dtype)


def ciou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Complete IoU ``DIoU - alpha v`` (Zheng et al., AAAI 2020).

    ``v = (4/pi^2)(atan(w_b/h_b) - atan(w_a/h_a))^2`` measures the difference
    of aspect ratios and ``alpha = v / ((1 - IoU) + v)`` weighs it; as in the
    paper, alpha is a constant in the gradient (computed under
    ``torch.no_grad``). The angles are ``atan2(w, h)`` of each box's lengths
    at a common power-of-two scale (pi/2 for a flat box, 0 with a zero
    gradient for a point); alpha = 0 where ``(1 - IoU) + v = 0`` (``a = b``).
    Shapes, dtypes and errors as :func:`box_iou`.
    """
    a, b, out_dtype = _prepare(a, b)
    t = _terms(a, b, ("rho2c2", "v"))
    v = t["v"]
    with torch.no_grad():
        den = (1 - t["iou"]) + v
        alpha = torch.where(den > 0, v / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(den))
    return (t["iou"] - t["rho2c2"] - alpha * v).to(out_dtype)
