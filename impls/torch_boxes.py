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
  for a point, both constants with a zero gradient) and alpha = 0 where
  ``(1 - IoU) + v = 0`` (``a = b``). Every 0/0 is avoided by a ``where``
  whose other branch sees a safe denominator, so no NaN reaches the
  backward pass either.
* At a tie (a coordinate of ``a`` equal to the same coordinate of ``b``),
  where the quantities are not differentiable, the gradient is the
  one-sided one of the spec's branch: ``max`` picks ``a``'s coordinate,
  ``min`` picks ``b``'s, and an overlap of length 0 is the constant 0. Where
  that one-sided gradient overflows (lengths near the smallest subnormal),
  ours may be ``inf`` of the same sign (``torch.maximum`` would pass half
  the gradient to each side, and the overflow of the mixture could take
  either sign).
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
such as ``h_b/|C|``, where the sum's would cancel), each box's share
``length/W`` of ``W`` (or ``H``) differentiated as ``1 - (extent outside the
box)/W``, whose derivatives are single terms, exactly 0 where the box spans
C on that axis (those of ``length/W`` would leave a residual ``eps/W``); DIoU's
``rho^2/c^2`` after rescaling both axes to the common scale of ``W, H`` by
powers of two, so that the larger of the two lies in [0.5, 1); CIoU's
angles ``atan2(w, h)`` from each box's own lengths (scale free), constant
where ``h = 0``. Scale factors are computed without gradient (they are
exact constants). On the CPU, where every coordinate of a batch lies in a
range in which no intermediate leaves the normal numbers (``_PLAIN``:
pixel coordinates, as a rule), the scalings are skipped: they would change
no bit there.
"""

from __future__ import annotations

import math

import torch

__all__ = ["box_iou", "giou", "diou", "ciou"]

_HALF = (torch.float16, torch.bfloat16)
_LOW = -(1 << 20)  # the exponent of a zero length
_BIAS = {torch.float32: 127, torch.float64: 1023}  # exponent bias = largest exponent


#: (L, U) per dtype: where every nonzero |coordinate| of a and b lies in [L, U], no length, area,
#: ratio or derivative term of ``_terms`` leaves the normal range, so the exact power-of-two
#: scalings change nothing and are skipped (:func:`_plain`).  A nonzero difference of two
#: coordinates is at least ulp(L) = L 2^(1-p) (both are multiples of the smaller one's ulp) and at
#: most 2U, so lengths lie in [2^-D1, 2^D2] with D1 = 31, D2 = 30 (float32; 255 and 254 in
#: float64): areas, their squares (the derivative of a quotient) and products of two length
#: ratios stay within float32's [2^-126, 2^128).
_PLAIN = {torch.float32: (2.0 ** -8, 2.0 ** 29), torch.float64: (2.0 ** -203, 2.0 ** 253)}


def _plain(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the boxes lie in :data:`_PLAIN`'s range (CPU tensors only: elsewhere the answer
    would need a device synchronisation, and the scaled path is taken).  A NaN or an infinity
    is not in it."""
    if a.device.type != "cpu" or a.dtype not in _PLAIN:
        return False
    low, high = _PLAIN[a.dtype]
    for x in (a, b):
        m = x.detach().abs()
        lo, hi = torch.aminmax(m)
        if not float(hi) <= high:
            return False
        if not float(lo) >= low:  # a zero coordinate (a box at the border), or one below L
            if not float(m.masked_fill(m == 0, low).amin()) >= low:
                return False
    return True


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


def _hi(u, v):
    """max(u, v) for u a coordinate of a and v the same coordinate of b, picking u at a tie (the
    spec's branch: torch.maximum would pass half the gradient to each, a mixture of the two
    one-sided derivatives, whose overflow to inf can then have either sign)."""
    return u.clamp(min=v)  # clamp passes the gradient to u where u >= v, to v elsewhere (where: ~5x slower)


def _lo(u, v):
    """min(u, v) likewise, picking v (b's coordinate) at a tie, as the spec does."""
    return v.clamp(max=u)  # the gradient to v where v <= u, to u elsewhere


def _pos(t):
    """max(t, 0) with derivative 0 at t = 0 (the spec's clamp: an interval that just touches has
    no overlap, a constant 0): relu's derivative at 0 is 0."""
    return torch.relu(t)


def _axes(a, b, plain=False):
    """Per axis: the coordinates of a and b scaled by 2^-E (largest |coordinate| in [0.5, 1)) and E
    (unscaled, E = 0, where ``plain``)."""
    if plain:
        zero = torch.zeros(a.shape[:-1], dtype=torch.int32, device=a.device)
        return [(a[..., k], a[..., k + 2], b[..., k], b[..., k + 2], zero) for k in (0, 1)]
    out = []
    for k in (0, 1):
        with torch.no_grad():
            e = _exponent(torch.maximum(a[..., k::2].abs().amax(-1), b[..., k::2].abs().amax(-1)))
            e = torch.where(e == _LOW, 0, e)  # all coordinates 0: no scaling
        out.append((_scaled(a[..., k], -e), _scaled(a[..., k + 2], -e), _scaled(b[..., k], -e),
                    _scaled(b[..., k + 2], -e), e))
    return out


def _common(u, eu, v, ev, plain=False):
    """Lists u (true values u * 2^eu) and v (v * 2^ev) rescaled by powers of two to one common
    scale, at which the larger of u[0], v[0] lies in [0.5, 1) (both 0: unchanged); as they are
    where ``plain`` (both at scale 1)."""
    if plain:
        return u, v
    with torch.no_grad():
        ku = torch.where(u[0] != 0, _exponent(u[0]) + eu, _LOW)
        kv = torch.where(v[0] != 0, _exponent(v[0]) + ev, _LOW)
        k = torch.maximum(ku, kv)
        k = torch.where(k == _LOW, torch.maximum(eu, ev), k)
    return [_scaled(t, eu - k) for t in u], [_scaled(t, ev - k) for t in v]


def _outside(a_lo, a_hi, b_lo, b_hi, ext, flat, grad=True):
    r"""Lengths along one axis, divided by the enclosing extent ``ext`` (1 where ``flat``):
    covered by a only, by b only, by both; the gap between the intervals; the extent not
    covered by a (resp. b), and a's (resp. b's) share of the extent.  A point of C lies outside a | b iff
    its x is in the gap, or its x is covered by a only and its y is not covered by a, or
    likewise for b, or its x is covered by both and its y lies in the gap: |C \ (a | b)| =
    only_a_x out_a_y + only_b_x out_b_y + both_x gap_y + gap_x H.

    A box's share ``len_a`` of the extent is ``length / ext`` in value, but its derivative is
    that of ``1 - out_a``, with ``out_a`` a sum of the two overhangs of C beyond a, each 0 or a
    difference of two coordinates as the spec's branch picks them (max picks a's coordinate,
    min b's, at a tie).  An overhang that is 0 is a constant, with no path to the coordinates
    at all; its textbook form ``a_lo - min(a_lo, b_lo)`` would be 0 as the sum of derivatives
    +1 and -1 reaching ``a_lo`` along two paths, which reverse mode adds to the other
    contributions to ``a_lo``'s gradient one at a time, so that a small one is lost beside
    the +-1/ext (seen: 8.5e-8 relative where b spans C in y).  ``length / ext`` itself is
    worse: its derivative ``1/ext - length/ext^2`` at an end that C shares rounds to a residual
    ``eps/ext`` where the box spans C.  (As a value ``1 - out_a`` would be poor: it loses the
    share of a box much smaller than C.)"""
    # a flat pair's results are replaced by the caller (its penalty is 0): any nonzero e serves
    # there; ext + [ext = 0] is 1 where ext is 0.  Selects as multiplications by 0 or 1 (the
    # differences are finite; torch.where costs ~5 multiplications on the CPU)
    e = ext + (ext == 0).to(ext.dtype)
    below, above = (a_lo >= b_lo).to(a_lo.dtype), (a_hi >= b_hi).to(a_lo.dtype)  # the spec's branches of min(a_lo, b_lo), max(a_hi, b_hi)
    over_a = (a_lo - b_lo) * below + (b_hi - a_hi) * (1 - above)  # a_lo - lo + hi - a_hi
    over_b = (b_lo - a_lo) * (1 - below) + (a_hi - b_hi) * above
    out = {
        "only_a": ((torch.minimum(a_hi, b_lo) - a_lo).clamp(min=0) + (a_hi - torch.maximum(a_lo, b_hi)).clamp(min=0)) / e,
        "only_b": ((torch.minimum(b_hi, a_lo) - b_lo).clamp(min=0) + (b_hi - torch.maximum(b_lo, a_hi)).clamp(min=0)) / e,
        "both": _pos(_lo(a_hi, b_hi) - _hi(a_lo, b_lo)) / e,
        "gap": (torch.maximum(a_lo, b_lo) - torch.minimum(a_hi, b_hi)).clamp(min=0) / e,
        "out_a": over_a / e,
        "out_b": over_b / e,
    }
    if not grad:  # the shares below serve the gradient only
        return out
    # value length / e, derivative that of 1 - out (value + (q - q) = value exactly)
    out["len_a"] = ((a_hi - a_lo) / e).detach() - (out["out_a"] - out["out_a"].detach())
    out["len_b"] = ((b_hi - b_lo) / e).detach() - (out["out_b"] - out["out_b"].detach())
    return out


def _terms(a, b, want):
    """The quantities in ``want`` ("iou", "giou", "rho2c2", "v") for broadcast boxes a, b.  Where
    they lie in :data:`_PLAIN`'s range (pixel coordinates, as a rule) the power-of-two scalings
    are skipped: exact there, they change no bit of the values and gradients (float32 and
    float64; ciou's angle in float64 excepted, where atan2 of scaled lengths may differ in the last
    bit).  At 100 000 pairs of float32 boxes that is 2-9x faster (box_iou's forward 7.1 -> 0.8 ms)."""
    plain = _plain(a, b)
    (ax1, ax2, bx1, bx2, ex), (ay1, ay2, by1, by2, ey) = _axes(a, b, plain)
    wa, ha, wb, hb = ax2 - ax1, ay2 - ay1, bx2 - bx1, by2 - by1
    iw = _lo(ax2, bx2) - _hi(ax1, bx1)
    ih = _lo(ay2, by2) - _hi(ay1, by1)
    W = _hi(ax2, bx2) - _lo(ax1, bx1)
    H = _hi(ay2, by2) - _lo(ay1, by1)
    one = torch.ones_like(W)
    out = {}
    # IoU = |a & b| / |a | b| with every area divided by 2^k, k the exponent of the larger of
    # |a|, |b|: then |a | b| / 2^k >= 1/4, and a product x y 2^-k is formed as (x 2^-k1)(y 2^-k2)
    # (k1 + k2 = k), which neither overflows nor underflows unless it is negligible; 0 where the
    # intersection is empty (also a 0/0 union)
    meet = (iw > 0) & (ih > 0)
    if plain:
        def area(x, y):
            return x * y
    else:
        with torch.no_grad():
            k = torch.maximum(_exponent(wa) + _exponent(ha), _exponent(wb) + _exponent(hb))
            k = torch.where(k < _LOW // 2, 0, k)
            k1 = torch.div(k, 2, rounding_mode="floor")

        def area(x, y):
            return _scaled(x, -k1) * _scaled(y, k1 - k)

    inter = area(_pos(iw), _pos(ih))
    union = area(wa, ha) + area(wb, hb) - inter
    iou = torch.where(meet, inter / torch.where(meet, union, one), torch.zeros_like(W))
    out["iou"] = iou
    if "giou" in want:
        # |C \ (a | b)| / |C| as a sum of nonnegative products (no cancellation; exactly 0 for
        # nested or edge-sharing boxes that fill C), each length divided by W or H; 0 where |C| = 0
        flat = (W == 0) | (H == 0)
        # the gradient form below changes no value: without a gradient to take it is left out
        grad = torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)
        px, py = _outside(ax1, ax2, bx1, bx2, W, flat, grad), _outside(ay1, ay2, by1, by2, H, flat, grad)
        penalty = px["only_a"] * py["out_a"] + px["only_b"] * py["out_b"] + px["both"] * py["gap"] + px["gap"]
        # its gradient is that of 1 - |a|/|C| - |b|/|C| + |a & b|/|C| (whose partial derivatives are
        # single terms like h_b/|C|; the sum's would cancel +-1/W terms): value + (q - q) = value exactly
        if grad:
            q = 1 - (px["len_a"] * py["len_a"] + px["len_b"] * py["len_b"] - px["both"] * py["both"])
            penalty = penalty.detach() + (q - q.detach())
        out["giou"] = iou - torch.where(flat, torch.zeros_like(W), penalty)
    if "rho2c2" in want:
        dx = ((ax1 - bx1) + (ax2 - bx2)) / 2
        dy = ((ay1 - by1) + (ay2 - by2)) / 2
        (Wc, dxc), (Hc, dyc) = _common([W, dx], ex, [H, dy], ey, plain)
        c2 = Wc * Wc + Hc * Hc
        point = c2 == 0
        out["rho2c2"] = torch.where(point, torch.zeros_like(c2), (dxc * dxc + dyc * dyc) / torch.where(point, one, c2))
    if "v" in want:
        out["v"] = (4 / math.pi ** 2) * (_angle(b, plain) - _angle(a, plain)) ** 2
    # NaN in, NaN out: the comparisons above (meet, flat, _lo/_hi) are False at a NaN coordinate
    # and would turn it into a plausible 0 (properties/nonfinite.py); plain boxes have no NaN
    if plain:
        return out
    nan = torch.isnan(a).any(-1) | torch.isnan(b).any(-1)
    return {key: torch.where(nan, torch.nan, v) for key, v in out.items()}


def _angle(box, plain=False):
    """atan2(w, h) of boxes in their own coordinates (scale free; a pair-wide scaling could make
    a small box's lengths subnormal), with (w, h) scaled by a power of two so that the larger
    lies in [0.5, 1) (no underflow of w^2 + h^2 in the derivative); lengths halved where a
    coordinate exceeds max/4 (x2 - x1 could overflow).  Where h = 0 the angle is the spec's
    constant, with a zero gradient: pi/2 for a flat box (w > 0), 0 for a point.  (atan2's
    derivative in h there, -1/w, overflows to inf for a subnormal w, while the spec's branch
    for a flat box is constant.)  Where ``plain`` (:data:`_PLAIN`) neither is needed."""
    if plain:
        w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
        flat = (h == 0).detach()
        const = torch.where(w > 0, math.pi / 2, 0.0).detach()
        one = torch.ones_like(w)
        return torch.where(flat, const, torch.atan2(torch.where(flat, one, w), torch.where(flat, one, h)))
    with torch.no_grad():
        big = box.abs().amax(-1) > torch.finfo(box.dtype).max / 4
    half = box * 0.5
    w = torch.where(big, half[..., 2] - half[..., 0], box[..., 2] - box[..., 0])
    h = torch.where(big, half[..., 3] - half[..., 1], box[..., 3] - box[..., 1])
    with torch.no_grad():  # max(w, h) into [0.5, 1): the derivative h/(w^2 + h^2) must not meet 0/0
        k = _exponent(torch.maximum(w, h))
        k = torch.where(k == _LOW, 0, k)
        # decided before scaling: a positive h that the scaling makes 0 (h << w) keeps atan2
        flat = h == 0
        const = torch.where(w > 0, torch.full_like(w, math.pi / 2), torch.zeros_like(w))
    w, h = _scaled(w, -k), _scaled(h, -k)
    one = torch.ones_like(w)
    return torch.where(flat, const, torch.atan2(torch.where(flat, one, w), torch.where(flat, one, h)))


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
    ``torch.no_grad``). The angles are ``atan2(w, h)`` of each box's lengths,
    scaled by a power of two of their own (pi/2 for a flat box, 0 for a
    point, both with a zero gradient); alpha = 0 where ``(1 - IoU) + v = 0``
    (``a = b``).
    Shapes, dtypes and errors as :func:`box_iou`.
    """
    a, b, out_dtype = _prepare(a, b)
    t = _terms(a, b, ("rho2c2", "v"))
    v = t["v"]
    with torch.no_grad():
        den = (1 - t["iou"]) + v
        alpha = torch.where(den > 0, v / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(den))
    return (t["iou"] - t["rho2c2"] - alpha * v).to(out_dtype)
