"""Overlap measures in JAX (catalogue section 4, seed 001): soft F1, Dice,
Jaccard.

With ``I = sum p*t``, ``P = sum p``, ``T = sum t``:

    soft_f1(p, t, eps)      = 2 I / (P + T + eps)          per column over axis 0
    dice(p, t, smooth)      = (2 I + smooth) / (P + T + smooth)      over all elements
    dice(..., squared=True) = (2 I + smooth) / (sum p^2 + sum t^2 + smooth)   (V-Net)
    jaccard(p, t, smooth)   = (I + smooth) / (P + T - I + smooth)    over all elements

References: seed 001 ("optimizing directly for the metric", soft F1 and
Dice loss); Milletari, Navab & Ahmadi, "V-Net: Fully Convolutional Neural
Networks for Volumetric Medical Image Segmentation", 3DV 2016 (squared Dice).
The loss a user minimises is ``1 - value``.

Conventions shared by every function here:

* ``probs`` (floating, in [0, 1]) and ``targets`` (in [0, 1]; any real or
  bool dtype) have the same shape.  ``dice`` and ``jaccard`` reduce over ALL
  elements and return a 0-d array; ``soft_f1`` reduces over axis 0 and
  returns ``probs.shape[1:]``.  Pure; works under ``jax.jit`` (``squared``
  static), ``jax.vmap`` and ``jax.grad``.
* Empty sets: where the denominator is 0 (all zeros and smooth = 0, or an
  all-zero column with eps = 0) the value is 1 and the gradient 0, never
  NaN.  ``jnp.where`` differentiates both branches and multiplies the
  unselected one by 0, so a ``num / den`` branch at den = 0 would give
  0 * inf = NaN: the division uses a denominator replaced by 1 there.
* float16 and bfloat16 are computed in float32 and cast back: the output
  dtype is the dtype of ``probs`` (float64 needs ``jax_enable_x64``).
* Numerical notes: every sum is of nonnegative terms and
  ``P + T - I >= (P + T) / 2``, so no value cancels.  The gradients of
  soft_f1, dice and jaccard would (autodiff's ``2 t_k / D - 2 I / D^2``
  cancels ``t_k p_k`` against itself where ``p_k`` dominates its column;
  dice's and jaccard's alike): they are computed in closed form, a dominant
  entry's from sums that leave it out (``_overlap_partial``).  Squared dice
  has no such term: autodiff.  XLA flushes subnormal numbers to
  zero on CPU and GPU: inputs whose only mass is subnormal count as empty there.
* Tiny inputs: each column is scaled by a power of two (exact) so that the
  products p·t do not underflow where the value does not (``_column_scale``).
* Bad input raises ``ValueError`` naming the argument.  Shapes, dtypes and
  ``squared`` are always checked; the ranges of ``probs``/``targets`` and of
  ``smooth``/``eps`` only for concrete values (skipped for tracers under
  ``jax.jit``, where they would need a device synchronisation).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from ._jax_checks import is_concrete

__all__ = ["soft_f1", "dice", "jaccard"]


def _check_pair(probs, targets, min_ndim: int = 0):
    """(probs, targets) in the compute dtype, and the output dtype."""
    if not isinstance(probs, (jax.Array, np.ndarray, np.generic)):
        raise ValueError(f"probs must be a jax or numpy array, got {type(probs).__name__}")
    if not jnp.issubdtype(probs.dtype, jnp.floating):
        raise ValueError(f"probs must be a floating-point array, got dtype {probs.dtype}")
    if not isinstance(targets, (jax.Array, np.ndarray, np.generic)):
        raise ValueError(f"targets must be a jax or numpy array, got {type(targets).__name__}")
    if jnp.issubdtype(targets.dtype, jnp.complexfloating):
        raise ValueError("targets must be real")
    if probs.shape != targets.shape:
        raise ValueError(f"targets shape {tuple(targets.shape)} does not match probs shape {tuple(probs.shape)}")
    if probs.ndim < min_ndim:
        raise ValueError(f"probs must have at least {min_ndim} dimension(s) (axis 0 is reduced)")
    for name, x in (("probs", probs), ("targets", targets)):
        if is_concrete(x) and x.size and bool(jnp.any((x < 0) | (x > 1) | jnp.isnan(x))):
            raise ValueError(f"{name} must lie in [0, 1]")
    out_dtype = jnp.asarray(probs).dtype
    ct = jnp.float32 if out_dtype in (jnp.float16, jnp.bfloat16) else out_dtype
    return jnp.asarray(probs, ct), jnp.asarray(targets).astype(ct), out_dtype


def _check_nonnegative(v, name: str):
    if isinstance(v, bool):
        raise ValueError(f"{name} must be a real number >= 0, got {v!r}")
    if is_concrete(v):
        a = np.asarray(v)
        if a.size != 1 or not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
            raise ValueError(f"{name} must be a real scalar, got {v!r}")
        f = float(a.reshape(()))
        if not (0 <= f < np.inf):
            raise ValueError(f"{name} must be a finite number >= 0, got {f!r}")
    return v


def _ratio(num, den):
    """num / den, and 1 where den == 0 (empty sets); both branches finite (no NaN gradient)."""
    empty = den == 0
    return jnp.where(empty, jnp.ones_like(num), num / jnp.where(empty, jnp.ones_like(den), den))


def _overlap_partial(x, y, c_den, w, c_num, scale=None):
    """``(w (y_k D - I) - c_num) / S^2`` per column over axis 0, with ``I = sum x y``,
    ``D = sum x + sum y + c_den`` and ``S`` = ``scale`` (default ``D``); 0 where ``S`` = 0 (empty
    sets: ``x = y = 0``).  The derivative d/dx_k of every measure here has this form:

        soft_f1  2 I / D              w = 2, c_den = eps, c_num = 0,      S = D
        dice     (2 I + s) / D        w = 2, c_den = s,   c_num = s,      S = D
        jaccard  (I + s) / E          w = 1, c_den = 2 s, c_num = s,      S = E = P + T - I + s
                 (d/dx_k = (y_k E - (I + s)(1 - y_k)) / E^2 = (y_k (P + T + 2 s) - I - s) / E^2)

    Autodiff's ``w y_k / D - (w I + c_num) / D^2`` (jaccard's alike) rounds ``D`` and ``I``
    before subtracting, an error of ``eps * y_k * D``; the derivative's own sensitivity to its
    inputs is at least ``y_k (D - x_k)``, so that is accurate except where ``x_k`` carries most
    of ``D``: there the ``y_k x_k`` in ``y_k D`` and in ``I`` cancel exactly (p = [0, 1],
    t = [0, 1.19e-7]: soft_f1's and dice's 2 t^2 / D^2 = 2.8e-14 came out 1e5 ULPs off,
    jaccard's t^2 / E^2 9e5).  An entry above ``h D`` (h = 1/2 + n eps, at most 3/4, for the
    n terms of D) is the only one of its column (the computed D is at least ``(1 - n eps) D``);
    its numerator is taken as ``w (y_m (D - x_m) - (I - x_m y_m)) - c_num``, with both
    differences summed directly with entry m left out (no subtraction).  The others keep the
    plain form, within a factor ``1 / (1 - h) <= 4`` of their sensitivity.  The terms are
    divided by S before subtracting (``D <= 2 S``, ``w I + c_num <= w S``) and the difference by
    S after it, so nothing overflows or underflows that the derivative does not.
    """
    h = min(0.5 + (x.shape[0] + 2) * float(jnp.finfo(x.dtype).eps), 0.75)
    sum_y, xy = jnp.sum(y, axis=0), x * y
    den = jnp.sum(x, axis=0) + sum_y + c_den
    s = den if scale is None else scale
    s = jnp.where(s == 0, jnp.ones_like(s), s)  # empty: x = y = 0 and c_num = 0, so the result is 0
    top = x > den * h
    den_rest = jnp.sum(jnp.where(top, 0, x), axis=0) + sum_y + c_den  # D - x_m
    inter_rest = jnp.sum(jnp.where(top, 0, xy), axis=0)  # I - x_m y_m
    a = jnp.where(top, den_rest / s, den / s)
    b = (jnp.where(top, inter_rest, jnp.sum(xy, axis=0)) * w + c_num) / s
    return (y * a * w - b) / s


def _column_scale(p, t, c):
    """``(p·2^k, t·2^k, 2^-k, 2^k)`` per column (axis 0): ``2^k`` brings the column's largest entry
    to [1/2, 1) where it is smaller, so that the products ``p·t`` of a column of tiny entries do
    not underflow (p = t = 2e-225: I = Σ p t is 0 in float64, the value 2.2e-225).  Powers of two
    scale exactly.  ``k`` is at most ``maxexp − 8`` (``2^-k`` stays normal) and, for ``c > 0``, small
    enough that ``c·2^(2k)`` is finite; where that binds, the column's products are below ``c``'s
    precision anyway.  The measures are rewritten in the scaled sums (I' = 2^(2k) I, P' = 2^k P):
    e.g. ``(2 I + c) / (P + T + c) = (2 I' 2^-k + c 2^k) / (P' + T' + c 2^k)``.  The scale is a
    constant (no derivative flows through it)."""
    maxexp = int(jnp.finfo(p.dtype).maxexp)  # 128, 1024: max < 2^maxexp
    if p.shape[0] == 0:
        one = jnp.ones(p.shape[1:], p.dtype)
        return p, t, one, one
    m = jax.lax.stop_gradient(jnp.maximum(jnp.max(p, axis=0), jnp.max(t, axis=0)))
    cap = jnp.where(c > 0, (maxexp - 8 - jnp.frexp(jax.lax.stop_gradient(c))[1]) // 2, maxexp - 8)
    k = jnp.clip(-jnp.frexp(m)[1], 0, jnp.maximum(cap, 0))  # frexp: m = f 2^e, f in [1/2, 1)
    scale = jnp.ldexp(jnp.ones_like(m), k)
    return p * scale, t * scale, 1 / scale, scale


def _overlap_value(p, t, c, kind):
    """soft_f1 (``c`` = eps), dice or jaccard (``c`` = smooth) per column over axis 0, from the
    scaled sums of :func:`_column_scale`."""
    p, t, u, scale = _column_scale(p, t, c)
    inter = jnp.sum(p * t, axis=0) * u  # 2^k I
    size = jnp.sum(p, axis=0) + jnp.sum(t, axis=0)
    cs = c * scale
    if kind == "soft_f1":
        return _ratio(2 * inter, size + cs)
    if kind == "dice":
        return _ratio(2 * inter + cs, size + cs)
    return _ratio(inter + cs, size - inter + cs)  # jaccard: P + T - I >= (P + T)/2, no cancellation


def _overlap_grad(x, y, c, kind):
    """d/dx of :func:`_overlap_value` (``x`` is ``p`` or ``t``, ``y`` the other: every measure
    here is symmetric in them), through :func:`_overlap_partial` on the scaled columns of
    :func:`_column_scale`: with ``x' = 2^k x`` (and y', D' = 2^k D, S' = 2^k S, I' = 2^(2k) I)
    the form ``(w (y_k D − I) − c_num) / S^2`` is ``(w (y'_k D' − I') − c_num 2^(2k)) / S'^2``."""
    x, y, u, scale = _column_scale(x, y, c)
    cs = c * scale
    if kind == "soft_f1":
        return _overlap_partial(x, y, cs, 2, 0)
    if kind == "dice":
        return _overlap_partial(x, y, cs, 2, cs * scale)
    inter = jnp.sum(x * y, axis=0) * u
    return _overlap_partial(x, y, 2 * cs, 1, cs * scale, scale=jnp.sum(x, axis=0) + jnp.sum(y, axis=0) - inter + cs)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _overlap(p, t, c, kind):
    """:func:`_overlap_value`, differentiated by :func:`_overlap_grad` (a jvp rule: forward
    and reverse mode, any order); ``kind`` is static."""
    return _overlap_value(p, t, c, kind)


def _overlap_jvp(kind, primals, tangents):
    (p, t, c), (dp, dt, dc) = primals, tangents
    value = _overlap(p, t, c, kind)
    out = jnp.zeros_like(value)
    if not isinstance(dp, SymbolicZero):
        out = out + jnp.sum(_overlap_grad(p, t, c, kind) * dp, axis=0)
    if not isinstance(dt, SymbolicZero):
        out = out + jnp.sum(_overlap_grad(t, p, c, kind) * dt, axis=0)
    if not isinstance(dc, SymbolicZero):
        # soft_f1: d/deps = -2 I / D^2; dice, jaccard: d/ds = (P + T - 2 I) / S^2 (S = D, E) with
        # P + T - 2 I = sum p (1 - t) + t (1 - p) (no cancellation); 0 where empty.  On the scaled
        # columns (S' = 2^k S): -2 I' / D'^2 and 2^k (P' + T' - 2 I' 2^-k) / S'^2
        ps, ts, u, scale = _column_scale(p, t, c)
        inter = jnp.sum(ps * ts, axis=0) * u
        size = jnp.sum(ps, axis=0) + jnp.sum(ts, axis=0)
        cs = c * scale
        den = size - inter + cs if kind == "jaccard" else size + cs
        empty = den == 0
        d = jnp.where(empty, jnp.ones_like(den), den)
        if kind == "soft_f1":
            num, back = -2 * inter, 1
        else:
            num, back = jnp.sum(ps * (1 - t) + ts * (1 - p), axis=0), scale
        # the barrier keeps XLA from folding (num / D) / D into num / D^2, which can overflow
        q = jax.lax.optimization_barrier(num / d)
        out = out + jnp.where(empty, 0, q / d * back) * dc
    return value, out


_overlap.defjvp(_overlap_jvp, symbolic_zeros=True)


def soft_f1(probs, targets, eps=0.0):
    """Soft F1 per column: ``2 sum_i p_i t_i / (sum_i p_i + sum_i t_i + eps)`` over axis 0.

    Args:
        probs: (N, ...) predicted probabilities in [0, 1]; differentiable.
        targets: (N, ...) targets in [0, 1], same shape.
        eps: constant >= 0 added to the denominator only (seed 001 uses 1e-6).
    Returns:
        ``probs.shape[1:]``, dtype of ``probs``; seed 001's
        ``2 tp / (2 tp + fn + fp + eps)``.  A column with no mass scores 1
        when ``eps`` = 0 and 0 when ``eps`` > 0, with a zero gradient.

    The gradient is computed in closed form (see :func:`_overlap_partial`):
    autodiff's ``2 t_k / D - 2 I / D^2`` cancels catastrophically when one entry
    carries most of a column.
    """
    p, t, out_dtype = _check_pair(probs, targets, min_ndim=1)
    eps = _check_nonnegative(eps, "eps")
    return _overlap(p, t, jnp.asarray(eps, p.dtype), "soft_f1").astype(out_dtype)


def dice(probs, targets, smooth=0.0, squared=False):
    """Soft Dice over all elements: ``(2 sum p t + smooth) / (sum p + sum t + smooth)``.

    Args:
        probs: predicted probabilities in [0, 1], any shape; differentiable.
        targets: targets in [0, 1], same shape (binary masks or soft).
        smooth: constant >= 0 added to numerator and denominator.
        squared: (Python bool, static under jit) use ``sum p^2 + sum t^2``
            in the denominator (V-Net).
    Returns:
        A 0-d array of the dtype of ``probs``, in [0, 1]; 1 for two empty
        sets (all zeros, smooth = 0).  For binary targets ``1 - dice`` is 0
        only at ``probs == targets``; for soft targets only the squared form is.
    """
    p, t, out_dtype = _check_pair(probs, targets)
    smooth = jnp.asarray(_check_nonnegative(smooth, "smooth"), p.dtype)
    if not isinstance(squared, (bool, np.bool_)):
        raise ValueError(f"squared must be a bool, got {squared!r}")
    if not squared:  # closed-form gradient, as soft_f1's (the same formula with smooth in the numerator)
        return _overlap(p.reshape(-1), t.reshape(-1), smooth, "dice").astype(out_dtype)
    # squared: autodiff's d/dp_k = 2 (t_k Q - p_k (2 I + smooth)) / Q^2 has no self-cancelling term:
    # t_k p_k^2 in t_k Q meets 2 p_k^2 t_k, not itself, so its rounding stays within about 3x of the
    # derivative's own sensitivity (t_k R, t_k^3, t_k p_k^2, p_k (2 J + smooth) with R, J the sums
    # without entry k).  Where it cancels (p_k = t_k = 1: t_k (t_k^2 - p_k^2)) the derivative itself
    # is that ill-conditioned.
    # Both sums are of degree 2: scaled by 2^k (a constant, see _column_scale) they are 2^(2k) times the
    # true ones, and smooth with them; tiny inputs no longer underflow to the empty branch's 1.
    p, t, _, scale = _column_scale(p.reshape(-1), t.reshape(-1), smooth)
    inter, cs = jnp.sum(p * t), smooth * scale * scale
    return _ratio(2 * inter + cs, jnp.sum(p * p) + jnp.sum(t * t) + cs).astype(out_dtype)


def jaccard(probs, targets, smooth=0.0):
    """Soft Jaccard index (IoU) over all elements: ``(I + smooth) / (P + T - I + smooth)``.

    Args:
        probs: predicted probabilities in [0, 1], any shape; differentiable.
        targets: targets in [0, 1], same shape.
        smooth: constant >= 0 added to numerator and denominator.
    Returns:
        A 0-d array of the dtype of ``probs``, in [0, 1]; 1 for two empty sets.
        At smooth = 0, ``dice = 2 J / (1 + J)`` for any soft inputs.
    """
    p, t, out_dtype = _check_pair(probs, targets)
    smooth = jnp.asarray(_check_nonnegative(smooth, "smooth"), p.dtype)
    return _overlap(p.reshape(-1), t.reshape(-1), smooth, "jaccard").astype(out_dtype)
