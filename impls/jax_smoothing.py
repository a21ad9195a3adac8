"""Smoothing primitives in JAX (catalogue section 1, seed 004).

Seed 004 is Su Jianlin, "On Function Smoothing" (2019): ``logsumexp`` is the
smooth maximum, ``softmax`` the smooth one-hot of the arg-max, ``soft_argmax``
the smooth arg-max index, and ``soft_topk`` the seed's recursive smooth
top-k indicator ("soft-k-max").

Conventions shared by every function here:

* ``x`` is a floating-point ``jax.Array`` (or numpy array) with at least one
  dimension; the LAST axis is the class axis and all leading axes are batch
  axes. The functions are pure and work under ``jax.jit``, ``jax.vmap`` and
  ``jax.grad``; ``soft_topk`` needs ``static_argnames=("topk",)`` under jit.
* ``k > 0`` is the sharpness (inverse temperature): a Python number, a numpy
  scalar or a 0-d array. Its value is validated only when it is concrete (a
  Python or numpy number, or a jax array outside any trace); a traced ``k``
  (e.g. an argument of a jitted function) is not checked.
* float16 and bfloat16 are computed internally in float32; the result is cast
  back, so the output dtype is always the input dtype. ``k`` is converted to
  the compute dtype (so a numpy float64 ``k`` does not promote the result).
* Masking: an entry ``x_i = -inf`` contributes nothing (``softmax`` is 0
  there, and so is every gradient there). A row that is entirely ``-inf``
  gives ``logsumexp = -inf``, ``softmax = 0`` and ``soft_argmax = 0``, each
  with a gradient of exactly 0 (``jax.nn.logsumexp`` gives NaN there).
* ``+inf`` and NaN inputs are outside the domain.

Stability. With ``m = max_i x_i`` the identities

    logsumexp(x, k) = m + (1/k) log sum_i exp(k (x_i - m))
    softmax(x, k)_i = exp(k (x_i - m)) / sum_j exp(k (x_j - m))

hold for ANY constant ``m``, so their derivative with respect to ``m`` is
zero and ``m`` may go through ``jax.lax.stop_gradient``: the gradient stays
exact. The exponents ``z_i = k (x_i - m)`` are <= 0, so nothing overflows;
``k x`` is never formed (it overflows for large ``k`` or ``|x|``). ``x - m``
itself can overflow (``x = -3e38``, ``m = 3e38`` in float32), so it is formed
as ``x/2 - m/2`` and multiplied by ``2k`` (halving only changes the
exponent; for subnormal numbers its rounding is far below that of the
result). A non-finite row maximum (an all ``-inf`` row) is replaced by 0 and
the result selected afterwards, and ``-inf`` entries get the exponent
``-inf`` through a second ``where`` ("double where"), so that no ``inf * 0``
reaches the derivatives.

Range of ``k``: ``k`` is rounded to the compute dtype. Below the smallest
normal number of that dtype (1.2e-38 in float32, 2.2e-308 in float64) the
results lose accuracy (XLA flushes subnormal numbers to zero on CPU and GPU,
so there ``k`` acts as 0), and the gradient of ``logsumexp`` overflows once
``1/k`` does. XLA's flush-to-zero also means that subnormal outputs (e.g. a
softmax entry of 1e-40 in float32) come out as 0.
"""

from __future__ import annotations

import functools
import numbers

import jax
import jax.numpy as jnp

from ._jax_checks import floating, positive_scalar
from ._jax_rows import exact_ones

__all__ = ["logsumexp", "softmax", "soft_argmax", "soft_topk"]


def _check_topk(topk, n: int) -> int:
    if isinstance(topk, bool) or not isinstance(topk, numbers.Integral):
        raise ValueError(f"topk must be a (static) Python int, got {type(topk).__name__}")
    topk = int(topk)
    if not 1 <= topk <= n:
        raise ValueError(f"topk must satisfy 1 <= topk <= {n} (size of the last axis), got {topk}")
    return topk


def _exponents(x, k):
    """Return ``z = k (x - m)`` (<= 0), the safe row max ``m`` and its finiteness.

    ``m`` is the row maximum under ``stop_gradient``, replaced by 0 where it
    is ``-inf`` (all ``-inf`` rows), all with ``keepdims=True``; a NaN or
    ``+inf`` maximum stays and makes the row's results NaN.
    """
    m = jax.lax.stop_gradient(jnp.max(x, axis=-1, keepdims=True))
    finite = m != -jnp.inf  # a row with an entry above -inf; a NaN or +inf maximum stays, and gives NaN
    m = jnp.where(finite, m, jnp.zeros_like(m))
    # x/2 - m/2 never overflows, unlike x - m; (2k)(x/2 - m/2) == k(x - m).
    half_diff = x * 0.5 - m * 0.5
    masked = half_diff == -jnp.inf
    # double where: masked entries get exponent -inf without -inf ever being
    # multiplied by k (whose derivative would give 0 * inf = NaN w.r.t. k)
    z = jnp.where(masked, -jnp.inf, jnp.where(masked, 0.0, half_diff) * (2 * k))
    return z, m, finite


def _softmax(x, k):
    z, _, finite = _exponents(x, k)
    e = jnp.exp(z)
    s = jnp.sum(e, axis=-1, keepdims=True)
    # s >= 1 on rows with a finite maximum; an all -inf row has s = 0 and e = 0
    return e / jnp.where(finite, s, jnp.ones_like(s))


def _softmax_and_complement(y, k):
    """``q = softmax(y, k)`` and ``1 - q``, the latter accurate where q is near 1.

    Where ``q > 1/2`` (the unique maximum) ``1 - q`` is the sum of the other
    exponentials over the sum of all, instead of the cancelling ``1 - q``.
    No masking.
    """
    z, _, _ = _exponents(y, k)
    e = jnp.exp(z)
    s = jnp.sum(e, axis=-1, keepdims=True)
    q = e / s
    # the dominant entry is the one with q > 1/2 (at most one per row), not y == max(y): under
    # jax.jit XLA may evaluate y once for the max and again (contracted into an FMA) for the
    # comparison, which then matches no entry (soft_topk gave 2.13); q > 1/2 is decided far from
    # any rounding that matters (at q = 1/2 either branch is accurate).  No index either: jnp.argmax
    # is a variadic reduction that XLA on the CPU does not vectorise (~9 ms at 4096 x 1000)
    others = jnp.sum(jnp.where(q > 0.5, 0.0, e), axis=-1, keepdims=True)
    return q, jnp.where(q > 0.5, others / s, 1 - q)


def logsumexp(x, k=1.0):
    """Smooth maximum ``(1/k) log sum_i exp(k x_i)`` over the last axis.

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019). ``max(x) <= logsumexp(x, k) <= max(x) + log(n)/k`` and it tends to
    ``max(x)`` as ``k -> inf``; its gradient is ``softmax(x, k)``.

    Args:
        x: floating array of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64 (``jax.Array`` or numpy array).
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d array). Validated only when concrete: a traced ``k`` (under
            ``jax.jit``) is not checked.

    Returns:
        Array of shape ``x.shape[:-1]`` and dtype ``x.dtype``.

    Masking: entries ``-inf`` contribute nothing; an all ``-inf`` row gives
    ``-inf`` with a zero (not NaN) gradient.

    Stability: with the row maximum ``m`` under ``stop_gradient`` the value
    is computed as ``m + log1p(s') / k``, where
    ``s' = sum_i exp(k (x_i - m)) - 1`` is summed with the ``1`` of a
    maximal entry removed exactly (``exp(0) - 1 = 0``), so that the result
    stays accurate when it is close to 0. Stopping the gradient of ``m`` is
    exact because the expression does not depend on ``m``; ``k (x - m)`` is
    formed as ``2k (x/2 - m/2)`` so that neither ``k x`` nor ``x - m`` can
    overflow.

    Raises:
        ValueError: ``x`` not a floating-point array or 0-d or with an empty
            last axis; ``k`` (when concrete) not > 0 and finite.
    """
    x, xc = floating(x, "x", axis="class")
    k = positive_scalar(k, "k", xc.dtype)
    z, m, finite = _exponents(xc, k)
    e = jnp.exp(z)
    # s' = sum_i e_i - 1, without the rounding of forming 1 + (small) first: the 1 of a maximal
    # entry removed exactly (_jax_rows.exact_ones)
    one, count = exact_ones(e)
    s_minus_1 = jnp.sum(e - one, axis=-1) + (count - 1)
    finite, m = finite[..., 0], m[..., 0]
    s_minus_1 = jnp.where(finite, s_minus_1, jnp.zeros_like(s_minus_1))
    # k can underflow to 0 in the compute dtype (or be flushed to 0 when it is
    # subnormal); then log1p(s') / k must be 0 for s' = 0, not 0 / 0 = NaN.
    k = jnp.where((k == 0) & (s_minus_1 == 0), 1.0, k)
    out = jnp.where(finite, m + jnp.log1p(s_minus_1) / k, -jnp.inf)
    return out.astype(x.dtype)


def softmax(x, k=1.0):
    """Smooth one-hot arg-max ``exp(k x_i) / sum_j exp(k x_j)`` over the last axis.

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019). Sums to 1 over the last axis (for a row with a finite entry), is
    invariant under ``x -> x + c``, and tends to ``onehot(argmax x)`` as
    ``k -> inf`` for a unique maximum.

    Args:
        x: floating array of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64 (``jax.Array`` or numpy array).
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d array). Validated only when concrete (not under a trace).

    Returns:
        Array of the shape and dtype of ``x``.

    Masking: 0 at entries ``-inf`` (with zero gradient there); an all
    ``-inf`` row gives all zeros with a zero gradient.

    Stability: ``exp(k (x_i - m)) / sum_j exp(k (x_j - m))`` with the row
    maximum ``m`` under ``stop_gradient``; exact because the ratio does not
    depend on ``m``. ``k (x - m)`` is formed as ``2k (x/2 - m/2)``, so that
    neither ``k x`` nor ``x - m`` can overflow; an all ``-inf`` row divides
    by 1 instead of 0.

    Raises:
        ValueError: ``x`` not a floating-point array or 0-d or with an empty
            last axis; ``k`` (when concrete) not > 0 and finite.
    """
    x, xc = floating(x, "x", axis="class")
    k = positive_scalar(k, "k", xc.dtype)
    return _softmax(xc, k).astype(x.dtype)


def soft_argmax(x, k=1.0):
    """Smooth arg-max index ``sum_i i * softmax(x, k)_i`` (0-based) over the last axis.

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019). Lies in ``[0, n - 1]`` and tends to ``argmax(x)`` as ``k -> inf``
    for a unique maximum.

    Args:
        x: floating array of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64 (``jax.Array`` or numpy array).
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d array). Validated only when concrete (not under a trace).

    Returns:
        Array of shape ``x.shape[:-1]`` and dtype ``x.dtype``.

    Masking: entries ``-inf`` get weight 0; an all ``-inf`` row gives 0 with a
    zero gradient.

    Stability: uses the same max-shifted, overflow-free ``softmax`` (see
    :func:`softmax`), and a weighted sum rather than a dot product (which
    may run in reduced precision, e.g. TF32, on GPUs).

    Raises:
        ValueError: ``x`` not a floating-point array or 0-d or with an empty
            last axis; ``k`` (when concrete) not > 0 and finite.
    """
    x, xc = floating(x, "x", axis="class")
    k = positive_scalar(k, "k", xc.dtype)
    p = _softmax(xc, k)
    index = jnp.arange(xc.shape[-1], dtype=xc.dtype)
    return jnp.sum(p * index, axis=-1).astype(x.dtype)


def soft_topk(x, topk, k=1.0):
    """Smooth top-k indicator by seed 004's recursion ("soft-k-max").

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019)::

        x <- x - min(x)            (per row, last axis)
        p <- 0
        repeat topk times:
            y <- (1 - p) * x
            p <- p + softmax(y, k)
        return p

    With ``onehot(argmax(y))`` in place of ``softmax(y, k)`` this yields the
    exact top-k indicator. ``sum_i p_i = topk``; individual ``p_i`` may
    exceed 1 and are not clipped. The derivative flows through ``min(x)``
    too (the recursion is not shift invariant in general).

    Args:
        x: floating array of shape ``(..., n)``, finite entries only;
            float16, bfloat16, float32 or float64 (``jax.Array`` or numpy
            array).
        topk: Python int with ``1 <= topk <= n``; static under ``jax.jit``
            (``static_argnames=("topk",)``): the length of the recursion's
            ``lax.scan``.
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d array). Validated only when concrete (not under a trace).

    Returns:
        Array of the shape and dtype of ``x``, computed in float64 when
        ``jax_enable_x64`` is on (see the derivative note).

    Masking: not supported (finite inputs only; not checked).

    Derivative: an iteration whose softmax is exactly one-hot has an exactly
    zero Jacobian and goes through ``stop_gradient``, so that an overflowing
    cotangent (of size ``k |x|``, for ``|x|`` near the dtype's maximum) meets
    no ``0 * inf``. Where the true derivative itself exceeds the dtype's
    range, or where rounding has turned a near-tie into an exact tie while
    ``k`` times the span of ``x`` is beyond the dtype's range, it can be
    ``±inf``, never NaN: cotangents that overflow with both signs would meet
    as ``inf - inf``, so where the pullback gives NaN, its entries come from
    a second one that carries each cotangent with a per-row binary exponent
    of its own (``_soft_topk``, ``_soft_topk_vjp_wide``). Reverse mode only
    (``jax.custom_vjp``: no ``jax.jvp``/``jacfwd``).

    Stability: ``x - min(x)`` can overflow (``3e38 - (-3e38)`` in float32)
    and rounds away the differences between entries far from the minimum
    (``x - min(x)`` for ``x = [-3e38, 1, 2]`` loses the 1 and the 2), and
    ``1 - p`` computed from ``p`` loses everything below eps, which
    ``(1 - p)(x - min x)`` then multiplies by a possibly huge span. Since
    softmax is invariant under a per-row shift, ``softmax(y, k)`` with
    ``y = (1 - p)(x - min x)`` equals ``softmax(y/2 + t, 2k)`` for any
    per-row ``t``. With ``h = x/2 - min(x)/2`` and ``c = 1 - p`` carried as
    its own variable (updated as ``(1 - q) - p`` where the new softmax ``q``
    exceeds 1/2, with ``1 - q`` summed from the other entries), ``y/2 = c h``
    is accurate where ``p >= 1/2`` and ``y/2 + min(x)/2 = x/2 - p h`` is
    accurate where ``p < 1/2`` (exact where ``p = 0``: the first pass is
    exactly ``softmax(x, k)``). Each pass uses the frame (``t = 0`` or
    ``t = min(x)/2``) that is accurate at the row's maximum, which is all a
    softmax resolves. Nothing overflows; each softmax is the max-shifted one
    of :func:`softmax`. Inputs whose result hinges on differences below the
    dtype's resolution (entries equal to ~1e-50 relative, amplified by a
    span near the dtype's maximum) cannot be resolved by any fixed-precision
    evaluation of the recursion.

    Raises:
        ValueError: ``x`` not a floating-point array or 0-d or with an empty
            last axis; ``topk`` not an int in ``1..n``; ``k`` (when concrete)
            not > 0 and finite.
    """
    x, xc = floating(x, "x", axis="class")
    topk = _check_topk(topk, xc.shape[-1])
    # Computed in float64 whatever the input dtype (when jax_enable_x64 is
    # on): the derivative grows like (k span(x))^topk and leaves float32's
    # range already at k span(x) ~ 1e13 for topk = 3, where an overflowing
    # cotangent meeting a zero factor gives inf * 0 = NaN (x = [0, 0,
    # -9.4e20, 0], topk = 3 in float32). In float64 it stays finite for
    # every float32 input up to topk = 4, and the true derivative rounds to
    # +-inf on the way back to float32.
    xc = xc.astype(jax.dtypes.canonicalize_dtype(jnp.float64))
    k = positive_scalar(k, "k", xc.dtype)
    return _soft_topk(xc, topk, jnp.asarray(k, xc.dtype)).astype(x.dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _soft_topk(xc, topk, k):
    """:func:`_soft_topk_recursion`, with a reverse pass that cannot meet ``inf - inf``.

    Near a tie at a span of ``x`` near the dtype's range, the cotangents of the
    recursion's intermediates overflow with both signs although their sum may
    be finite, and the reverse pass gives NaN. The pullback is therefore also
    computed by :func:`_soft_topk_vjp_wide`, which carries every cotangent as
    a bounded mantissa times ``2^E`` with a per-row exponent ``E`` and rounds
    to the dtype only at the end: ``±inf`` where the derivative exceeds the
    range, a finite number where it does not, never NaN. That result replaces
    NaN entries of the derivative in ``x`` only. Reverse mode only
    (``custom_vjp``: no ``jax.jvp``/``jacfwd``).
    """
    return _soft_topk_recursion(xc, topk, k)[0]


def _soft_topk_fwd(xc, topk, k):
    p, pullback, steps = jax.vjp(lambda a, b: _soft_topk_recursion(a, topk, b), xc, k, has_aux=True)
    return p, (pullback, xc, k, steps)


def _soft_topk_bwd(topk, residuals, w):
    pullback, xc, k, steps = residuals
    gx, gk = pullback(w)
    nan = jnp.isnan(gx)
    # the wide pass only where a NaN needs it (lax.cond: skipped at run time otherwise; under vmap
    # both branches run, as a select): forward+backward at 4096 x 1000 float32, topk = 5, 1600 -> 1350 ms
    return jax.lax.cond(jnp.any(nan), lambda: jnp.where(nan, _soft_topk_vjp_wide(xc, k, steps, w), gx),
                        lambda: gx), gk


_soft_topk.defvjp(_soft_topk_fwd, _soft_topk_bwd)

_NO_EXPONENT = -1e6  # the exponent of an all-zero row: below any other, and 2^it is 0


def _times_pow2(m, e, limit):
    """``m * 2^e`` for integral ``e`` (a float array), clamped to ``|e| <= 2 limit``.

    In two factors of at most ``2^limit`` each, so that neither overflows or
    is subnormal (XLA flushes those to zero): exact unless the product
    itself overflows (``±inf``) or underflows.
    """
    e = jnp.clip(e, -2 * limit, 2 * limit)
    half = jnp.floor(e * 0.5)
    return m * jnp.exp2(half) * jnp.exp2(e - half)


def _exponent(v):
    """``floor(log2 |v|)``, and 0 where ``v`` is 0 or not finite."""
    ok = (v != 0) & jnp.isfinite(v)
    return jnp.where(ok, jnp.floor(jnp.log2(jnp.where(ok, jnp.abs(v), 1))), 0).astype(v.dtype)


def _normalised(m, e, limit):
    """``(m', e')`` with ``m' 2^e' == m 2^e`` and each row's largest ``|m'|`` in [1, 2)."""
    top = _exponent(jnp.max(jnp.abs(m), axis=-1, keepdims=True))
    nonzero = jnp.any(m != 0, axis=-1, keepdims=True)
    return _times_pow2(m, -top, limit), jnp.where(nonzero, e + top, _NO_EXPONENT).astype(e.dtype)


def _plus(m1, e1, m2, e2, limit):
    """``m1 2^e1 + m2 2^e2``, normalised; the smaller term is rounded at the larger one's exponent."""
    e = jnp.maximum(e1, e2)
    return _normalised(_times_pow2(m1, e1 - e, limit) + _times_pow2(m2, e2 - e, limit), e, limit)


def _soft_topk_vjp_wide(xc, k, steps, w):
    """The derivative of :func:`_soft_topk_recursion` in ``x`` for cotangent ``w``, in an unbounded exponent range.

    The reverse pass of the recursion (``z = 2k c h`` up to a per-row shift,
    ``q = softmax(z)``, ``p += q``, ``c = 1 - p``, ``h = x/2 - min(x)/2``),
    pass by pass from the last::

        a_z    = q (a_p - <a_p, q>)     (at q > 1/2: a_p (1 - q) - sum_{j != i} a_p,j q_j)
        a_x   += k c a_z                (through h's own entry)
        a_min += -k sum(c a_z)          (frame t = 0), or k sum(p a_z) (frame t = min(x)/2)
        a_p   -= 2k h a_z               (the cotangent of p before the pass)

    and ``a_min`` shared among the tied minima of ``x`` at the end. The two
    forms of ``a_min`` are equal as ``sum(a_z) = 0``; each pass uses the
    forward pass's frame, where its factor (``c`` or ``p``) is small at the
    entries that dominate ``a_z``. Each cotangent is carried as ``M 2^E``:
    ``M`` with its row maximum in [1, 2), ``E`` per row (a float array of
    integers), and ``2k`` and ``h`` are scaled by powers of two, so nothing
    overflows however large ``k h`` or the cotangents are. The result is
    rounded to ``xc``'s dtype at the end: ``±inf`` with a definite sign where
    it exceeds the range, never NaN. ``steps`` holds each pass's
    ``(q, 1 - q, c, p, shifted)`` from the forward pass, stacked on a leading axis.
    """
    limit = 1000 if xc.dtype == jnp.float64 else 120  # 2^limit: far inside the normal range
    lowest = jnp.min(xc, axis=-1, keepdims=True)
    h = xc * 0.5 - lowest * 0.5
    eh = _exponent(jnp.max(h, axis=-1, keepdims=True))
    hn = _times_pow2(h, -eh, limit)  # h = hn 2^eh, |hn| < 2
    two_k = jnp.asarray(2 * k, xc.dtype)
    ek = _exponent(two_k)
    kn = _times_pow2(two_k, -ek, limit)  # 2k = kn 2^ek, 1 <= kn < 2
    w = w.astype(xc.dtype)
    mp, ep = _normalised(w, jnp.zeros_like(w[..., :1]), limit)
    mx, ex = jnp.zeros_like(w), jnp.full_like(ep, _NO_EXPONENT)
    mm, em = jnp.zeros_like(ep), jnp.full_like(ep, _NO_EXPONENT)

    def back(carry, step):  # one pass, from the last (lax.scan in reverse, as in the recursion)
        mp, ep, mx, ex, mm, em = carry
        q, q_complement, c, p, shifted = step
        big = q > 0.5  # at most one per row
        others = jnp.sum(jnp.where(big, 0, mp * q), axis=-1, keepdims=True)
        inner = jnp.sum(mp * q, axis=-1, keepdims=True)
        az = q * jnp.where(big, mp * q_complement - others, mp - inner)  # at exponent ep
        to_min = jnp.where(shifted, jnp.sum(p * az, axis=-1, keepdims=True), -jnp.sum(c * az, axis=-1, keepdims=True))
        mx, ex = _plus(mx, ex, kn * c * az, ep + ek - 1, limit)
        mm, em = _plus(mm, em, kn * to_min, ep + ek - 1, limit)
        mp, ep = _plus(mp, ep, -(kn * hn) * az, ep + ek + eh, limit)
        return (mp, ep, mx, ex, mm, em), None
    (mp, ep, mx, ex, mm, em), _ = jax.lax.scan(back, (mp, ep, mx, ex, mm, em), steps, reverse=True)
    ties = (xc == lowest).astype(xc.dtype)
    mx, ex = _plus(mx, ex, ties / jnp.sum(ties, axis=-1, keepdims=True) * mm, em, limit)
    e = _exponent(mx)
    return _times_pow2(_times_pow2(mx, -e, limit), e + ex, limit)


def _soft_topk_recursion(xc, topk, k):
    """The recursion of :func:`soft_topk` on ``xc`` in its compute dtype: ``(p, steps)``.

    ``steps`` holds each pass's ``(q, 1 - q, c, p, shifted)`` (``c = 1 - p``
    and ``p`` before the pass, ``shifted`` per row: the frame
    ``t = min(x)/2``), stacked on a leading axis of length ``topk``, for
    :func:`_soft_topk_vjp_wide`, without their derivatives.
    """
    # softmax((1 - p)(x - min x), k) == softmax(y/2 + t, 2k) for any per-row t.
    # With h = x/2 - min(x)/2 and c = 1 - p (carried as its own variable: from
    # p it would lose everything below eps), y/2 = c h is accurate where p is
    # near 1, and y/2 + min(x)/2 = x/2 - p h is accurate where p is near 0
    # (exact at p = 0, all entries in the first pass). Each pass uses the
    # frame (t = 0 or t = min(x)/2) that is accurate at the row's maximum,
    # which is all that softmax resolves; halving keeps everything finite.
    half = xc * 0.5
    half_min = jnp.min(xc, axis=-1, keepdims=True) * 0.5
    h = half - half_min

    def step(carry, _):
        p, c = carry
        chosen = p >= 0.5
        shifted = jnp.where(chosen, half_min + c * h, half - p * h)  # t = min(x)/2
        unshifted = jnp.where(chosen, c * h, shifted - half_min)  # t = 0
        frame = jax.lax.stop_gradient(unshifted)
        top_chosen = jnp.max(jnp.where(chosen, frame, -jnp.inf), axis=-1, keepdims=True)
        top_other = jnp.max(jnp.where(chosen, -jnp.inf, frame), axis=-1, keepdims=True)
        frame_shifted = top_chosen < top_other
        y = jnp.where(frame_shifted, shifted, unshifted)
        q, q_complement = _softmax_and_complement(y, 2 * k)
        # An exactly one-hot q has an exactly zero Jacobian; stopping its
        # gradient there changes no derivative but keeps an overflowing
        # cotangent (k h is huge when |x| is) from meeting that zero as
        # inf * 0 = NaN.
        one_hot = jnp.sum(q > 0, axis=-1, keepdims=True) == 1
        q = jnp.where(one_hot, jax.lax.stop_gradient(q), q)
        q_complement = jnp.where(one_hot, jax.lax.stop_gradient(q_complement), q_complement)
        # 1 - (p + q): as (1 - q) - p where q > 1/2, else as c - q
        return (p + q, jnp.where(q > 0.5, q_complement - p, c - q)), (q, q_complement, c, p, frame_shifted)
    # lax.scan, not a Python loop: the pass is compiled once whatever topk is (an unrolled
    # recursion and its derivative grew the XLA program, and its compile time, topk-fold)
    (p, _), steps = jax.lax.scan(step, (jnp.zeros_like(xc), jnp.ones_like(xc)), length=topk)
    return p, steps
