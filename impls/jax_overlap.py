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
  ``P + T - I >= (P + T) / 2``, so no value cancels.  soft_f1's gradient
  ``2 (t_k D - I) / D^2`` would (autodiff's ``2 t_k / D - 2 I / D^2``
  cancels ``t_k p_k`` against itself where ``p_k`` dominates its column):
  that entry's is computed from sums that leave it out
  (``_soft_f1_partial``).  XLA flushes subnormal numbers to zero on CPU and
  GPU: inputs whose only mass is subnormal count as empty there.
* Bad input raises ``ValueError`` naming the argument.  Shapes, dtypes and
  ``squared`` are always checked; the ranges of ``probs``/``targets`` and of
  ``smooth``/``eps`` only for concrete values (skipped for tracers under
  ``jax.jit``, where they would need a device synchronisation).
"""

from __future__ import annotations

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


def _soft_f1_partial(x, y, eps):
    """d/dx of ``2 I / D`` (``I = sum x y``, ``D = sum x + sum y + eps`` per column over
    axis 0): ``2 (y_k D - I) / D^2``, 0 in empty columns (``x`` is ``p`` or ``t``, ``y`` the other).

    Autodiff's ``2 y_k / D - 2 I / D^2`` rounds ``D`` and ``I`` before subtracting, an error
    of ``eps * y_k * D``; the derivative's own sensitivity to its inputs is at least
    ``y_k (D - x_k)``, so that is accurate except where ``x_k`` carries most of ``D``: there
    the ``y_k x_k`` in ``y_k D`` and in ``I`` cancel exactly (p = [0, 1], t = [0, 1.19e-7]:
    2 t^2 / D^2 = 2.8e-14 came out 1e5 ULPs off).  An entry above ``h D`` (h = 1/2 + n eps,
    at most 3/4, for the n terms of D) is the only one of its column (the computed D is at
    least ``(1 - n eps) D``); its derivative is taken as
    ``2 (y_m (D - x_m) - (I - x_m y_m)) / D^2``, with both differences summed directly with
    entry m left out (no subtraction).  The others keep the plain form, within a factor
    ``1 / (1 - h) <= 4`` of their sensitivity.  The terms are divided by D before
    subtracting and the difference (at most 1 in magnitude) by D after it, so nothing
    overflows or underflows that the derivative does not.
    """
    h = min(0.5 + (x.shape[0] + 2) * float(jnp.finfo(x.dtype).eps), 0.75)
    sum_y, xy = jnp.sum(y, axis=0), x * y
    den = jnp.sum(x, axis=0) + sum_y + eps
    d = jnp.where(den == 0, jnp.ones_like(den), den)  # empty columns: x = y = 0, so the result is 0
    top = x > den * h
    den_rest = jnp.sum(jnp.where(top, 0, x), axis=0) + sum_y + eps  # D - x_m
    inter_rest = jnp.sum(jnp.where(top, 0, xy), axis=0)  # I - x_m y_m
    a = jnp.where(top, den_rest / d, 1)
    b = jnp.where(top, inter_rest / d, jnp.sum(xy, axis=0) / d)
    return (y * a - b) / d * 2


@jax.custom_jvp
def _soft_f1(p, t, eps):
    """``2 sum p t / (sum p + sum t + eps)`` per column over axis 0, differentiated by
    :func:`_soft_f1_partial` (a jvp rule: forward and reverse mode, any order)."""
    inter = jnp.sum(p * t, axis=0)
    den = jnp.sum(p, axis=0) + jnp.sum(t, axis=0) + eps
    return _ratio(2 * inter, den)


def _soft_f1_jvp(primals, tangents):
    (p, t, eps), (dp, dt, deps) = primals, tangents
    value = _soft_f1(p, t, eps)
    out = jnp.zeros_like(value)
    if not isinstance(dp, SymbolicZero):
        out = out + jnp.sum(_soft_f1_partial(p, t, eps) * dp, axis=0)
    if not isinstance(dt, SymbolicZero):
        out = out + jnp.sum(_soft_f1_partial(t, p, eps) * dt, axis=0)
    if not isinstance(deps, SymbolicZero):  # d/deps = -2 I / D^2 (0 where empty)
        den = jnp.sum(p, axis=0) + jnp.sum(t, axis=0) + eps
        empty = den == 0
        d = jnp.where(empty, jnp.ones_like(den), den)
        # the barrier keeps XLA from folding (I / D) / D into I / D^2, which can overflow
        q = jax.lax.optimization_barrier(jnp.sum(p * t, axis=0) / d)
        out = out + jnp.where(empty, 0, -(q / d * 2)) * deps
    return value, out


_soft_f1.defjvp(_soft_f1_jvp, symbolic_zeros=True)


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

    The gradient is computed in closed form (see :func:`_soft_f1_partial`):
    autodiff's ``2 t_k / D - 2 I / D^2`` cancels catastrophically when one entry
    carries most of a column.
    """
    p, t, out_dtype = _check_pair(probs, targets, min_ndim=1)
    eps = _check_nonnegative(eps, "eps")
    return _soft_f1(p, t, jnp.asarray(eps, p.dtype)).astype(out_dtype)


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
    inter = jnp.sum(p * t)
    size = jnp.sum(p * p) + jnp.sum(t * t) if squared else jnp.sum(p) + jnp.sum(t)
    return _ratio(2 * inter + smooth, size + smooth).astype(out_dtype)


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
    inter = jnp.sum(p * t)
    union = jnp.sum(p) + jnp.sum(t) - inter  # >= (P + T)/2: no cancellation
    return _ratio(inter + smooth, union + smooth).astype(out_dtype)
