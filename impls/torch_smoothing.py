"""Smoothing primitives in PyTorch (catalogue section 1, seed 004).

Seed 004 is Su Jianlin, "On Function Smoothing" (2019): ``logsumexp`` is the
smooth maximum, ``softmax`` the smooth one-hot of the arg-max, ``soft_argmax``
the smooth arg-max index, and ``soft_topk`` the seed's recursive smooth
top-k indicator ("soft-k-max").

Conventions shared by every function here:

* ``x`` is a floating-point ``torch.Tensor`` with at least one dimension; the
  LAST axis is the class axis and all leading axes are batch axes.
* ``k > 0`` is the sharpness (inverse temperature): a Python number, a numpy
  scalar or a 0-d tensor. Larger ``k`` is closer to the hard operation.
* float16 and bfloat16 are computed internally in float32; the result is cast
  back, so the output dtype is always the input dtype. Everything is computed
  on ``x.device``.
* Masking: an entry ``x_i = -inf`` contributes nothing (``softmax`` is 0
  there, and so is every gradient there). A row that is entirely ``-inf``
  gives ``logsumexp = -inf``, ``softmax = 0`` and ``soft_argmax = 0``, each
  with a gradient of exactly 0 (``torch.logsumexp`` gives NaN there).
* ``+inf`` and NaN inputs are outside the domain.

Stability. With ``m = max_i x_i`` the identities

    logsumexp(x, k) = m + (1/k) log sum_i exp(k (x_i - m))
    softmax(x, k)_i = exp(k (x_i - m)) / sum_j exp(k (x_j - m))

hold for ANY constant ``m``, so their derivative with respect to ``m`` is
zero and ``m`` may be detached from the graph: the gradient stays exact. The
exponents ``z_i = k (x_i - m)`` are <= 0, so nothing overflows; ``k x`` is
never formed (it overflows for large ``k`` or ``|x|``). ``x - m`` itself can
overflow (``x = -3e38``, ``m = 3e38`` in float32), so it is formed as
``x/2 - m/2`` and multiplied by ``2k`` (halving only changes the exponent;
for subnormal numbers its rounding is far below that of the result). A
row maximum of ``-inf`` (an all ``-inf`` row) is replaced by 0 and the result
selected afterwards (a NaN or ``+inf`` maximum is kept: the row's results are
NaN, never a finite number or the empty row's value; NaN in, NaN out), and ``-inf`` entries get the exponent ``-inf`` through a
second ``where`` ("double where"), so that no ``inf * 0`` reaches the
backward pass.

Range of ``k``: ``k`` is rounded to the compute dtype. Below the smallest
normal number of that dtype (1.2e-38 in float32, 2.2e-308 in float64) the
results lose accuracy, and the gradient of ``logsumexp`` overflows once
``1/k`` does (``k < 2.9e-39`` in float32, ``k < 5.6e-309`` in float64).
"""

from __future__ import annotations

import math
import numbers

import torch

from ._torch_checks import floating, positive_scalar
from ._torch_rows import first_argmax, softmax_rows

__all__ = ["logsumexp", "softmax", "soft_argmax", "soft_topk"]


def _check_topk(topk, n: int) -> int:
    if isinstance(topk, bool) or not isinstance(topk, numbers.Integral):
        raise ValueError(f"topk must be an int, got {type(topk).__name__}")
    topk = int(topk)
    if not 1 <= topk <= n:
        raise ValueError(f"topk must satisfy 1 <= topk <= {n} (size of the last axis), got {topk}")
    return topk


def _exponents(x: torch.Tensor, k):
    """Return ``z = k (x - m)`` (<= 0), the safe row max ``m`` and its finiteness.

    ``m`` is the detached row maximum, replaced by 0 where it is ``-inf``
    (all ``-inf`` rows), all with ``keepdim=True``; "finiteness" is that of
    the row (an entry above ``-inf``): a NaN or ``+inf`` maximum stays and
    makes the row's results NaN.
    """
    m = torch.amax(x, dim=-1, keepdim=True).detach()
    finite = m != -math.inf  # a row with an entry above -inf; a NaN or +inf maximum stays, and gives NaN
    m = torch.where(finite, m, torch.zeros_like(m))
    # x/2 - m/2 never overflows, unlike x - m; (2k)(x/2 - m/2) == k(x - m).
    half_diff = x * 0.5 - m * 0.5
    masked = half_diff == -math.inf
    # double where: masked entries get exponent -inf without -inf ever being
    # multiplied by k (whose backward would give 0 * inf = NaN w.r.t. a tensor k)
    z = torch.where(masked, -math.inf, torch.where(masked, 0.0, half_diff) * (2 * k))
    return z, m, finite


class _Softmax(torch.autograd.Function):
    """``softmax(x, k)`` for a number ``k > 0``, in torch's fused softmax kernel each way.

    Forward: ``torch.softmax(z)`` of the exponents ``z = k (x - m)`` with the row maximum ``m``,
    whose largest entry is exactly 0, so that the kernel computes the same ``exp(z) / sum exp(z)``
    as :func:`_softmax_composite`.  ``x - m`` is exact or ``-inf`` (``m >= x``): for ``k >= 1``
    an overflow to ``-inf`` is the right exponent, and ``k (x - m)`` is formed directly (for
    ``k = 1`` the kernel shifts by ``m`` itself); below 1 the difference is halved first, as in
    :func:`_exponents`, since ``k`` may bring a span beyond the dtype's range back into it.  All
    ``-inf`` rows (the kernel's ``-inf - -inf``) become 0; a NaN or ``+inf`` entry stays NaN.
    Backward: ``k p (g - sum_j g_j p_j)``, torch's fused softmax backward."""

    @staticmethod
    def forward(ctx, x, k):
        z = x if k == 1 else _row_exponents(x, k)[0]  # (the kernel shifts by the maximum itself)
        p = softmax_rows(z)  # (z is -inf exactly where x is)
        ctx.save_for_backward(p)
        ctx.k = k
        return p

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        gx = torch._softmax_backward_data(g.contiguous(), p, -1, p.dtype)
        return (gx if ctx.k == 1 else gx.mul_(ctx.k)), None


def _softmax_composite(x: torch.Tensor, k) -> torch.Tensor:
    z, _, finite = _exponents(x, k)
    e = torch.exp(z)
    s = e.sum(dim=-1, keepdim=True)
    # s >= 1 on rows with a finite maximum; an all -inf row has s = 0 and e = 0
    return e / torch.where(finite, s, torch.ones_like(s))


def _softmax(x: torch.Tensor, k) -> torch.Tensor:
    """``softmax(x, k)`` over the last axis, max-shifted (see :func:`softmax`); one fused kernel
    each way for a number ``k``, the composite (differentiable in ``k`` too) for a tensor ``k``."""
    if isinstance(k, torch.Tensor):
        return _softmax_composite(x, k)
    return _Softmax.apply(x, k)


def _softmax_and_complement(y: torch.Tensor, k):
    """``q = softmax(y, k)`` and ``1 - q``, the latter accurate where q is near 1.

    Where ``q > 1/2`` (the unique maximum) ``1 - q`` is the sum of the other
    exponentials over the sum of all, instead of the cancelling ``1 - q``.
    No masking.
    """
    z, m, _ = _exponents(y, k)
    e = torch.exp(z)
    s = e.sum(dim=-1, keepdim=True)
    others = torch.where(y == m, torch.zeros_like(e), e).sum(dim=-1, keepdim=True)
    q = e / s
    return q, torch.where(q > 0.5, others / s, 1 - q)


def logsumexp(x: torch.Tensor, k=1.0) -> torch.Tensor:
    """Smooth maximum ``(1/k) log sum_i exp(k x_i)`` over the last axis.

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019). ``max(x) <= logsumexp(x, k) <= max(x) + log(n)/k`` and it tends to
    ``max(x)`` as ``k -> inf``; its gradient is ``softmax(x, k)``.

    Args:
        x: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device.
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d tensor). A 0-d tensor on a non-CPU device is not validated
            (reading it would force a device synchronisation).

    Returns:
        Tensor of shape ``x.shape[:-1]`` and dtype ``x.dtype``.

    Masking: entries ``-inf`` contribute nothing; an all ``-inf`` row gives
    ``-inf`` with a zero (not NaN) gradient.

    Stability: with the detached row maximum ``m`` the value is computed as
    ``m + log1p(s') / k``, where ``s' = sum_i exp(k (x_i - m)) - 1`` is summed
    with the ``1`` of a maximal entry removed exactly (``exp(0) - 1 = 0``),
    so that the result stays accurate when it is close to 0. Detaching ``m``
    is exact because the expression does not depend on ``m``; ``k (x - m)``
    is formed as ``2k (x/2 - m/2)`` so that neither ``k x`` nor ``x - m``
    can overflow.

    Raises:
        ValueError: ``x`` not a floating-point tensor or 0-d or with an empty
            last axis; ``k`` not > 0 and finite.
    """
    dtype = floating(x, "x", axis="class")
    k = positive_scalar(k, "k", x.device, dtype)
    xc = x.to(dtype)
    if not isinstance(k, torch.Tensor) and k >= torch.finfo(dtype).tiny:
        n = xc.shape[-1]
        return _LogSumExp.apply(xc.reshape(-1, n), k).reshape(xc.shape[:-1]).to(x.dtype)
    # a tensor k (differentiable too), or one that underflows in the compute dtype: the composite form
    z, m, finite = _exponents(xc, k)
    e = torch.exp(z)
    is_max = (xc == m) & finite
    # s' = sum_i e_i - 1, without the rounding of forming 1 + (small) first:
    # each maximal entry has e_i = 1 exactly; subtract those ones termwise
    # (keeping their gradient) and add back all but one of them.
    s_minus_1 = (e - is_max.to(dtype)).sum(dim=-1) + (is_max.sum(dim=-1, dtype=dtype) - 1)
    finite, m = finite.squeeze(-1), m.squeeze(-1)
    s_minus_1 = torch.where(finite, s_minus_1, torch.zeros_like(s_minus_1))
    # k can underflow to 0 in the compute dtype (k < 1.4e-45 in float32);
    # then log1p(s') / k must be 0 for s' = 0, not 0 / 0 = NaN.
    k = k * torch.ones_like(s_minus_1)
    k = torch.where((k == 0) & (s_minus_1 == 0), torch.ones_like(k), k)
    out = torch.where(finite, m + torch.log1p(s_minus_1) / k, -math.inf)
    return out.to(x.dtype)


def _row_exponents(x: torch.Tensor, k: float):
    """``(z, m, finite)`` as :func:`_exponents` for a number ``k`` (``m`` not detached: callers
    run without autograd): ``x - m`` is exact or ``-inf`` (``m >= x``), the right exponent for
    ``k >= 1``, so it is formed directly; below 1 the halved difference of :func:`_exponents`."""
    if k < 1:
        return _exponents(x, k)
    m = torch.amax(x, dim=-1, keepdim=True)
    finite = m != -math.inf
    m.masked_fill_(~finite, 0.0)  # an all -inf row: exponents -inf, not NaN
    z = x - m
    return (z if k == 1 else z.mul_(k)), m, finite


class _LogSumExp(torch.autograd.Function):
    """``logsumexp(x, k)`` of the rows of the 2-d ``x`` for a number ``k``: ``m + log1p(s') / k``
    with ``s' = sum_{i != p} e_i``, ``e_i = exp(k (x_i - m))`` and ``p`` a maximal entry (its
    ``e_p = 1`` left out exactly, ties counted in ``s'``): the form of :func:`logsumexp`'s
    docstring in a few passes.  Backward ``g e / (1 + s')`` (the softmax) from the saved
    exponentials, 0 on all ``-inf`` rows."""

    @staticmethod
    def forward(ctx, x, k):
        z, m, finite = _row_exponents(x, k)
        e = z.exp_()  # (z is a new tensor: x - m, or _exponents')
        idx = first_argmax(x)
        e.scatter_(1, idx, torch.zeros_like(m))  # e_p = exp(0) = 1, left out exactly
        s1 = e.sum(dim=-1, keepdim=True)
        ctx.save_for_backward(e, idx, s1, finite)
        out = torch.log1p(s1)
        out = (out if k == 1 else out.div_(k)).add_(m)
        return torch.where(finite, out, -math.inf).squeeze(-1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        e, idx, s1, finite = ctx.saved_tensors
        p = e.scatter(1, idx, finite.to(e.dtype))  # e_p = 1 back (0 on an all -inf row: no mass)
        return p.mul_((g.unsqueeze(-1) / (1 + s1)).masked_fill_(~finite, 0.0)), None


def softmax(x: torch.Tensor, k=1.0) -> torch.Tensor:
    """Smooth one-hot arg-max ``exp(k x_i) / sum_j exp(k x_j)`` over the last axis.

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019). Sums to 1 over the last axis (for a row with a finite entry), is
    invariant under ``x -> x + c``, and tends to ``onehot(argmax x)`` as
    ``k -> inf`` for a unique maximum.

    Args:
        x: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device.
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d tensor; a non-CPU 0-d tensor is not validated, to avoid a
            device synchronisation).

    Returns:
        Tensor of the shape and dtype of ``x``.

    Masking: 0 at entries ``-inf`` (with zero gradient there); an all
    ``-inf`` row gives all zeros with a zero gradient.

    Stability: ``exp(k (x_i - m)) / sum_j exp(k (x_j - m))`` with the
    detached row maximum ``m``; exact because the ratio does not depend on
    ``m``. ``k (x - m)`` is formed as ``2k (x/2 - m/2)``, so that neither
    ``k x`` nor ``x - m`` can overflow; an all ``-inf`` row divides by 1
    instead of 0.

    Raises:
        ValueError: ``x`` not a floating-point tensor or 0-d or with an empty
            last axis; ``k`` not > 0 and finite.
    """
    dtype = floating(x, "x", axis="class")
    k = positive_scalar(k, "k", x.device, dtype)
    return _softmax(x.to(dtype), k).to(x.dtype)


def soft_argmax(x: torch.Tensor, k=1.0) -> torch.Tensor:
    """Smooth arg-max index ``sum_i i * softmax(x, k)_i`` (0-based) over the last axis.

    Catalogue section 1; seed 004 (Su Jianlin, "On Function Smoothing",
    2019). Lies in ``[0, n - 1]`` and tends to ``argmax(x)`` as ``k -> inf``
    for a unique maximum.

    Args:
        x: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device.
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d tensor; a non-CPU 0-d tensor is not validated).

    Returns:
        Tensor of shape ``x.shape[:-1]`` and dtype ``x.dtype``.

    Masking: entries ``-inf`` get weight 0; an all ``-inf`` row gives 0 with a
    zero gradient.

    Stability: uses the same max-shifted, overflow-free ``softmax`` (see
    :func:`softmax`), and a weighted sum rather than a matrix product (which
    may run in reduced precision, e.g. TF32, on GPUs).

    Raises:
        ValueError: ``x`` not a floating-point tensor or 0-d or with an empty
            last axis; ``k`` not > 0 and finite.
    """
    dtype = floating(x, "x", axis="class")
    k = positive_scalar(k, "k", x.device, dtype)
    p = _softmax(x.to(dtype), k)
    index = torch.arange(x.shape[-1], device=x.device, dtype=dtype)
    return (p * index).sum(dim=-1).to(x.dtype)


def soft_topk(x: torch.Tensor, topk: int, k=1.0) -> torch.Tensor:
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
    exceed 1 and are not clipped. The gradient flows through ``min(x)`` too
    (the recursion is not shift invariant in general).

    Args:
        x: floating tensor of shape ``(..., n)``, finite entries only;
            float16, bfloat16, float32 or float64, on any device.
        topk: Python int with ``1 <= topk <= n``.
        k: sharpness, ``k > 0`` and finite (Python number, numpy scalar or
            0-d tensor; a non-CPU 0-d tensor is not validated).

    Returns:
        Tensor of the shape and dtype of ``x``, computed in float64 (float32
        on devices without float64): see the gradient note.

    Masking: not supported (finite inputs only; not checked, to avoid a
    device synchronisation).

    Gradient: an iteration whose softmax is exactly one-hot has an exactly
    zero Jacobian and is detached, so that an overflowing adjoint (of size
    ``k |x|``, for ``|x|`` near the dtype's maximum) meets no ``0 * inf``.
    Where the true gradient itself exceeds the dtype's range, or where
    rounding has turned a near-tie into an exact tie while ``k`` times the
    span of ``x`` is beyond the dtype's range, it can be ``±inf``, never NaN:
    adjoints that overflow with both signs would meet as ``inf - inf``, so
    where the backward pass gives NaN, its entries come from a second one
    that carries each adjoint with a per-row binary exponent of its own
    (``_SoftTopk``, ``_soft_topk_vjp_wide``). First-order only, and not
    under ``torch.func`` transforms.

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
        ValueError: ``x`` not a floating-point tensor or 0-d or with an empty
            last axis; ``topk`` not an int in ``1..n``; ``k`` not > 0 and
            finite.
    """
    floating(x, "x", axis="class")
    topk = _check_topk(topk, x.shape[-1])
    # Computed in float64 whatever the input dtype (where the device has it):
    # the derivative grows like (k span(x))^topk and leaves float32's range
    # already at k span(x) ~ 1e13 for topk = 3, where an overflowing adjoint
    # meeting a zero factor gives inf * 0 = NaN (x = [0, 0, -9.4e20, 0],
    # topk = 3 in float32). In float64 it stays finite for every float32
    # input up to topk = 4, and the true derivative rounds to +-inf on the
    # way back to float32.
    dtype = torch.float64 if x.device.type != "mps" else torch.float32
    k = positive_scalar(k, "k", x.device, dtype)
    xc = x.to(dtype)
    if torch.is_grad_enabled() and xc.requires_grad:
        return _SoftTopk.apply(xc, topk, k).to(x.dtype)
    return _soft_topk(xc, topk, k).to(x.dtype)


class _SoftTopk(torch.autograd.Function):
    """:func:`_soft_topk` with a backward pass that cannot meet ``inf - inf``.

    Near a tie at a span of ``x`` near the dtype's range, the adjoints of the
    recursion's intermediates overflow with both signs although their sum may
    be finite, and the reverse pass gives NaN. The backward pass is therefore
    also run by :func:`_soft_topk_vjp_wide`, which carries every adjoint as a
    bounded mantissa times ``2^E`` with a per-row exponent ``E`` and rounds
    to the dtype only at the end: ``±inf`` where the gradient exceeds the
    range, a finite number where it does not, never NaN. That result replaces
    NaN entries only. On the CPU the second pass runs only where the first
    gives a NaN (forward+backward at 4096 x 1000 float32, topk = 5: 2.3-3.0 s
    -> 1.5-1.75 s); on an accelerator both always run (no data-dependent
    branch, no device synchronisation). First-order only (``once_differentiable``); a
    tensor ``k`` that requires grad gets its gradient from the first pass.
    """

    @staticmethod
    def forward(ctx, xc, topk, k):
        steps = []
        with torch.enable_grad():
            xd = xc.detach().requires_grad_(True)
            kd = k.detach().requires_grad_(True) if torch.is_tensor(k) and k.requires_grad else None
            p = _soft_topk(xd, topk, k if kd is None else kd, steps)
        ctx.graph = (xd, kd, p, k, steps)
        return p.detach()

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, w):
        xd, kd, p, k, steps = ctx.graph
        g, *gk = torch.autograd.grad(p, [xd] + ([] if kd is None else [kd]), w, retain_graph=True)  # freed with ctx
        nan = torch.isnan(g)
        if g.device.type == "cpu" and not nan.any():  # on an accelerator both passes run: no synchronisation
            return g, None, (gk[0] if gk else None)
        wide = _soft_topk_vjp_wide(xd.detach(), k, steps, w)
        return torch.where(nan, wide, g), None, (gk[0] if gk else None)


_NO_EXPONENT = -1e6  # the exponent of an all-zero row: below any other, and 2^it is 0


def _times_pow2(m, e, limit):
    """``m * 2^e`` for integral ``e`` (a float tensor), clamped to ``|e| <= 2 limit``.

    In two factors of at most ``2^limit`` each, so that neither overflows or
    is subnormal (some backends flush those to zero): exact unless the product
    itself overflows (``±inf``) or underflows.
    """
    e = e.clamp(-2 * limit, 2 * limit)
    half = torch.floor(e * 0.5)
    return m * torch.exp2(half) * torch.exp2(e - half)


def _exponent(v):
    """``floor(log2 |v|)``, and 0 where ``v`` is 0 or not finite."""
    ok = (v != 0) & torch.isfinite(v)
    return torch.where(ok, torch.floor(torch.log2(torch.where(ok, v.abs(), torch.ones_like(v)))), torch.zeros_like(v))


def _normalised(m, e, limit):
    """``(m', e')`` with ``m' 2^e' == m 2^e`` and each row's largest ``|m'|`` in [1, 2)."""
    top = _exponent(m.abs().amax(dim=-1, keepdim=True))
    nonzero = (m != 0).any(dim=-1, keepdim=True)
    return _times_pow2(m, -top, limit), torch.where(nonzero, e + top, torch.full_like(e, _NO_EXPONENT))


def _plus(m1, e1, m2, e2, limit):
    """``m1 2^e1 + m2 2^e2``, normalised; the smaller term is rounded at the larger one's exponent."""
    e = torch.maximum(e1, e2)
    return _normalised(_times_pow2(m1, e1 - e, limit) + _times_pow2(m2, e2 - e, limit), e, limit)


def _soft_topk_vjp_wide(xc, k, steps, w):
    """The gradient of :func:`_soft_topk` in ``x`` for cotangent ``w``, in an unbounded exponent range.

    The reverse pass of the recursion (``z = 2k c h`` up to a per-row shift,
    ``q = softmax(z)``, ``p += q``, ``c = 1 - p``, ``h = x/2 - min(x)/2``),
    pass by pass from the last::

        a_z    = q (a_p - <a_p, q>)     (at q > 1/2: a_p (1 - q) - sum_{j != i} a_p,j q_j)
        a_x   += k c a_z                (through h's own entry)
        a_min += -k sum(c a_z)          (frame t = 0), or k sum(p a_z) (frame t = min(x)/2)
        a_p   -= 2k h a_z               (the adjoint of p before the pass)

    and ``a_min`` shared among the tied minima of ``x`` at the end. The two
    forms of ``a_min`` are equal as ``sum(a_z) = 0``; each pass uses the
    forward pass's frame, where its factor (``c`` or ``p``) is small at the
    entries that dominate ``a_z``. Each adjoint is carried as ``M 2^E``:
    ``M`` with its row maximum in [1, 2), ``E`` per row (a float tensor of
    integers), and ``2k`` and ``h`` are scaled by powers of two, so nothing
    overflows however large ``k h`` or the adjoints are. The result is
    rounded to ``xc``'s dtype at the end: ``±inf`` with a definite sign where
    it exceeds the range, never NaN. ``steps`` holds each pass's
    ``(q, 1 - q, c, p, shifted)`` from the forward pass.
    """
    limit = 1000 if xc.dtype == torch.float64 else 120  # 2^limit: far inside the normal range
    lowest = torch.amin(xc, dim=-1, keepdim=True)
    h = xc * 0.5 - lowest * 0.5
    eh = _exponent(h.amax(dim=-1, keepdim=True))
    hn = _times_pow2(h, -eh, limit)  # h = hn 2^eh, |hn| < 2
    two_k = torch.as_tensor(2 * k, dtype=xc.dtype, device=xc.device).detach()
    ek = _exponent(two_k)
    kn = _times_pow2(two_k, -ek, limit)  # 2k = kn 2^ek, 1 <= kn < 2
    mp, ep = _normalised(w, torch.zeros_like(w[..., :1]), limit)
    mx, ex = torch.zeros_like(w), torch.full_like(ep, _NO_EXPONENT)
    mm, em = torch.zeros_like(ep), torch.full_like(ep, _NO_EXPONENT)
    for q, q_complement, c, p, shifted in reversed(steps):
        big = q > 0.5  # at most one per row
        others = torch.where(big, torch.zeros_like(q), mp * q).sum(dim=-1, keepdim=True)
        inner = (mp * q).sum(dim=-1, keepdim=True)
        az = q * torch.where(big, mp * q_complement - others, mp - inner)  # at exponent ep
        to_min = torch.where(shifted, (p * az).sum(dim=-1, keepdim=True), -(c * az).sum(dim=-1, keepdim=True))
        mx, ex = _plus(mx, ex, kn * c * az, ep + ek - 1, limit)
        mm, em = _plus(mm, em, kn * to_min, ep + ek - 1, limit)
        mp, ep = _plus(mp, ep, -(kn * hn) * az, ep + ek + eh, limit)
    ties = (xc == lowest).to(xc.dtype)
    mx, ex = _plus(mx, ex, ties / ties.sum(dim=-1, keepdim=True) * mm, em, limit)
    e = _exponent(mx)
    return _times_pow2(_times_pow2(mx, -e, limit), e + ex, limit)


def _soft_topk(xc, topk, k, steps=None):
    """The recursion of :func:`soft_topk` on ``xc`` in its compute dtype.

    When a list ``steps`` is given, each pass appends ``(q, 1 - q, c, p,
    shifted)`` (detached; ``c = 1 - p`` and ``p`` before the pass,
    ``shifted`` per row: the frame ``t = min(x)/2``) for
    :func:`_soft_topk_vjp_wide`.
    """
    # softmax((1 - p)(x - min x), k) == softmax(y/2 + t, 2k) for any per-row t.
    # With h = x/2 - min(x)/2 and c = 1 - p (carried as its own variable: from
    # p it would lose everything below eps), y/2 = c h is accurate where p is
    # near 1, and y/2 + min(x)/2 = x/2 - p h is accurate where p is near 0
    # (exact at p = 0, all entries in the first pass). Each pass uses the
    # frame (t = 0 or t = min(x)/2) that is accurate at the row's maximum,
    # which is all that softmax resolves; halving keeps everything finite.
    half = xc * 0.5
    half_min = torch.amin(xc, dim=-1, keepdim=True) * 0.5
    h = half - half_min
    p = torch.zeros_like(xc)
    c = torch.ones_like(xc)
    for _ in range(topk):
        chosen = p >= 0.5
        shifted = torch.where(chosen, half_min + c * h, half - p * h)  # t = min(x)/2
        unshifted = torch.where(chosen, c * h, shifted - half_min)  # t = 0
        with torch.no_grad():
            top_chosen = torch.where(chosen, unshifted, -math.inf).amax(dim=-1, keepdim=True)
            top_other = torch.where(chosen, -math.inf, unshifted).amax(dim=-1, keepdim=True)
        frame_shifted = top_chosen < top_other
        y = torch.where(frame_shifted, shifted, unshifted)
        q, q_complement = _softmax_and_complement(y, 2 * k)
        # An exactly one-hot q has an exactly zero Jacobian; detaching it there
        # changes no gradient but keeps an overflowing adjoint (k h is huge
        # when |x| is) from meeting that zero as inf * 0 = NaN.
        if q.requires_grad:  # (without a graph to record, the detaching would change nothing)
            one_hot = (q > 0).sum(dim=-1, keepdim=True) == 1
            q = torch.where(one_hot, q.detach(), q)
            q_complement = torch.where(one_hot, q_complement.detach(), q_complement)
        if steps is not None:
            steps.append((q.detach(), q_complement.detach(), c.detach(), p.detach(), frame_shifted))
        # 1 - (p + q): as (1 - q) - p where q > 1/2, else as c - q
        c = torch.where(q > 0.5, q_complement - p, c - q)
        p = p + q
    return p
