"""The IoU family for axis-aligned boxes in JAX (catalogue section 5, seed 001).

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

* ``a`` and ``b`` are floating arrays of shapes ``(..., 4)`` that broadcast
  against each other; the result has the broadcast batch shape. The
  functions are pure and work under ``jax.jit``, ``jax.vmap`` and
  ``jax.grad``. float16 and bfloat16 are computed in float32 and cast back:
  the output dtype is the promoted dtype of ``a`` and ``b`` (float64 needs
  ``jax_enable_x64``).
* Degenerate boxes (zero width or height) are outside the catalogue's domain;
  here they give finite values and finite gradients: IoU = 0 when the union
  has zero area, the GIoU penalty is 0 when ``|C| = 0``, the DIoU penalty is 0
  when ``c = 0``, the aspect angle is ``atan2(w, h)`` (pi/2 for a flat box, 0
  for a point, both constants with a zero gradient) and alpha = 0 where
  ``(1 - IoU) + v = 0`` (``a = b``). Every guarded quotient is a "double
  where": the unused branch is computed from a safe denominator too, so its
  (discarded) derivative is finite and no NaN reaches the gradient.
* At a tie (a coordinate of ``a`` equal to the same coordinate of ``b``),
  where the quantities are not differentiable, the gradient follows one
  branch: ``max`` picks ``a``'s coordinate and ``min`` picks ``b``'s, as
  the spec's branches do (``jnp.maximum`` would pass half the gradient to
  each side, and where the gradient overflows, near the smallest normal in
  half precision, the overflow of the mixture could take either sign); an
  overlap of length 0 keeps the derivative of a positive one (see
  :func:`relu`).
* Bad input raises ``ValueError`` naming the argument: not a floating array,
  last axis not of length 4, shapes that do not broadcast, or ``x2 < x1`` /
  ``y2 < y1`` in some box. The value check is done only on concrete arrays
  and skipped for tracers (under ``jax.jit``), where it would need a device
  synchronisation; shape and dtype checks are always done. XLA flushes
  subnormal numbers to zero on CPU and GPU.
* box_iou, giou and diou are reverse mode only (``jax.grad``, ``jax.vjp``,
  ``jax.jacrev`` and their compositions): they are ``jax.custom_vjp``
  functions, whose backward is the autodiff of the same formulas w.r.t. the
  eight coordinate columns (see :func:`_by_columns`); ``jax.jvp`` and
  ``jax.jacfwd`` raise on them. ciou is differentiated directly.

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
where ``h = 0``. Scale factors are constants (``jax.lax.stop_gradient``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["box_iou", "giou", "diou", "ciou"]

_LOW = -(1 << 20)  # the exponent of a zero length
_MAX_EXP = {jnp.dtype(jnp.float32): 127, jnp.dtype(jnp.float64): 1023}


def _check_boxes(x, name: str):
    if not isinstance(x, (jax.Array, np.ndarray, np.generic)):
        raise ValueError(f"{name} must be a jax or numpy array of boxes (..., 4), got {type(x).__name__}")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise ValueError(f"{name} must be a floating-point array, got dtype {x.dtype}")
    if x.ndim < 1 or x.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (..., 4) (x1, y1, x2, y2), got {tuple(x.shape)}")
    if not isinstance(x, jax.core.Tracer) and x.size:
        v = np.asarray(x)
        for k, axis in ((0, "x"), (1, "y")):
            if (v[..., k + 2] < v[..., k]).any():
                raise ValueError(f"{name} has boxes with {axis}2 < {axis}1 (boxes are (x1, y1, x2, y2), "
                                 f"x1 <= x2, y1 <= y2)")


def _prepare(a, b):
    _check_boxes(a, "a")
    _check_boxes(b, "b")
    out_dtype = jnp.promote_types(a.dtype, b.dtype)
    dtype = jnp.float32 if out_dtype in (jnp.float16, jnp.bfloat16) else out_dtype
    try:
        shape = jnp.broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise ValueError(f"b of shape {tuple(b.shape)} does not broadcast against a of shape {tuple(a.shape)}") from e
    a = jnp.broadcast_to(jnp.asarray(a, dtype), shape)
    b = jnp.broadcast_to(jnp.asarray(b, dtype), shape)
    return a, b, out_dtype


def _scaled(x, k):
    """x * 2**k, exact unless the result is subnormal (flushed); k may reach twice the
    largest exponent, as two factors (beyond that the result is 0 or, for |x| <= 2, irrelevant)."""
    top = _MAX_EXP[jnp.dtype(x.dtype)]
    k = jnp.clip(k, -2 * top, 2 * top)
    k1 = k // 2
    one = jnp.ones((), x.dtype)
    return x * jnp.ldexp(one, k1) * jnp.ldexp(one, k - k1)


def _exponent(x):
    """e with |x| = m 2^e, m in [0.5, 1); _LOW for x = 0 (a constant: no derivative)."""
    _, e = jnp.frexp(jax.lax.stop_gradient(x))
    return jnp.where(x != 0, e, _LOW)


def _axes(a, b):
    """Per axis: the coordinates of a and b scaled by 2^-E (largest |coordinate| in [0.5, 1)) and E."""
    out = []
    for k in (0, 1):
        m = jnp.maximum(jnp.abs(a[..., k::2]).max(-1), jnp.abs(b[..., k::2]).max(-1))
        e = _exponent(m)
        e = jnp.where(e == _LOW, 0, e)  # all coordinates 0: no scaling
        out.append((_scaled(a[..., k], -e), _scaled(a[..., k + 2], -e), _scaled(b[..., k], -e),
                    _scaled(b[..., k + 2], -e), e))
    return out


def _common(u, eu, v, ev):
    """Lists u (true values u * 2^eu) and v (v * 2^ev) rescaled by powers of two to one common
    scale, at which the larger of u[0], v[0] lies in [0.5, 1) (both 0: unchanged)."""
    ku = jnp.where(u[0] != 0, _exponent(u[0]) + eu, _LOW)
    kv = jnp.where(v[0] != 0, _exponent(v[0]) + ev, _LOW)
    k = jnp.maximum(ku, kv)
    k = jnp.where(k == _LOW, jnp.maximum(eu, ev), k)
    return [_scaled(t, eu - k) for t in u], [_scaled(t, ev - k) for t in v]


def _safe_div(num, den, ok):
    """num / den where ``ok``, else 0; the other branch divides by 1 (double where)."""
    return jnp.where(ok, num / jnp.where(ok, den, 1), 0)


def _hi(u, v):
    """max(u, v) for u a coordinate of a and v the same coordinate of b, picking u at a tie (the
    spec's branch: jnp.maximum would pass half the gradient to each, a mixture of the two
    one-sided derivatives, whose overflow to inf can then have either sign)."""
    return jnp.where(u >= v, u, v)


def _lo(u, v):
    """min(u, v) likewise, picking v (b's coordinate) at a tie, as the spec does."""
    return jnp.where(u >= v, v, u)


def relu(t):
    """max(t, 0) with derivative 1 at t = 0 (the one-sided derivative of a length that has
    just become 0: a subnormal width flushed to 0 by XLA keeps the gradient of a positive one;
    jnp.maximum would give 1/2 there)."""
    return jnp.where(t >= 0, t, 0)


def _outside(a_lo, a_hi, b_lo, b_hi, ext, full):
    r"""Lengths along one axis, divided by the enclosing extent ``ext`` (1 unless ``full``):
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
    e = jnp.where(full, ext, 1)
    below, above = a_lo >= b_lo, a_hi >= b_hi  # the spec's branches of min(a_lo, b_lo), max(a_hi, b_hi)
    over_a = jnp.where(below, a_lo - b_lo, 0) + jnp.where(above, 0, b_hi - a_hi)  # a_lo - lo + hi - a_hi
    over_b = jnp.where(below, 0, b_lo - a_lo) + jnp.where(above, a_hi - b_hi, 0)
    out = {
        "only_a": (relu(jnp.minimum(a_hi, b_lo) - a_lo) + relu(a_hi - jnp.maximum(a_lo, b_hi))) / e,
        "only_b": (relu(jnp.minimum(b_hi, a_lo) - b_lo) + relu(b_hi - jnp.maximum(b_lo, a_hi))) / e,
        "both": relu(_lo(a_hi, b_hi) - _hi(a_lo, b_lo)) / e,
        "gap": relu(jnp.maximum(a_lo, b_lo) - jnp.minimum(a_hi, b_hi)) / e,
        "out_a": over_a / e,
        "out_b": over_b / e,
    }
    # value length / e, derivative that of 1 - out (value + (q - q) = value exactly)
    sg = jax.lax.stop_gradient
    out["len_a"] = sg((a_hi - a_lo) / e) - (out["out_a"] - sg(out["out_a"]))
    out["len_b"] = sg((b_hi - b_lo) / e) - (out["out_b"] - sg(out["out_b"]))
    return out


def _terms(a, b, want):
    """The quantities in ``want`` ("giou", "rho2c2", "v"), and "iou", for broadcast boxes a, b."""
    (ax1, ax2, bx1, bx2, ex), (ay1, ay2, by1, by2, ey) = _axes(a, b)
    wa, ha, wb, hb = ax2 - ax1, ay2 - ay1, bx2 - bx1, by2 - by1
    iw = _lo(ax2, bx2) - _hi(ax1, bx1)
    ih = _lo(ay2, by2) - _hi(ay1, by1)
    W = _hi(ax2, bx2) - _lo(ax1, bx1)
    H = _hi(ay2, by2) - _lo(ay1, by1)
    # IoU = |a & b| / |a | b| with every area divided by 2^k, k the exponent of the larger of
    # |a|, |b|: then |a | b| / 2^k >= 1/4, and a product x y 2^-k is formed as (x 2^-k1)(y 2^-k2)
    # (k1 + k2 = k), which neither overflows nor underflows unless it is negligible; 0 where the
    # intersection is empty (also a 0/0 union)
    meet = (iw > 0) & (ih > 0)
    k = jnp.maximum(_exponent(wa) + _exponent(ha), _exponent(wb) + _exponent(hb))
    k = jnp.where(k < _LOW // 2, 0, k)
    k1 = k // 2

    def area(x, y):
        return _scaled(x, -k1) * _scaled(y, k1 - k)

    inter = area(jnp.maximum(iw, 0), jnp.maximum(ih, 0))
    union = area(wa, ha) + area(wb, hb) - inter
    out = {"iou": _safe_div(inter, union, meet)}
    if "giou" in want:
        # |C \ (a | b)| / |C| as a sum of nonnegative products (no cancellation; exactly 0 for
        # nested or edge-sharing boxes that fill C), each length divided by W or H; 0 where |C| = 0
        full = (W > 0) & (H > 0)
        px, py = _outside(ax1, ax2, bx1, bx2, W, full), _outside(ay1, ay2, by1, by2, H, full)
        penalty = px["only_a"] * py["out_a"] + px["only_b"] * py["out_b"] + px["both"] * py["gap"] + px["gap"]
        # its gradient is that of 1 - |a|/|C| - |b|/|C| + |a & b|/|C| (whose partial derivatives are
        # single terms like h_b/|C|; the sum's would cancel +-1/W terms): value + (q - q) = value exactly
        q = 1 - (px["len_a"] * py["len_a"] + px["len_b"] * py["len_b"] - px["both"] * py["both"])
        sg = jax.lax.stop_gradient
        penalty = sg(penalty) + (q - sg(q))
        out["giou"] = out["iou"] - jnp.where(full, penalty, 0)
    if "rho2c2" in want:
        dx = ((ax1 - bx1) + (ax2 - bx2)) / 2
        dy = ((ay1 - by1) + (ay2 - by2)) / 2
        (Wc, dxc), (Hc, dyc) = _common([W, dx], ex, [H, dy], ey)
        c2 = Wc * Wc + Hc * Hc
        out["rho2c2"] = _safe_div(dxc * dxc + dyc * dyc, c2, c2 > 0)
    if "v" in want:
        out["v"] = (4 / math.pi ** 2) * (_angle(b) - _angle(a)) ** 2
    # NaN in, NaN out: the comparisons above (meet, full, _lo/_hi) are False at a NaN coordinate
    # and would turn it into a plausible 0 (properties/nonfinite.py)
    nan = jnp.isnan(a).any(-1) | jnp.isnan(b).any(-1)
    return {key: jnp.where(nan, jnp.nan, v) for key, v in out.items()}


def _angle(box):
    """atan2(w, h) of boxes in their own coordinates (scale free; a pair-wide scaling could make
    a small box's lengths subnormal, which XLA flushes to 0), with (w, h) scaled by a power of
    two so that the larger lies in [0.5, 1) (no underflow of w^2 + h^2 in the derivative);
    lengths halved where a coordinate exceeds max/4 (x2 - x1 could overflow).  Where h = 0
    the angle is the spec's constant, with a zero gradient: pi/2 for a flat box (w > 0), 0 for
    a point.  (atan2's derivative in h there, -1/w, overflows for a subnormal w and nearly
    so for w near the smallest normal, while the spec's branch for a flat box is constant.)"""
    sg = jax.lax.stop_gradient
    big = sg(jnp.abs(box).max(-1)) > jnp.finfo(box.dtype).max / 4
    half = box * 0.5
    w = jnp.where(big, half[..., 2] - half[..., 0], box[..., 2] - box[..., 0])
    h = jnp.where(big, half[..., 3] - half[..., 1], box[..., 3] - box[..., 1])
    k = _exponent(jnp.maximum(w, h))  # max(w, h) into [0.5, 1): h/(w^2 + h^2) must not meet 0/0
    k = jnp.where(k == _LOW, 0, k)
    flat = sg(h) == 0  # decided before scaling: a positive h that the scaling makes 0 (h << w) keeps atan2
    const = jnp.where(sg(w) > 0, jnp.pi / 2, 0).astype(w.dtype)
    w, h = _scaled(w, -k), _scaled(h, -k)
    return jnp.where(flat, const, jnp.arctan2(jnp.where(flat, 1, w), jnp.where(flat, 1, h)))


def _by_columns(body):
    """``body(a, b)`` (broadcast boxes of one dtype) as a ``jax.custom_vjp`` whose backward is
    ``jax.vjp`` of ``body`` w.r.t. the eight coordinate columns, the column cotangents materialised
    (``lax.optimization_barrier``) before they are stacked into the (..., 4) gradients.

    Differentiated directly, ``a[..., k]`` transposes to a pad, and XLA fuses the whole backward
    into the pad that assembles the (..., 4) gradient, recomputing the per-pair work (the
    ``jnp.ldexp`` scalings are ``lax.pow`` calls) for each of the four entries: at 100 000 float32
    pairs box_iou's forward+backward took 88 ms for a 1.7 ms forward, 5.7 ms this way (diou
    12.9 -> 6.4 ms), on asv_benchmarks' boxes.  The gradient is the autodiff of the same formulas:
    bit for bit box_iou's and giou's, diou's up to XLA's order of summing a coordinate's
    contributions.  Not used for ciou: there it paid nothing on those boxes (24-27 ms against
    21-24 ms direct) and each program took 1.07 s to compile instead of 0.72 s, 9 s more for
    ciou's audit."""

    def columns(*c):
        return body(jnp.stack(c[:4], -1), jnp.stack(c[4:], -1))

    @jax.custom_vjp
    def f(a, b):
        return body(a, b)

    def fwd(a, b):
        # the pullback is a pytree of the residuals (jax.tree_util.Partial)
        return jax.vjp(columns, *(x[..., k] for x in (a, b) for k in range(4)))

    def bwd(pullback, g):
        d = jax.lax.optimization_barrier(pullback(g))
        return jnp.stack(d[:4], -1), jnp.stack(d[4:], -1)

    f.defvjp(fwd, bwd)
    return f


@_by_columns
def _iou(a, b):
    return _terms(a, b, ())["iou"]


@_by_columns
def _giou(a, b):
    return _terms(a, b, ("giou",))["giou"]


@_by_columns
def _diou(a, b):
    t = _terms(a, b, ("rho2c2",))
    return t["iou"] - t["rho2c2"]


def box_iou(a, b):
    """Intersection over union ``|a & b| / |a | b|`` of box pairs (catalogue 5).

    Args:
        a, b: floating arrays of boxes ``(x1, y1, x2, y2)``, shapes ``(..., 4)``
            that broadcast; float16, bfloat16, float32 or float64.

    Returns:
        Array of the broadcast batch shape and the promoted dtype; values in
        [0, 1], 1 at ``a = b``, 0 for disjoint (or touching) boxes, whose
        gradient is exactly 0 there. The loss is ``1 - box_iou``.

    Areas are formed after exact power-of-two scaling (see the module
    docstring); 0 where the intersection is empty, including degenerate pairs.

    Raises:
        ValueError: see the module docstring.
    """
    a, b, out_dtype = _prepare(a, b)
    return _iou(a, b).astype(out_dtype)


def giou(a, b):
    """Generalized IoU ``IoU - |C \\ (a | b)| / |C|`` (Rezatofighi et al., CVPR 2019).

    ``C`` is the smallest box enclosing ``a`` and ``b``. Values lie in
    (-1, 1]; GIoU = IoU when one box contains the other, and unlike IoU its
    gradient does not vanish for disjoint boxes. Shapes, dtypes and errors as
    :func:`box_iou`. The penalty is a sum of nonnegative products of length
    ratios in [0, 1] (see the module docstring): no overflow, underflow or
    cancellation; it is 0 where ``|C| = 0`` (a degenerate pair).
    """
    a, b, out_dtype = _prepare(a, b)
    return _giou(a, b).astype(out_dtype)


def diou(a, b):
    """Distance IoU ``IoU - rho^2 / c^2`` (Zheng et al., AAAI 2020).

    ``rho`` is the distance between the box centres, ``c`` the diagonal of the
    smallest enclosing box. Values lie in [-1, 1], DIoU <= IoU. Shapes, dtypes
    and errors as :func:`box_iou`. ``rho^2/c^2`` is formed after rescaling both
    axes to a common power-of-two scale (the larger of W, H in [0.5, 1)), with
    centre offsets as sums of coordinate differences; 0 where ``c = 0``.
    """
    a, b, out_dtype = _prepare(a, b)
    return _diou(a, b).astype(out_dtype)


def ciou(a, b):
    """Complete IoU ``DIoU - alpha v`` (Zheng et al., AAAI 2020).

    ``v = (4/pi^2)(atan(w_b/h_b) - atan(w_a/h_a))^2`` measures the difference
    of aspect ratios and ``alpha = v / ((1 - IoU) + v)`` weighs it; as in the
    paper, alpha is a constant in the gradient (``jax.lax.stop_gradient``).
    The angles are ``atan2(w, h)`` of each box's lengths, scaled by a power
    of two of their own (pi/2 for a flat box, 0 for a point, both with a zero
    gradient); alpha = 0 where ``(1 - IoU) + v = 0`` (``a = b``). Shapes,
    dtypes and errors as :func:`box_iou`.
    """
    a, b, out_dtype = _prepare(a, b)
    t = _terms(a, b, ("rho2c2", "v"))
    v = t["v"]
    den = (1 - t["iou"]) + v
    alpha = jax.lax.stop_gradient(_safe_div(v, den, den > 0))
    return (t["iou"] - t["rho2c2"] - alpha * v).astype(out_dtype)
