"""EXACT, the expected accuracy of a Gaussian arg-max, in JAX (catalogue section 2, seed 000).

Seed 000 is Su Jianlin, "How to Train Your Accuracy?" (2022), on the EXACT
paper (EXpected ACcuracy opTimization): with a score vector ``mu`` and a
scale ``sigma > 0``, the probability that the label wins the arg-max of
``mu / sigma + eps``, ``eps ~ N(0, I)`` i.i.d., is used as a smooth accuracy.
Conditioning on the label's own noise ``eps_y = z`` (the label wins iff
``eps_j < z + (mu_y - mu_j) / sigma`` for every other ``j``) gives the
one-dimensional integral computed here, exactly (by quadrature, never by
sampling).

Conventions: the LAST axis of ``mu`` is the class axis, leading axes are
batch axes; float16 and bfloat16 are computed in float32 and cast back, so
the output dtype is the input dtype. float64 needs ``jax_enable_x64``.
Works under ``jax.jit``, ``jax.grad`` and ``jax.vmap``; value checks are
skipped for traced arguments (shapes and dtypes are always checked). XLA
flushes subnormal numbers to zero, so results below the smallest normal
number (2.2e-308 in float64) come out as 0.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erfc

from ._jax_checks import class_labels, floating, is_array, is_concrete, positive_scalar

__all__ = ["exact_accuracy"]

# Gauss-Legendre rule with 80 nodes on [-1, 1]: the 40 positive nodes and
# their weights, increasing, each the float64 nearest to the value computed
# with mpmath at 50 digits (Newton on P_80, w = 2 (1 - x^2) / (80 P_79(x))^2).
# numpy.polynomial.legendre.leggauss(80) is not used: its weights are off by
# up to 1e-12 relative (3.5e-15 median), which would show in the result.
_GL_X_POS = (
    0.019511383256793996, 0.058504437152420666, 0.0974083984415846,
    0.1361640228091439, 0.1747122918326468, 0.21299450285766613,
    0.25095235839227215, 0.28852805488451183, 0.32566437074770194,
    0.3623047534994873, 0.39839340588196925, 0.4338753708317561,
    0.46869661517054445, 0.5028041118887849, 0.536145920897132,
    0.5686712681227097, 0.6003306228297517, 0.631075773046872,
    0.6608598989861199, 0.6896376443420276, 0.7173651853620999,
    0.7440002975835973, 0.7695024201350413, 0.7938327175046055,
    0.8169541386814635, 0.8388314735802552, 0.8594314066631111,
    0.8787225676782139, 0.8966755794387706, 0.9132631025717577,
    0.9284598771724458, 0.9422427613098727, 0.9545907663436349,
    0.9654850890437993, 0.9749091405857278, 0.982848572738629,
    0.9892913024997555, 0.9942275409656883, 0.9976498643982377,
    0.9995538226516306,
)
_GL_W_POS = (
    0.03901781365630665, 0.03895839596276953, 0.03883965105905197,
    0.038661759774076467, 0.038424993006959424, 0.038129711314477635,
    0.0377763643620014, 0.03736549023873049, 0.03689771463827601,
    0.03637374990583598, 0.035794393953416055, 0.03516052904474759,
    0.03447312045175393, 0.03373321498461152, 0.0329419393976454,
    0.03210049867348777, 0.0312101741881147, 0.03027232175955798,
    0.02928836958326785, 0.028259816057276864, 0.02718822750048638,
    0.026075235767565118, 0.024922535764115492, 0.0237318828659301,
    0.022505090246332463, 0.021244026115782005, 0.019950610878142,
    0.018626814208299033, 0.017274652056269307, 0.015896183583725687,
    0.014493508040509076, 0.01306876159240134, 0.011624114120797826,
    0.010161766041103065, 0.008683945269260859, 0.007192904768117313,
    0.005690922451403199, 0.004180313124694896, 0.0026635335895126818,
    0.0011449500031869414,
)
_GL_X = tuple(-x for x in reversed(_GL_X_POS)) + _GL_X_POS
_GL_W = tuple(reversed(_GL_W_POS)) + _GL_W_POS
N_NODES = len(_GL_X)  # 80

_DROP = 46.0  # the interval ends where log g has fallen by this much below the mode
_MODE_STEPS = 12  # Newton steps for the mode (7 always sufficed in a 3000-case sweep)
_END_STEPS = 5  # Newton steps for each end (4 left the ends within 0.05 of _DROP)
_CLAMP = 100.0  # |a_j| beyond this changes nothing representable (see exact_accuracy)

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2 * math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2)


def _check_sigma(sigma, batch: tuple, dtype):
    """Validate ``sigma`` (its values only when concrete); return an array of ``dtype``."""
    if is_array(sigma):
        if not (jnp.issubdtype(sigma.dtype, jnp.floating) or jnp.issubdtype(sigma.dtype, jnp.integer)):
            raise ValueError(f"sigma must be real, got dtype {sigma.dtype}")
        try:
            shape = np.broadcast_shapes(np.shape(sigma), tuple(batch))
        except ValueError:
            shape = None
        if shape != tuple(batch):
            raise ValueError(
                f"sigma must broadcast against the batch shape mu.shape[:-1] = {tuple(batch)}, "
                f"got shape {np.shape(sigma)}"
            )
        if is_concrete(sigma) and np.size(sigma) > 0:
            values = np.asarray(sigma, dtype=np.float64)
            if not bool(np.all(np.isfinite(values) & (values > 0))):
                raise ValueError(f"sigma must be > 0 and finite, got min {values.min()}, max {values.max()}")
        return jnp.asarray(sigma, dtype=dtype)
    return positive_scalar(sigma, "sigma", dtype)


_SERIES_TERMS = 12  # terms of the asymptotic series of Phi in the far lower tail


def _far(dtype) -> float:
    """Where the far lower tail starts: -20 in float64, -10 in lower precision.

    Below it the asymptotic series is used (its first omitted term is
    23!! / u^24 < 2e-20 at |u| = 20 and < 4e-13 at |u| = 10); above it
    erfc(-u / sqrt2) is a normal number (> 1e-88, > 1e-23).
    """
    return 20.0 if dtype == jnp.float64 else 10.0


def _series(u):
    """S(u) = sum_{k < 12} (-1)^k (2k - 1)!! / u^(2k), Phi(u) ~ phi(u) S(u) / (-u) as u -> -inf."""
    r = 1.0 / (u * u)
    acc = jnp.ones_like(u)
    for k in range(_SERIES_TERMS - 1, 0, -1):
        acc = 1.0 - (2 * k - 1) * r * acc
    return acc


def _branches(u):
    """Masks and safe arguments for the far tail, the rest of u < 0 and u >= 0.

    NaN falls in the last branch, whose argument keeps it, so it propagates.
    """
    t = _far(u.dtype)
    far = u < -t
    mid = (u < 0) & ~far
    return far, mid, jnp.where(far, u, -t), jnp.where(mid, u, -1.0), jnp.where(u < 0, 0.0, u)


def _mills(u):
    """Inverse Mills ratio phi(u) / Phi(u), without cancellation or overflow.

    Far in the lower tail it is -u / S(u) (S the asymptotic series);
    elsewhere phi(u) / Phi(u) with Phi from erfc, which is a normal number
    there. (``jax.scipy.special.erfcx`` is not used: it is exp(x^2) erfc(x)
    up to x = sqrt(log(max float)), so it returns 0 where erfc underflows,
    e.g. on [9.19, 9.42] in float32 and [26.54, 26.64] in float64.)
    """
    far, mid, uf, um, up = _branches(u)
    v_far = -uf / _series(uf)
    v_mid = jnp.exp(-0.5 * um * um) * _INV_SQRT_2PI / (0.5 * erfc(-um * _INV_SQRT2))
    v_pos = jnp.exp(-0.5 * up * up) * _INV_SQRT_2PI / (1.0 - 0.5 * erfc(up * _INV_SQRT2))
    return jnp.where(far, v_far, jnp.where(mid, v_mid, v_pos))


@jax.custom_jvp
def _log_ndtr(u):
    """log Phi(u), accurate in both tails; its derivative is the inverse Mills ratio.

    log(erfc(-u/sqrt2) / 2) for u < 0 down to the far tail, then
    -u^2/2 - log(-u) - log sqrt(2 pi) + log S(u) with the asymptotic series
    S; log1p(-erfc(u/sqrt2) / 2) for u >= 0 (log(1 - erfc/2) near 0).
    ``jax.scipy.special.log_ndtr``
    is not used: below u = -20 it switches to an asymptotic series of order
    3, whose error reaches 3.6e-9 (absolute) near u = -20 in float64.
    """
    far, mid, uf, um, up = _branches(u)
    v_far = -0.5 * uf * uf - jnp.log(-uf) - _LOG_SQRT_2PI + jnp.log(_series(uf))
    v_mid = jnp.log(0.5 * erfc(-um * _INV_SQRT2))
    q = 0.5 * erfc(up * _INV_SQRT2)  # Phi(-u) <= 1/2
    # XLA's log1p errs by up to 3e-14 on [-0.5, -0.3]: log(1 - q) is exact
    # to 1e-16 (absolute) there, log1p is accurate for smaller q
    v_pos = jnp.where(q < 0.25, jnp.log1p(-jnp.minimum(q, 0.25)), jnp.log(1.0 - q))
    return jnp.where(far, v_far, jnp.where(mid, v_mid, v_pos))


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals, tangents):
    (u,), (du,) = primals, tangents
    return _log_ndtr(u), _mills(u) * du


def _log_g(z, a, label, dens=None):
    """log of the integrand, log phi(z) + sum_{j != y} log Phi(z + a_j).

    ``z`` (..., m), ``a`` and ``label`` (..., n) (``label`` marks the class
    y, whose factor is omitted); returns (..., m). ``dens`` (..., n), when
    given, marks one class j whose factor is the density phi(z + a_j)
    instead: the integrand of d value / d a_j.
    """
    u = z[..., :, None] + a[..., None, :]
    lp = _log_ndtr(u)
    if dens is not None:
        lp = jnp.where(dens[..., None, :], -0.5 * u * u - _LOG_SQRT_2PI, lp)
    lp = jnp.where(label[..., None, :], 0.0, lp)
    return -0.5 * z * z - _LOG_SQRT_2PI + jnp.sum(lp, axis=-1)


def _slope(z, a, label, dens=None):
    """(log g)' at ``z`` (..., m) and -(log g)'' - 1 (the factors' share of the curvature)."""
    u = z[..., :, None] + a[..., None, :]
    lam = _mills(u)  # (log Phi)' = phi / Phi, and -(log Phi)'' = lam (u + lam)
    curv = lam * (u + lam)
    if dens is not None:  # (log phi)'(u) = -u, -(log phi)'' = 1
        lam = jnp.where(dens[..., None, :], -u, lam)
        curv = jnp.where(dens[..., None, :], 1.0, curv)
    lam = jnp.where(label[..., None, :], 0.0, lam)
    curv = jnp.where(label[..., None, :], 0.0, curv)
    return -z + jnp.sum(lam, axis=-1), jnp.sum(curv, axis=-1)


def _interval(a, label, dens=None, start=None):
    """Centre and half-width of [z_L, z_R], where log g <= log g(z0) - _DROP, and log g(z0).

    ``a`` (..., n) under ``stop_gradient``. Newton's method for the mode
    starts at ``start`` (..., 1) (z = 0 for the value), where (log g)' > 0;
    (log g)' is convex and decreasing (the inverse Mills ratio is convex),
    so the iterates increase monotonically to the mode. Each end starts one
    Gaussian width sqrt(2 _DROP / c) away (c the curvature at z0) and takes
    Newton steps on log g(z) = log g(z0) - _DROP; by concavity the iterates
    approach the end from outside (after at most one step from inside), so
    every iterate is a valid end. ``dens``: as in :func:`_log_g`.
    """

    def mode_step(_, z):
        d1, curv = _slope(z, a, label, dens)
        return z - d1 / jnp.minimum(-1.0 - curv, -1.0)

    z0 = jnp.zeros(a.shape[:-1] + (1,), a.dtype) if start is None else start
    z = jax.lax.fori_loop(0, _MODE_STEPS, mode_step, z0)
    curvature = jnp.maximum(1.0 + _slope(z, a, label, dens)[1], 1.0)
    target = _log_g(z, a, label, dens) - _DROP
    width = jnp.sqrt(2 * _DROP / curvature)
    tiny = jnp.finfo(a.dtype).tiny
    left = jnp.array([True, False])

    def end_step(_, ends):
        d1, _ = _slope(ends, a, label, dens)
        # (log g)' > 0 left of the mode, < 0 right of it; the clamp only
        # guards against a zero denominator
        d1 = jnp.where(left, jnp.maximum(d1, tiny), jnp.minimum(d1, -tiny))
        return ends - (_log_g(ends, a, label, dens) - target) / d1

    ends = jax.lax.fori_loop(0, _END_STEPS, end_step, jnp.concatenate([z - width, z + width], axis=-1))
    return (ends[..., 0] + ends[..., 1]) * 0.5, (ends[..., 1] - ends[..., 0]) * 0.5, target[..., 0] + _DROP


def _nodes(centre, half, dtype):
    x = jnp.asarray(_GL_X, dtype=dtype)
    return centre[..., None] + half[..., None] * x, jnp.asarray(_GL_W, dtype=dtype)


def _times_peak(scaled, peak):
    """``scaled * exp(peak)`` in two halves: no factor is flushed to zero unless the result is tiny."""
    return (scaled * jnp.exp(peak * 0.5)) * jnp.exp(peak - peak * 0.5)


def _beyond(a, label, centre, half, peak, scaled):
    """The classes j whose derivative integrand ``h_j = g lam_j`` the value's window does not hold.

    As in ``torch_exact._beyond`` (the same test): ``scaled`` (..., n) is
    ``int g lam_j`` over the value's window, divided by ``g(z0)``; where
    ``(log h_j)'`` points inwards at both ends, each tail is at most
    ``h_j(end) / |(log h_j)'(end)|`` (log-concavity), and a class is kept on
    the value's window where both are below ``eps / 4`` of ``scaled``.
    """
    ends = jnp.stack([centre - half, centre + half], axis=-1)  # (..., 2)
    d1, _ = _slope(ends, a, label)
    log_end = _log_g(ends, a, label) - peak[..., None]
    u = ends[..., :, None] + a[..., None, :]  # (..., 2, n)
    s = d1[..., :, None] - u - _mills(u)  # (log h_j)' = (log g)' + (log lam)'(u), (log lam)' = -u - lam
    log_h = log_end[..., :, None] - 0.5 * u * u - _LOG_SQRT_2PI - _log_ndtr(u)  # log g + log lam
    tiny = jnp.finfo(a.dtype).tiny
    inward = (s[..., 0, :] > 0) & (s[..., 1, :] < 0)
    log_tail = jnp.logaddexp(log_h[..., 0, :] - jnp.log(jnp.maximum(s[..., 0, :], tiny)),
                             log_h[..., 1, :] - jnp.log(jnp.maximum(-s[..., 1, :], tiny)))
    small = (log_tail < jnp.log(scaled) + math.log(float(jnp.finfo(a.dtype).eps) / 4)) | (log_tail == -jnp.inf)
    return ~label & ~(inward & small)


_CHUNK = 64  # (row, class) pairs integrated on windows of their own per step of the loop


def _own_windows(a, label, need, grad):
    """``grad`` (B, n) with the pairs ``need`` replaced by integrals on windows of their own integrands.

    The pairs are taken ``_CHUNK`` at a time (a ``while_loop`` of data-dependent length:
    none in most calls, so the common case costs one test).
    """
    b, n = a.shape
    count = jnp.sum(need)
    chunk = min(_CHUNK, b * n)
    # padded to whole chunks, so that no dynamic_slice is clamped back over pairs already done
    flat = jnp.nonzero(need.ravel(), size=-(-b * n // chunk) * chunk, fill_value=0)[0]

    def body(state):
        i, g = state
        pick = jax.lax.dynamic_slice(flat, (i * chunk,), (chunk,))
        valid = i * chunk + jnp.arange(chunk) < count
        rows, cols = pick // n, pick % n
        ap, lp = a[rows], label[rows]
        dens = jnp.arange(n) == cols[:, None]
        # (log h_j)' = -2z - a_j + sum_k lam_k > 0 left of -a_j / 2: Newton starts one unit left of it
        centre, half, peak = _interval(ap, lp, dens, start=(-0.5 * a[rows, cols] - 1.0)[:, None])
        z, w = _nodes(centre, half, a.dtype)
        own = _times_peak(half * jnp.sum(jnp.exp(_log_g(z, ap, lp, dens) - peak[:, None]) * w, axis=-1), peak)
        return i + 1, g.at[rows, cols].add(jnp.where(valid, own - g[rows, cols], 0.0))

    return jax.lax.while_loop(lambda s: s[0] * chunk < count, body, (0, grad))[1]


@jax.custom_jvp
def _quadrature(a, label):
    """The quadrature of ``g`` on its window; derivative: ``d / d a_j = int phi(z) phi(z + a_j) prod_{k != j} Phi``.

    The derivative integrand of a class that cannot compete lives far from the value's
    window (:func:`_beyond`): those classes are integrated on windows of their own.
    """
    return _quadrature_and_weights(a, label)[0]


def _quadrature_and_weights(a, label):
    centre, half, peak = _interval(a, label)
    z, w = _nodes(centre, half, a.dtype)
    weights = jnp.exp(_log_g(z, a, label) - peak[..., None]) * w  # g(z_i) w_i / g(z0)
    return _times_peak(half * jnp.sum(weights, axis=-1), peak), (z, weights, centre, half, peak)


@_quadrature.defjvp
def _quadrature_jvp(primals, tangents):
    (a, label), (da, _) = primals, tangents
    a = jax.lax.stop_gradient(a)
    value, (z, weights, centre, half, peak) = _quadrature_and_weights(a, label)
    lam = jnp.where(label[..., None, :], 0.0, _mills(z[..., :, None] + a[..., None, :]))
    scaled = half[..., None] * jnp.sum(weights[..., :, None] * lam, axis=-2)  # (..., n), over g(z0)
    grad = _times_peak(scaled, peak[..., None])
    need = _beyond(a, label, centre, half, peak, scaled)
    n = a.shape[-1]
    grad = _own_windows(a.reshape(-1, n), label.reshape(-1, n), need.reshape(-1, n),
                        grad.reshape(-1, n)).reshape(a.shape)
    return value, jnp.sum(grad * da, axis=-1)


@jax.jit
def _exact(muc, sigma, labels):
    n = muc.shape[-1]
    diff = jnp.take_along_axis(muc, labels[..., None], axis=-1) - muc  # mu_y - mu_j, exactly 0 at j = y
    scale = sigma[..., None] if sigma.ndim > 0 else sigma
    ratio = jax.lax.stop_gradient(diff / scale)
    inside = jnp.abs(ratio) <= _CLAMP
    a = jnp.where(inside, jnp.where(inside, diff, 0.0) / scale, jnp.clip(ratio, -_CLAMP, _CLAMP))
    label = jnp.arange(n) == labels[..., None]
    value = _quadrature(a, label)
    # union bound: 1 - value <= sum_j P(eps_j - eps_y > a_j) = sum_j Phi(-a_j / sqrt2);
    # below eps/8 the correctly rounded value is exactly 1
    tail = jnp.sum(jnp.where(label, 0.0, 0.5 * erfc(jax.lax.stop_gradient(a) * 0.5)), axis=-1)
    target = jnp.where(tail < jnp.finfo(muc.dtype).eps / 8, 1.0, jnp.minimum(value, 1.0))
    # set the value (clipped to <= 1: rounding may overshoot by an ulp), keep the derivative
    value = value + jax.lax.stop_gradient(target - value)
    # an out-of-range label (possible only under a trace) gives NaN
    return jnp.where((labels >= 0) & (labels < n), value, jnp.nan)


def exact_accuracy(mu, sigma, labels):
    """EXACT: probability that the label wins ``argmax(mu / sigma + eps)``, ``eps ~ N(0, I)``.

    Catalogue section 2; seed 000 (Su Jianlin, "How to Train Your
    Accuracy?", 2022, on the EXACT paper). With ``a_j = (mu_y - mu_j) / sigma``
    and phi, Phi the standard normal density and CDF::

        exact_accuracy(mu, sigma, y) = P(y = argmax_i (mu_i / sigma + eps_i))
                                     = int phi(z) prod_{j != y} Phi(z + a_j) dz

    computed EXACTLY (deterministic quadrature, no sampling), differentiable
    with respect to ``mu`` and ``sigma`` when it is an array. For two
    classes it is ``Phi((mu_y - mu_j) / (sigma sqrt 2))``; summed over the
    labels it is 1; as ``sigma -> 0`` it tends to ``onehot(argmax mu)``.

    Args:
        mu: floating array of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64 (``jax.Array`` or numpy array). The
            last axis is the class axis.
        sigma: scale ``> 0`` and finite: a Python number, or a real array
            broadcastable to the batch shape ``mu.shape[:-1]``. Its values
            are checked only when concrete: a traced ``sigma`` (under
            ``jax.jit``) is not.
        labels: integer array of shape ``mu.shape[:-1]`` with values in
            ``0..n-1`` (range checked only when concrete; under a trace an
            out-of-range label gives NaN).

    Returns:
        Array of shape ``mu.shape[:-1]`` and dtype ``mu.dtype``. ``n = 1``
        gives exactly 1.

    Method. The integrand ``g(z) = phi(z) prod_j Phi(z + a_j)`` is
    log-concave (phi and Phi are). Its mode ``z0`` (12 Newton steps from
    ``z = 0``) and an interval ``[z_L, z_R]`` with
    ``log g(z_L), log g(z_R) <= log g(z0) - 46`` (5 Newton steps per end) are
    found under ``stop_gradient`` (in ``fori_loop``): the integral does not
    depend on where the nodes are put, so the derivative stays exact. Then
    ``g / g(z0)`` is integrated by an 80-node Gauss-Legendre rule on
    ``[z_L, z_R]`` and multiplied by ``g(z0)`` (in two halves, so that no
    node's term is flushed to zero unless the result is); its derivative is
    ``_quadrature_jvp``.

    Why 80 nodes are enough (float64, ``n <= 100``):

    * Truncation is bounded rigorously by log-concavity: beyond ``z_R``,
      ``g(z) <= g(z_R) exp(-|(log g)'(z_R)| (z - z_R))`` with
      ``|(log g)'(z_R)| >= 46 / (z_R - z0)``, while the mass on ``[z0, z_R]``
      is at least ``g(z0) (z_R - z0) (1 - e^-46) / 46`` (``log g`` lies above
      its chord); so each tail is below ``e^-46 / (1 - e^-46) = 1.1e-20``
      of the integral, 2.1e-20 for both. This holds for any ``z0`` inside,
      so an inexact mode costs nothing but width.
    * Discretisation: ``g`` is entire, so the Gauss-Legendre error decays
      geometrically, like ``rho^(-2N)`` for the largest Bernstein ellipse
      (foci ``z_L``, ``z_R``) on which ``|g|`` stays moderate (Trefethen,
      Approximation Theory and Approximation Practice, Thm 19.3). In the
      standardised variable ``(z - z0) sqrt(c)`` (``c = -(log g)''(z0)``) the
      interval is 2 sqrt(92) = 19.2 wide for a Gaussian and at most 24 wide
      for ``n <= 100`` (many near-tied classes make ``g`` Gumbel-like,
      skewed to the right: the widest case is all classes tied), so ``rho``
      is bounded below independently of ``mu`` and ``sigma``. Measured on
      that worst case (all 100 classes tied, value exactly 1/100): relative
      error 1.7e-6, 6.2e-9, 1.6e-11, 3.4e-14 with 32, 40, 48, 56 nodes, a
      factor of about 2.1 per node, which extrapolates to ~1e-20 at 80
      nodes (all 1000 tied: 9.4e-13 at 56, 3e-15 at 64, rounding at 72);
      in a sweep of 1500 random cases (n <= 100, sigma in [1e-2, 1e2],
      normal, spread +-10, tied and clustered mu) 64 nodes already met the
      rounding floor (those figures are for a drop of 40; all 100 or 1000
      tied still come out within 1 and 3 ulps at 46). 80 nodes keep ~3 orders
      of margin.

    Measured accuracy (check.py; float64 against mpmath at 30 digits,
    ``mpmath.quad`` split at the points ``z = -a_j``; n in {2, 10, 100},
    sigma in {1e-2, 1, 1e2}, mu standard normal and uniform in [-10, 10],
    labels argmax, runner-up and random): values within 5e-14 relative
    (the smallest was 1.5e-136); two classes against ``Phi(a / sqrt 2)``
    within 1.3e-13 relative down to 2.2e-308, 0.16 of the tolerance
    ``16 eps (Phi + |a| density)`` of spec/exact.py. The floor is not the
    quadrature but rounding: ``eps`` times the sensitivity of ``log value``
    to the inputs (``a_j`` carries a rounding error ``eps |a_j|``, which
    moves ``log value`` by ``|a_j| |u_j| eps``, ``u_j = z + a_j`` near the
    mode), ~1e-15 for values of order 1, more for tiny ones. In float32 the
    same holds with float32's eps (1e-5 relative in a sweep of 500 rows with
    n = 20, the float32 inputs' own rounding); float16 and bfloat16 inputs
    are computed in float32 and rounded to their dtype. The derivative (mu and sigma together) is
    within 3e-14 of ``max(|grad|_inf, value / sigma)``: the quadrature's
    error in the derivative is its relative error in the value times the scale
    on which the value varies. Each component is also resolved to its own
    relative accuracy, classes far behind on windows of their own (spec/exact.py,
    "Derivatives"; ``_beyond``); the derivative is 0 for ``a_j > 100``.
    Values below the normal range come out as 0 (XLA flushes subnormals).
    Values are clipped to at most 1 (rounding can overshoot by an ulp), and
    set to exactly 1 where the union bound
    ``1 - value <= sum_j Phi(-a_j / sqrt2)`` is below ``eps / 8`` (so the
    ``sigma -> 0`` limit ``onehot(argmax mu)`` comes out exactly); both
    without touching the derivative.

    Cost: per row about 135 vectors of ``n`` evaluations of ``log Phi`` or
    of the Mills ratio (80 for the nodes, the rest for the Newton steps);
    memory ``O(batch * n * 80)``, and per class that cannot compete as much again
    (see above).

    Stability: ``log Phi(u)`` is ``log(erfc(-u/sqrt2) / 2)`` below 0, a
    12-term asymptotic series below -20 (-10 in float32), and
    ``log1p(-erfc(u/sqrt2) / 2)`` above 0; its absolute error is within
    ``3.3 eps max(1, u^2)`` of mpmath (``eps u^2`` is inherent: the rounding
    of ``u``). Not ``jax.scipy.special.log_ndtr``, whose order-3 asymptotic
    series errs by up to 3.6e-9 near -20 in float64, nor
    ``jax.scipy.special.erfcx``, which returns 0 where erfc underflows
    (x in [9.19, 9.42] in float32, [26.54, 26.64] in float64). The terms are
    summed in log space and exponentiated per node, so neither the tails
    nor tiny results cancel; the derivative of ``log Phi``, and the Newton
    steps, use the inverse Mills ratio ``phi / Phi`` (``-u / series`` in the
    far tail). Entries with ``|a_j| > 100`` are clamped to ``+-100`` (with
    zero derivative, through a double ``where``, so ``sigma`` near underflow
    or ``mu_j = -inf`` gives no ``inf * 0``): this changes nothing in
    float64 or float32, since
    ``a_j < -100`` already makes the value ``< Phi(-70) = 0`` and for
    ``a_j > 100`` the factor ``Phi(z + a_j)`` is 1 to far below ``eps`` wherever
    ``g`` is representable. An entry ``mu_j = -inf`` (``j != y``) is thus a
    masked class.

    Raises:
        ValueError: ``mu`` not a floating array, 0-d or with an empty last
            axis; ``sigma`` not > 0 and finite (when concrete), not real, or
            not broadcastable to ``mu.shape[:-1]``; ``labels`` not an integer
            array of shape ``mu.shape[:-1]`` or (when concrete) outside
            ``0..n-1``.
    """
    mu, muc = floating(mu, "mu", axis="class")
    batch, n = muc.shape[:-1], muc.shape[-1]
    labels = class_labels(labels, "labels", mu, "mu")
    sigma = _check_sigma(sigma, batch, muc.dtype)
    if n == 1:
        first = muc[..., 0]
        # exactly 1, connected to mu with a zero (never NaN) derivative
        return (1.0 + 0.0 * jnp.where(jnp.isfinite(first), first, 0.0)).astype(mu.dtype)
    return _exact(muc, sigma, labels).astype(mu.dtype)
