"""Ranking: AUC and its sigmoid relaxation, in JAX (catalogue section 6, seed 001).

Seed 001 ("optimizing directly for the metric") proposes optimising the AUC
directly through a smooth surrogate. The AUC is the Wilcoxon-Mann-Whitney
statistic: the probability that a positive outscores a negative, ties
counting one half; ``soft_auc`` replaces the step by a sigmoid of the score
difference at temperature ``tau``.

Conventions shared by both functions:

* ``scores`` is a floating array (``jax.Array`` or numpy array) of shape
  ``(..., n)``; the LAST axis holds the elements of one ranking problem,
  leading axes are batch axes. The result has the batch shape
  ``scores.shape[:-1]`` and the dtype of ``scores``.
* ``labels`` has the shape of ``scores``, integer, bool or floating, with
  values in {0, 1} (1 = positive). Every row needs at least one positive
  and one negative.
* Both functions work under ``jax.jit`` (and ``soft_auc`` under
  ``jax.grad`` and ``jax.vmap``). Value checks (labels in {0, 1}, a
  positive and a negative in each row, ``tau`` > 0) are made only on
  concrete arguments and skipped for traced ones; an unchecked row without
  a positive or without a negative gives NaN (0 / 0).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ._jax_checks import floating, is_concrete, positive_scalar

__all__ = ["auc", "soft_auc"]


def _check_labels(labels, shape: tuple):
    """Validate ``labels`` (values only when concrete); return the positive mask (bool)."""
    if not isinstance(labels, (jax.Array, np.ndarray)):
        raise ValueError(f"labels must be a jax or numpy array, got {type(labels).__name__}")
    if not (jnp.issubdtype(labels.dtype, jnp.integer) or jnp.issubdtype(labels.dtype, jnp.floating)
            or labels.dtype == jnp.bool_):
        raise ValueError(f"labels must be integer, bool or floating (0 or 1), got dtype {labels.dtype}")
    if tuple(labels.shape) != tuple(shape):
        raise ValueError(f"labels must have the shape of scores {tuple(shape)}, got {tuple(labels.shape)}")
    if math.prod(shape[:-1]) > 0 and shape[-1] < 2:
        raise ValueError("labels: every row (last axis) needs at least one positive and one negative")
    if is_concrete(labels) and labels.size > 0:
        values = np.asarray(labels)
        if values.dtype != np.bool_ and not bool(np.all((values == 0) | (values == 1))):
            raise ValueError("labels must be 0 or 1 (or bool)")
        n_pos = np.sum(values == 1, axis=-1)
        if bool(np.any(n_pos == 0)) or bool(np.any(n_pos == shape[-1])):
            raise ValueError("labels: every row (last axis) needs at least one positive and one negative")
    labels = jnp.asarray(labels)
    return labels if labels.dtype == jnp.bool_ else labels == 1


def auc(scores, labels):
    """Area under the ROC curve (Wilcoxon-Mann-Whitney) over the last axis.

    Catalogue section 6; seed 001 ("optimizing directly for the metric")::

        auc = (1 / (P N)) sum_{i positive} sum_{j negative}
                  ( 1[s_i > s_j] + 1/2 1[s_i = s_j] )

    with ``P`` positives and ``N`` negatives in the row. Invariant under any
    strictly increasing map of the scores; ``soft_auc`` tends to it as
    ``tau -> 0+``.

    Args:
        scores: floating array of shape ``(..., n)`` (float16, bfloat16,
            float32 or float64).
        labels: array of the shape of ``scores``, integer, bool or floating,
            values in {0, 1}; every row needs a positive and a negative
            (both checked only when ``labels`` is concrete).

    Returns:
        Array of shape ``scores.shape[:-1]`` and dtype ``scores.dtype``. Its
        derivative is zero (the AUC is piecewise constant; it goes through
        ``stop_gradient``). Works under ``jax.jit``.

    Algorithm, O(n log n) per row: sort the row (in the input dtype, so that
    ties are exactly the scores that compare equal as given), give each
    element its midrank (the average of the 1-based positions of its tie
    group, found with a forward ``cummax`` of group starts and a backward
    ``cummin`` of group ends), and use ``U = R - P (P + 1) / 2``, ``R`` the
    sum of the positives' midranks: ``auc = U / (P N)``.

    Exactness: twice the midranks are integers, so ``2 U = 2 R - P (P + 1)``
    and ``2 P N`` are counted exactly in integers, whatever the score dtype
    (float16 included). With ``jax_enable_x64`` they are int64 and the one
    float64 division gives the correctly rounded value (while
    ``2 P N < 2^53``), which is cast to the dtype of ``scores``. Without
    x64 they are int32, which is exact for ``n <= 46340`` (longer rows raise
    ``ValueError``), and the division is in float32 (at most 1.5 ulp of
    float32, the output dtype then being at most float32 anyway).

    Raises:
        ValueError: ``scores`` not a floating array or 0-d, or (without x64)
            rows longer than 46340; ``labels`` of another shape or dtype,
            or (when concrete) not in {0, 1} or with a row lacking a
            positive or a negative.
    """
    scores, _ = floating(scores, "scores", axis="element", nonempty=False)
    positive = _check_labels(labels, scores.shape)
    int_dtype = jax.dtypes.canonicalize_dtype(jnp.int64)
    float_dtype = jax.dtypes.canonicalize_dtype(jnp.float64)
    n = scores.shape[-1]
    if int_dtype == jnp.int32 and n > 46340:
        raise ValueError(f"scores: rows longer than 46340 need jax_enable_x64 for exact counts, got {n}")
    return _auc(jax.lax.stop_gradient(scores), positive, int_dtype, float_dtype)


@jax.jit
def _auc_counts(scores, positive):
    n = scores.shape[-1]
    values, pos = jax.lax.sort_key_val(scores, positive, dimension=scores.ndim - 1)
    index = jnp.arange(n)
    new = values[..., 1:] != values[..., :-1]  # a tie group ends between i and i + 1
    edge = jnp.ones(values.shape[:-1] + (1,), dtype=bool)
    first = jax.lax.cummax(jnp.where(jnp.concatenate([edge, new], axis=-1), index, 0), axis=values.ndim - 1)
    last = jax.lax.cummin(jnp.where(jnp.concatenate([new, edge], axis=-1), index, n - 1), axis=values.ndim - 1,
                          reverse=True)
    twice_rank = first + last + 2  # 2 x (1-based midrank)
    n_pos = jnp.sum(pos, axis=-1, dtype=index.dtype)
    twice_u = jnp.sum(jnp.where(pos, twice_rank, 0), axis=-1) - n_pos * (n_pos + 1)
    return twice_u, 2 * n_pos * (n - n_pos)


def _order_keys(scores):
    """Integer keys that order like ``scores`` and tie exactly where the scores
    are equal, read from their bits.  XLA on the CPU flushes subnormals to zero
    (FTZ/DAZ), so comparing the floats themselves would tie a subnormal score
    with 0 (found by losscheck: scores [0, 3.3e-43] gave 0.5, not 0).  Both
    zeros map to 0; NaN is outside the domain."""
    bits = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}[scores.dtype.itemsize]
    i = jax.lax.bitcast_convert_type(scores, bits)
    magnitude = i & jnp.array(jnp.iinfo(bits).max, dtype=bits)
    return jnp.where(i < 0, -magnitude, magnitude)


def _auc(scores, positive, int_dtype, float_dtype):
    twice_u, twice_pn = _auc_counts(_order_keys(scores), positive)
    value = twice_u.astype(int_dtype).astype(float_dtype) / twice_pn.astype(int_dtype).astype(float_dtype)
    # NaN in, NaN out: a NaN score has order keys like any number's
    value = jnp.where(jnp.isnan(scores).any(-1), jnp.nan, value)
    return value.astype(scores.dtype)


def soft_auc(scores, labels, tau=1.0):
    """Sigmoid relaxation of the AUC at temperature ``tau``, over the last axis.

    Catalogue section 6; seed 001 ("optimizing directly for the metric")::

        soft_auc = (1 / (P N)) sum_{i positive} sum_{j negative} sigmoid((s_i - s_j) / tau)

    Claims: ``soft_auc -> auc`` as ``tau -> 0+`` (ties give sigmoid(0) = 1/2,
    exactly the AUC's half); ``soft_auc(s, l) + soft_auc(s, 1 - l) = 1``
    (the swapped pairs have exactly negated arguments).

    Args:
        scores: floating array of shape ``(..., n)`` (float16, bfloat16,
            float32 or float64); float16 and bfloat16 are computed in float32
            and the result cast back.
        labels: array of the shape of ``scores``, integer, bool or floating,
            values in {0, 1}; every row needs a positive and a negative
            (checked only when ``labels`` is concrete).
        tau: temperature, ``> 0`` and finite: a Python number or a 0-d
            array; validated only when concrete (not under a trace).

    Returns:
        Array of shape ``scores.shape[:-1]`` and dtype ``scores.dtype``,
        differentiable with respect to ``scores`` (and ``tau``). Works under
        ``jax.jit``, ``jax.grad`` and ``jax.vmap``.

    Memory: all ``n x n`` pairs of a row are formed at once and masked to
    the positive-negative ones, so time and memory are ``O(batch * n^2)``
    (a few arrays of that size, more under differentiation). Split long
    rows into smaller batches yourself if that does not fit.

    Stability: the argument is formed as ``((s_i/2 - s_j/2) / tau) * 2``:
    ``s_i - s_j`` itself can overflow (``3e38 - (-3e38)`` in float32) and
    ``2 / tau`` overflows for tiny ``tau``; the halving is exact (XLA
    flushes subnormal scores to zero anyway). The sigmoid is
    ``jax.nn.sigmoid`` (no overflow for large arguments), with the
    derivative formed as ``sigmoid(x) sigmoid(-x)``: JAX's own
    ``s (1 - s)`` cancels for large ``x`` (relative error 1e-7 at ``x = 20``
    in float64, and 0 instead of ``e^-x`` beyond 37). Where
    ``|argument|`` exceeds ``-log(smallest subnormal) + 5`` (750 in float64,
    108 in float32) the sigmoid is exactly 0 or 1 with exactly zero
    derivative; there the argument is replaced by a constant through a
    double ``where``, so that an infinite argument (huge scores, tiny
    ``tau``) meets no ``inf * 0`` in the derivative. The derivative with
    respect to ``tau`` is formed as ``-(q / tau)`` with ``q`` the quotient,
    not as ``-diff / tau^2``, which is NaN at ties once ``tau^2`` underflows.

    Raises:
        ValueError: ``scores`` not a floating array or 0-d; ``labels`` as
            for :func:`auc`; ``tau`` not > 0 and finite (when concrete) or
            not a real scalar.
    """
    scores, sc = floating(scores, "scores", axis="element", nonempty=False)
    positive = _check_labels(labels, scores.shape)
    tau = positive_scalar(tau, "tau", sc.dtype)
    return _soft_auc(sc, positive, tau).astype(scores.dtype)


@jax.custom_jvp
def _over(x, t):
    """``x / t``, differentiated as ``dx / t - ((x / t) / t) dt``.

    JAX's own rule for ``t`` is ``-x t^-2``, which is ``0 * inf = NaN`` at
    ``x = 0`` (a tie) once ``t^2`` underflows (``t < 1.5e-154`` in float64).
    """
    return x / t


@_over.defjvp
def _over_jvp(primals, tangents):
    (x, t), (dx, dt) = primals, tangents
    q = x / t
    # the barrier keeps XLA from folding (x / t) / t back into x / (t * t)
    return q, dx / t - (jax.lax.optimization_barrier(q) / t) * dt


@jax.custom_jvp
def _sigmoid(x):
    """``jax.nn.sigmoid`` whose derivative is ``sigmoid(x) sigmoid(-x)``.

    JAX's own rule forms ``s (1 - s)``, where ``1 - s`` cancels for large
    ``x`` (relative error ``eps / sigmoid(-x)``: 1e-7 at ``x = 20``, and
    exactly 0 beyond ``x = 37`` in float64 although the true derivative is
    ``e^-x``).
    """
    return jax.nn.sigmoid(x)


@_sigmoid.defjvp
def _sigmoid_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return _sigmoid(x), jax.nn.sigmoid(x) * jax.nn.sigmoid(-x) * dx


@jax.jit
def _soft_auc(sc, positive, tau):
    finfo = jnp.finfo(sc.dtype)
    bound = -math.log(float(finfo.smallest_normal) * float(finfo.eps)) + 5.0
    half = sc * 0.5
    diff = half[..., :, None] - half[..., None, :]  # (s_i - s_j) / 2, i positive, j negative
    arg = jax.lax.stop_gradient(_over(diff, tau) * 2)
    saturated = ~(jnp.abs(arg) <= bound)  # NaN counts as saturated and stays NaN
    arg = jnp.where(saturated, jnp.clip(arg, -bound, bound), _over(jnp.where(saturated, 0.0, diff), tau) * 2)
    pos = positive.astype(sc.dtype)
    pairs = pos[..., :, None] * (1 - pos)[..., None, :]
    total = jnp.sum(_sigmoid(arg) * pairs, axis=(-2, -1))
    n_pos = jnp.sum(pos, axis=-1)
    return total / (n_pos * (sc.shape[-1] - n_pos))
