"""EXACT, the expected accuracy of a Gaussian arg-max, in PyTorch (catalogue section 2, seed 000).

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
the output dtype is the input dtype. Everything runs on ``mu.device``.
"""

from __future__ import annotations

import math

import torch

from ._torch_checks import class_labels, floating, positive_scalar

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
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2)


def _check_sigma(sigma, batch: torch.Size, device, dtype):
    """Validate ``sigma``; return a Python float or a tensor of ``dtype`` on ``device``.

    A tensor broadcasts against ``batch``; a non-CPU tensor's values are not
    inspected (that would force a device synchronisation), its shape is. A
    number (or 0-d numpy array) is checked by ``positive_scalar``.
    """
    if isinstance(sigma, torch.Tensor):
        if sigma.dtype == torch.bool or sigma.is_complex():
            raise ValueError(f"sigma must be real, got dtype {sigma.dtype}")
        try:
            shape = torch.broadcast_shapes(sigma.shape, batch)
        except RuntimeError:
            shape = None
        if shape != batch:
            raise ValueError(
                f"sigma must broadcast against the batch shape mu.shape[:-1] = {tuple(batch)}, "
                f"got shape {tuple(sigma.shape)}"
            )
        if sigma.device.type == "cpu" and sigma.numel() > 0:
            s = sigma.detach().double()
            if not bool(torch.all(torch.isfinite(s) & (s > 0))):
                raise ValueError(f"sigma must be > 0 and finite, got min {float(s.min())}, max {float(s.max())}")
        return sigma.to(device=device, dtype=dtype)
    return positive_scalar(sigma, "sigma", device, dtype)


def _mills(u: torch.Tensor) -> torch.Tensor:
    """Inverse Mills ratio phi(u) / Phi(u), without cancellation or overflow.

    For u < 0 it is sqrt(2/pi) / erfcx(-u/sqrt2) (erfcx(x) = exp(x^2) erfc(x)),
    which stays accurate far into the lower tail; for u >= 0, Phi(u) >= 1/2.
    """
    neg = u < 0
    un = torch.where(neg, u, -1.0)
    up = torch.where(neg, 0.0, u)
    lower = _SQRT_2_OVER_PI / torch.special.erfcx(-un * _INV_SQRT2)
    upper = torch.exp(-0.5 * up * up) * _INV_SQRT_2PI / torch.special.ndtr(up)
    return torch.where(neg, lower, upper)


def _log_g(z: torch.Tensor, a: torch.Tensor, label: torch.Tensor, dens=None) -> torch.Tensor:
    """log of the integrand, log phi(z) + sum_{j != y} log Phi(z + a_j).

    ``z`` (..., m), ``a`` and ``label`` (..., n) (``label`` marks the class
    y, whose factor is omitted); returns (..., m). ``dens`` (..., n), when
    given, marks one class j whose factor is the density phi(z + a_j)
    instead: the integrand of d value / d a_j. ``torch.special.log_ndtr``
    uses erfcx below 0, so the lower tail of log Phi does not cancel.
    """
    u = z[..., :, None] + a[..., None, :]
    lp = torch.special.log_ndtr(u)
    if dens is not None:
        lp = torch.where(dens[..., None, :], -0.5 * u * u - _LOG_SQRT_2PI, lp)
    lp = torch.where(label[..., None, :], 0.0, lp)
    return -0.5 * z * z - _LOG_SQRT_2PI + lp.sum(dim=-1)


def _slope(z: torch.Tensor, a: torch.Tensor, label: torch.Tensor, dens=None):
    """(log g)' at ``z`` (..., m) and -(log g)'' - 1 (the factors' share of the curvature)."""
    u = z[..., :, None] + a[..., None, :]
    lam = _mills(u)  # (log Phi)' = phi / Phi, and -(log Phi)'' = lam (u + lam)
    curv = lam * (u + lam)
    if dens is not None:  # (log phi)'(u) = -u, -(log phi)'' = 1
        lam = torch.where(dens[..., None, :], -u, lam)
        curv = torch.where(dens[..., None, :], 1.0, curv)
    lam = torch.where(label[..., None, :], 0.0, lam)
    curv = torch.where(label[..., None, :], 0.0, curv)
    return -z + lam.sum(dim=-1), curv.sum(dim=-1)


@torch.no_grad()
def _interval(a: torch.Tensor, label: torch.Tensor, dens=None, start=None):
    """Centre and half-width of [z_L, z_R], where log g <= log g(z0) - _DROP, and log g(z0).

    ``a`` (..., n) detached. Newton's method for the mode starts at ``start``
    (..., 1) (z = 0 for the value), where (log g)' > 0; (log g)' is convex
    and decreasing (the inverse Mills ratio is convex), so the iterates
    increase monotonically to the mode. Each end starts one Gaussian width
    sqrt(2 _DROP / c) away (c the curvature at z0) and takes Newton steps on
    log g(z) = log g(z0) - _DROP; by concavity the iterates approach the end
    from outside (after at most one step from inside), so every iterate is a
    valid end. ``dens``: as in :func:`_log_g`.
    """
    z = torch.zeros(a.shape[:-1], dtype=a.dtype, device=a.device)[..., None] if start is None else start
    for _ in range(_MODE_STEPS):
        d1, curv = _slope(z, a, label, dens)
        z = z - d1 / torch.clamp(-1.0 - curv, max=-1.0)
    curvature = torch.clamp(1.0 + _slope(z, a, label, dens)[1], min=1.0)
    target = _log_g(z, a, label, dens) - _DROP
    width = torch.sqrt(2 * _DROP / curvature)
    ends = torch.cat([z - width, z + width], dim=-1)  # (..., 2)
    tiny = torch.finfo(a.dtype).tiny
    for _ in range(_END_STEPS):
        d1, _ = _slope(ends, a, label, dens)
        # (log g)' > 0 left of the mode, < 0 right of it; the clamp only
        # guards against a zero denominator
        d1 = torch.stack([d1[..., 0].clamp(min=tiny), d1[..., 1].clamp(max=-tiny)], dim=-1)
        ends = ends - (_log_g(ends, a, label, dens) - target) / d1
    return (ends[..., 0] + ends[..., 1]) * 0.5, (ends[..., 1] - ends[..., 0]) * 0.5, target[..., 0] + _DROP


def _nodes(centre, half, dtype, device):
    x = torch.tensor(_GL_X, dtype=dtype, device=device)
    w = torch.tensor(_GL_W, dtype=dtype, device=device)
    return centre[..., None] + half[..., None] * x, w


def _times_peak(scaled, peak):
    """``scaled * exp(peak)`` in two halves: no factor is subnormal unless the result is."""
    return (scaled * torch.exp(peak * 0.5)) * torch.exp(peak - peak * 0.5)


def _log_mills(u):
    """log(phi(u) / Phi(u)); for the window test only (it cancels to ~eps u^2 for u << 0)."""
    return -0.5 * u * u - _LOG_SQRT_2PI - torch.special.log_ndtr(u)


def _beyond(a, label, centre, half, peak, scaled):
    """The classes j whose derivative integrand ``h_j = g lam_j`` the value's window does not hold.

    ``d value / d a_j = int g(z) lam_j(z) dz`` with ``lam_j = phi(z + a_j) / Phi(z + a_j)``
    (spec: the derivative of ``Phi`` is ``phi``), and ``scaled`` (..., n) is that integral
    over the value's window, divided by ``g(z0)``. ``h_j`` is log-concave, so beyond an end
    where ``s = (log h_j)'`` points inwards its tail is at most ``h_j(end) / |s|``. A class
    is kept on the value's window where both tails are below ``eps / 4`` of ``scaled``;
    otherwise (a class that cannot compete, ``a_j`` >~ 10, whose integrand is a Gaussian
    near ``z = -a_j / 2`` beyond the window's left end) it gets its own.
    """
    ends = torch.stack([centre - half, centre + half], dim=-1)  # (..., 2)
    d1, _ = _slope(ends, a, label)
    log_end = _log_g(ends, a, label) - peak[..., None]  # (..., 2)
    u = ends[..., :, None] + a[..., None, :]  # (..., 2, n)
    lam = _mills(u)
    s = d1[..., :, None] - u - lam  # (log h_j)' = (log g)' + (log lam)'(u), (log lam)' = -u - lam
    log_h = log_end[..., :, None] + _log_mills(u)
    inward = (s[..., 0, :] > 0) & (s[..., 1, :] < 0)
    tiny = torch.finfo(a.dtype).tiny
    log_tail = torch.logaddexp(log_h[..., 0, :] - torch.log(s[..., 0, :].clamp(min=tiny)),
                               log_h[..., 1, :] - torch.log((-s[..., 1, :]).clamp(min=tiny)))
    small = log_tail < torch.log(scaled) + math.log(torch.finfo(a.dtype).eps / 4)
    return ~label & ~(inward & (small | (torch.isinf(log_tail) & (log_tail < 0))))


def _own_windows(a, label, need):
    """``d value / d a_j`` for the (row, class) pairs ``need``, each on a window of its own integrand."""
    flat_a, flat_label = a.reshape(-1, a.shape[-1]), label.reshape(-1, a.shape[-1])
    rows, cols = need.reshape(flat_a.shape).nonzero(as_tuple=True)
    ap, lp = flat_a[rows], flat_label[rows]
    dens = torch.nn.functional.one_hot(cols, a.shape[-1]).bool()
    # (log h_j)' = -2z - a_j + sum_k lam_k > 0 left of -a_j / 2: Newton starts one unit left of it
    centre, half, peak = _interval(ap, lp, dens, start=(-0.5 * ap[torch.arange(len(cols)), cols] - 1.0)[:, None])
    z, w = _nodes(centre, half, a.dtype, a.device)
    scaled = half * (torch.exp(_log_g(z, ap, lp, dens) - peak[:, None]) * w).sum(dim=-1)
    return rows, cols, _times_peak(scaled, peak)


class _Exact(torch.autograd.Function):
    """The quadrature of ``g`` on its window; backward: ``d / d a_j = int phi(z) phi(z + a_j) prod_{k != j} Phi``.

    The derivative integrand of a class that cannot compete lives far from the value's
    window (:func:`_beyond`): those classes are integrated on their own windows.
    """

    @staticmethod
    def forward(ctx, a, label):
        centre, half, peak = _interval(a, label)
        z, w = _nodes(centre, half, a.dtype, a.device)
        log_phi = torch.special.log_ndtr(z[..., :, None] + a[..., None, :])  # (..., m, n)
        log_g = -0.5 * z * z - _LOG_SQRT_2PI + torch.where(label[..., None, :], 0.0, log_phi).sum(dim=-1)
        weights = torch.exp(log_g - peak[..., None]) * w  # g(z_i) w_i / g(z0)
        ctx.save_for_backward(a, label, z, log_phi, weights, centre, half, peak)
        return _times_peak(half * weights.sum(dim=-1), peak)

    @staticmethod
    def backward(ctx, grad):
        a, label, z, log_phi, weights, centre, half, peak = ctx.saved_tensors
        # phi(u) / Phi(u) from the forward's log Phi, as torch's own derivative of log_ndtr does
        # (it cancels to ~eps u^2 relative for u << 0: the rounding of u itself costs as much)
        u = z[..., :, None] + a[..., None, :]
        lam = torch.exp(torch.addcmul(log_phi, u, u, value=0.5).neg_())  # times 1/sqrt(2 pi) below
        # sum_i w_i g(z_i) lam_j(z_i) / g(z0) as one batched (1, m) @ (m, n) product
        scaled = torch.matmul(weights[..., None, :], lam)[..., 0, :] * (half[..., None] * _INV_SQRT_2PI)
        scaled = torch.where(label, 0.0, scaled)  # (..., n), over g(z0)
        g = _times_peak(scaled, peak[..., None])
        need = _beyond(a, label, centre, half, peak, scaled)
        if bool(need.any()):
            rows, cols, own = _own_windows(a, label, need)
            g = g.reshape(-1, a.shape[-1]).index_put((rows, cols), own).reshape(a.shape)
        return grad[..., None] * g, None


def exact_accuracy(mu: torch.Tensor, sigma, labels: torch.Tensor) -> torch.Tensor:
    """EXACT: probability that the label wins ``argmax(mu / sigma + eps)``, ``eps ~ N(0, I)``.

    Catalogue section 2; seed 000 (Su Jianlin, "How to Train Your
    Accuracy?", 2022, on the EXACT paper). With ``a_j = (mu_y - mu_j) / sigma``
    and phi, Phi the standard normal density and CDF::

        exact_accuracy(mu, sigma, y) = P(y = argmax_i (mu_i / sigma + eps_i))
                                     = int phi(z) prod_{j != y} Phi(z + a_j) dz

    computed EXACTLY (deterministic quadrature, no sampling), differentiable
    with respect to ``mu`` and, when it is a tensor, ``sigma``. For two
    classes it is ``Phi((mu_y - mu_j) / (sigma sqrt 2))``; summed over the
    labels it is 1; as ``sigma -> 0`` it tends to ``onehot(argmax mu)``.

    Args:
        mu: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device. The last axis is
            the class axis.
        sigma: scale ``> 0`` and finite: a Python number, a 0-d numpy array,
            or a real tensor broadcastable to the batch shape
            ``mu.shape[:-1]`` (its values are checked only on the CPU: reading
            a device tensor would force a synchronisation).
        labels: integer tensor of shape ``mu.shape[:-1]`` with values in
            ``0..n-1`` (range checked only on the CPU, for the same reason).

    Returns:
        Tensor of shape ``mu.shape[:-1]`` and dtype ``mu.dtype``. ``n = 1``
        gives exactly 1.

    Method. The integrand ``g(z) = phi(z) prod_j Phi(z + a_j)`` is
    log-concave (phi and Phi are). Its mode ``z0`` (12 Newton steps from
    ``z = 0``) and an interval ``[z_L, z_R]`` with
    ``log g(z_L), log g(z_R) <= log g(z0) - 46`` (5 Newton steps per end) are
    found with everything DETACHED: the integral does not depend on where
    the nodes are put, so the gradient stays exact. Then ``g / g(z0)`` is
    integrated by an 80-node Gauss-Legendre rule on ``[z_L, z_R]`` and
    multiplied by ``g(z0)`` (in two halves, so that no node's term is
    subnormal unless the result is); the backward is ``_Exact.backward``.

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
    are computed in float32 and rounded to their dtype. The gradient (mu and sigma together) is
    within 3e-14 of ``max(|grad|_inf, value / sigma)``: the quadrature's
    error in the gradient is its relative error in the value times the scale
    on which the value varies. Each component is also resolved to its own
    relative accuracy, classes far behind on windows of their own (spec/exact.py,
    "Derivatives"; ``_beyond``); the derivative is 0 for ``a_j > 100``.
    Values below the normal range come out as 0 or subnormal. Values are
    clipped to at most 1 (rounding can overshoot by an ulp), and set to
    exactly 1 where the union bound ``1 - value <= sum_j Phi(-a_j / sqrt2)``
    is below ``eps / 8`` (so the ``sigma -> 0`` limit ``onehot(argmax mu)``
    comes out exactly); both without touching the gradient.

    Cost: per row about 135 vectors of ``n`` evaluations of ``log Phi`` or
    of the Mills ratio (80 for the nodes, the rest for the Newton steps);
    memory ``O(batch * n * 80)`` (the log Phi at the nodes, kept for the backward),
    and per class that cannot compete as much again (see above).

    Stability: ``log Phi`` is ``torch.special.log_ndtr`` (erfcx in the lower
    tail, log1p in the upper one; within ``2 eps max(1, u^2)`` of mpmath,
    ``eps u^2`` being inherent in the rounding of ``u``), summed in log
    space and exponentiated per node, so neither the tails nor tiny results
    cancel; the Newton steps use the inverse Mills ratio
    ``sqrt(2/pi) / erfcx(-u/sqrt2)``. Entries with
    ``|a_j| > 100`` are clamped to ``+-100`` (with zero gradient, through a
    double ``where``, so ``sigma`` near underflow or ``mu_j = -inf`` gives no
    ``inf * 0``): this changes nothing in float64 or float32, since
    ``a_j < -100`` already makes the value ``< Phi(-70) = 0`` and for
    ``a_j > 100`` the factor ``Phi(z + a_j)`` is 1 to far below ``eps`` wherever
    ``g`` is representable. An entry ``mu_j = -inf`` (``j != y``) is thus a
    masked class.

    Raises:
        ValueError: ``mu`` not a floating tensor, 0-d or with an empty last
            axis; ``sigma`` not > 0 and finite, not real, or not
            broadcastable to ``mu.shape[:-1]``; ``labels`` not an integer
            tensor of shape ``mu.shape[:-1]`` or (on the CPU) outside
            ``0..n-1``.
    """
    dtype = floating(mu, "mu", axis="class")
    batch, n = mu.shape[:-1], mu.shape[-1]
    labels = class_labels(labels, "labels", mu, "mu")
    sigma = _check_sigma(sigma, batch, mu.device, dtype)
    muc = mu.to(dtype)
    if n == 1:
        first = muc[..., 0]
        # exactly 1, connected to mu with a zero (never NaN) gradient
        return (1.0 + 0.0 * torch.where(torch.isfinite(first), first, 0.0)).to(mu.dtype)
    diff = torch.gather(muc, -1, labels[..., None]) - muc  # mu_y - mu_j, exactly 0 at j = y
    scale = sigma[..., None] if isinstance(sigma, torch.Tensor) else sigma
    with torch.no_grad():
        ratio = diff / scale
        inside = ratio.abs() <= _CLAMP
    a = torch.where(inside, torch.where(inside, diff, 0.0) / scale, ratio.clamp(-_CLAMP, _CLAMP))
    label = torch.arange(n, device=mu.device) == labels[..., None]
    value = _Exact.apply(a, label)
    with torch.no_grad():
        # union bound: 1 - value <= sum_j P(eps_j - eps_y > a_j) = sum_j Phi(-a_j / sqrt2);
        # below eps/8 the correctly rounded value is exactly 1
        tail = torch.where(label, 0.0, 0.5 * torch.special.erfc(a * 0.5)).sum(dim=-1)
        target = torch.where(tail < torch.finfo(dtype).eps / 8, 1.0, torch.clamp(value, max=1.0))
    # set the value (clipped to <= 1: rounding may overshoot by an ulp), keep the gradient
    value = value + (target - value.detach())
    return value.to(mu.dtype)
