"""Multi-label ZLPR loss in PyTorch (catalogue section 3, seed 002).

Seed 002 is Su Jianlin, "A Soft-Label Version of Multi-label 'Softmax +
Cross-Entropy'" (2022; the paper "ZLPR: A Novel Loss for Multi-label
Classification"): the loss

    zlpr(s, t) = log(1 + sum_i (1 - t_i) e^{s_i}) + log(1 + sum_i t_i e^{-s_i})

for soft targets ``t_i`` in [0, 1], which reduces to the hard-label
"softmax + cross-entropy" generalisation at ``t_i`` in {0, 1}, and whose
optimum is ``t_i = sigmoid(2 s_i)`` (``zlpr_probability``).

Conventions shared by every function here:

* Arrays are ``torch.Tensor``; the LAST axis is the label axis and all
  leading axes are batch axes. ``zlpr`` returns the batch shape,
  ``zlpr_probability`` is elementwise.
* float16 and bfloat16 are computed internally in float32 and the result is
  cast back: the output dtype is the dtype of ``scores``.
* Bad input raises ``ValueError`` naming the argument. The check that the
  targets lie in [0, 1] reads the data: it is done for CPU tensors only and
  skipped for tensors on other devices (no device synchronisation).
* ``+inf`` scores and NaN inputs are outside the domain (``s_i = -inf``
  with ``t_i = 0`` is a masked position, see ``zlpr``).

Why not clip-then-log (seed 002, "Implementation Tips"): writing each half
as ``logsumexp([0, s_i + log w_i])`` with ``w_i`` clipped to
``[eps, 1 - eps]`` turns a masked position (``s_i = -1e7``, ``t_i = 0``)
into ``-s_i + log eps ~ 1e7 - 16``, a huge positive exponent: the mask
dominates the loss. Here a zero weight is never logged: its term is
dropped exactly (double ``where``), whatever ``s_i`` is.
"""

from __future__ import annotations

import math

import torch

from ._torch_checks import floating, unit_interval
from ._torch_rows import any_rows, first_argmax

__all__ = ["zlpr", "zlpr_probability"]


def _sum_kept(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Sum of the 2-d ``x`` over its last axis, counting the entries where ``keep``.

    Bit for bit independent of how many other entries there are and where:
    the kept entries are packed, in order, to the front of a zero buffer
    whose length is a power of two (positions from an integer cumsum, which
    is exact), which is then summed by halving (``y[:h] + y[h:]``). A longer
    row only adds halving steps whose upper halves are exactly 0. A row that
    keeps every entry is packed as it is (the same buffer, without the
    cumsum); only rows that drop an entry are packed. No autograd here: the
    caller's backward is closed form (dropped entries have a zero derivative).
    """
    rows, n = x.shape
    size = 1 << (n - 1).bit_length()
    buf = x.new_zeros(rows, size)
    buf[:, :n] = x
    drop = ~keep.all(-1)
    if any_rows(drop):
        r = drop.nonzero().squeeze(1)
        k = keep[r]
        pos = torch.cumsum(k.to(torch.int64), dim=-1) - 1
        pos = torch.where(k, pos, size)  # one spare slot collects the dropped entries
        packed = x.new_zeros(r.numel(), size + 1)
        packed.scatter_(-1, pos, torch.where(k, x[r], torch.zeros((), dtype=x.dtype, device=x.device)))
        buf[r] = packed[:, :size]
    while buf.shape[-1] > 1:
        h = buf.shape[-1] // 2
        buf = buf[:, :h] + buf[:, h:]
    return buf[:, 0]


def _log1p_weighted_sum(a: torch.Tensor, w: torch.Tensor, need_dw: bool):
    """``log(1 + sum_i w_i exp(a_i))`` over the last axis of the 2-d ``a``, ``w`` in [0, 1].

    Returns ``(value, e, dw, s1, inf_row)``: ``e`` and ``dw`` are the
    derivatives of ``s'`` (below) with respect to ``a`` and ``w`` (``dw`` only
    with ``need_dw``, else None), so that the value's are ``e / (1 + s')``
    and ``dw / (1 + s')``; ``inf_row`` marks rows whose value is ``+inf``.

    A logsumexp over ``{0} U {b_i = a_i + log w_i : w_i > 0}``. If the
    largest ``b_p`` is > 0 the pivot ``p`` shifts the exponents, kept as the
    pair ``(a_p, log w_p)``:

        z_i = 2 (a_i/2 - a_p/2) + (log w_i - log w_p),   z_p = 0 exactly,

    so that ``a_i - a_p`` is rounded once relative to itself and not to
    ``|a_p|`` (``a_p + log w_p`` loses ``log w_p`` entirely for huge
    ``|a_p|``); otherwise (``m = 0``, the ``0`` is the largest element)
    ``z_i = a_i + log w_i``. Each ``e^{z_i}`` is multiplied by the constant
    ``r_i / r_p``, ``r = w / exp(log w)``, which undoes the rounding of ``log w``
    (else a relative error of ``|log w|·eps``, 610 eps at ``w = 1e-265``). Value ``m + log1p(s')`` with ``m = b_p`` (or 0)
    and ``s' = e^{-m} + sum_i e^{z_i} - 1``, the ``1`` of the largest
    element removed exactly (``e^{z_p} - 1`` termwise; its derivative is
    still ``e^{z_p} = 1``). The shift is a constant for the derivatives
    (exact). Terms with ``w_i = 0`` contribute ``w_i E_i`` with the constant
    ``E_i = exp(a_i - a_p - log w_p)``: value exactly 0, derivative exactly 0
    with respect to ``a_i`` and the true one-sided ``E_i / (1 + s')`` with
    respect to ``w_i``, taken as 0 where ``E_i`` overflows (masked scores).
    """
    dtype = a.dtype
    zero = torch.zeros((), dtype=dtype, device=a.device)
    pos = w > 0
    valid_a = pos & (a > -math.inf)  # b_i = -inf: e_i = 0, no derivative
    av = torch.where(valid_a, a, zero)
    lw = torch.log(torch.where(valid_a, w, 1.0))
    b = torch.where(valid_a, av + lw, -math.inf)
    bmax = b.amax(dim=-1, keepdim=True)
    inf_row = bmax == math.inf  # a_i = +inf with w_i > 0: the value is +inf
    has_pivot = (bmax > 0) & ~inf_row
    # pivot: the largest b, ties broken towards the largest weight
    idx = first_argmax(torch.where(b == bmax, lw, -math.inf))
    a_p = torch.where(has_pivot, av.gather(-1, idx), zero)
    lw_p = torch.where(has_pivot, lw.gather(-1, idx), zero)
    m = torch.where(has_pivot, bmax, zero)
    valid = valid_a & (b < math.inf)
    half_a_p = a_p * 0.5
    # E_i = exp(a_i - a_p - log w_p) at w_i = 0, where it does not overflow
    big = (a * 0.5 - half_a_p) * 2 - lw_p  # a_i - a_p, +-inf only where the true gap overflows
    ok = (w == 0) & (big < math.log(torch.finfo(dtype).max))
    big_e = torch.where(ok, torch.exp(big), zero)
    z = torch.where(valid, (torch.where(valid, av, zero) * 0.5 - half_a_p) * 2 + (lw - lw_p), -math.inf)
    # log w_i is rounded with an absolute error up to |log w_i|·eps/2, which exp(z) turns into a
    # relative one (610·eps at w = 1e-265): r = w / exp(log w) = e^{-that error} (to eps) puts it
    # back, as a constant (its derivative is 0). The pivot's ratio r/r_p is exactly 1. Weights
    # below the smallest normal number keep r = 1 (exp(log w) is not accurate there), and so does a
    # weight whose exp(log w) came back subnormal and was flushed to 0 (w = 1.2e-38 in float32: w/0).
    ratio = w / torch.exp(lw)
    r = torch.where(valid_a & (w >= torch.finfo(dtype).tiny) & (ratio > 0.5) & (ratio < 2.0), ratio, 1.0)
    r_p = torch.where(has_pivot, r.gather(-1, idx), 1.0)
    e = torch.exp(z).mul_(r / r_p)  # the pivot's e is exactly exp(0)·1 = 1
    be = big_e / r_p
    contrib = torch.where(pos, e, w * be)
    # the pivot's 1 removed exactly: e_p - 1 = 0
    contrib.scatter_(-1, idx, torch.where(has_pivot, zero, contrib.gather(-1, idx)))
    # an entry with a zero value and a zero derivative (e = 0, or w = 0 with E = 0:
    # every masked position) is left out of the sum, which is then bit for bit
    # the sum without it
    keep = torch.where(pos, e != 0, big_e != 0)
    s1 = _sum_kept(contrib, keep) + torch.where(has_pivot, torch.exp(-m), zero).squeeze(-1)
    out = m.squeeze(-1) + torch.log1p(s1)
    out = torch.where(inf_row.squeeze(-1), math.inf, out)
    dw = torch.where(pos, e / torch.where(pos, w, 1.0), be) if need_dw else None
    return out, e, dw, s1, inf_row.squeeze(-1)


class _Zlpr(torch.autograd.Function):
    """``zlpr`` on 2-d ``s`` and ``t`` (compute dtype); returns the rows. The two halves come
    from :func:`_log1p_weighted_sum`; the backward is their closed form, ``g e_i / (1 + s')``
    per half (with respect to ``w``: ``g dw_i / (1 + s')``), 0 for a half whose value is
    ``+inf`` and for a row with a NaN. Not twice differentiable."""

    @staticmethod
    def forward(ctx, s, t):
        need_dw = ctx.needs_input_grad[1]
        out1, e1, dw1, s1_1, inf1 = _log1p_weighted_sum(s, 1 - t, need_dw)
        out2, e2, dw2, s1_2, inf2 = _log1p_weighted_sum(-s, t, need_dw)
        out = out1 + out2
        # NaN in, NaN out: the weighted sums test w > 0 and b == max, which a NaN fails silently
        maybe = torch.isnan(s.sum(-1) + t.sum(-1))  # a row sum is NaN if the row holds a NaN (or inf - inf)
        nan_row = None
        if any_rows(maybe):
            nan_row = torch.isnan(s).any(-1) | torch.isnan(t).any(-1)
            out = torch.where(nan_row, torch.nan, out)
        ctx.save_for_backward(e1, dw1, s1_1, inf1, e2, dw2, s1_2, inf2, nan_row)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        e1, dw1, s1_1, inf1, e2, dw2, s1_2, inf2, nan_row = ctx.saved_tensors
        zero = torch.zeros((), dtype=g.dtype, device=g.device)
        if nan_row is not None:
            g = torch.where(nan_row, zero, g)
        k1 = torch.where(inf1, zero, g / (1 + s1_1)).unsqueeze(-1)
        k2 = torch.where(inf2, zero, g / (1 + s1_2)).unsqueeze(-1)
        gs = gt = None
        if ctx.needs_input_grad[0]:
            gs = (e1 * k1).sub_(e2 * k2)
        if ctx.needs_input_grad[1]:
            gt = (dw2 * k2).sub_(dw1 * k1)
        return gs, gt


def zlpr(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """ZLPR loss ``log(1 + sum_i (1 - t_i) e^{s_i}) + log(1 + sum_i t_i e^{-s_i})`` per sample.

    Catalogue section 3; seed 002 (Su Jianlin, the soft-label multi-label
    "softmax + cross-entropy", i.e. ZLPR). At ``t`` in {0, 1} it is the
    hard-label loss ``log(1 + sum_neg e^{s}) + log(1 + sum_pos e^{-s})``;
    its gradient is seed 002's closed form

        dl/ds_i = -t_i e^{-s_i} / (1 + sum_j t_j e^{-s_j})
                  + (1 - t_i) e^{s_i} / (1 + sum_j (1 - t_j) e^{s_j}),

    which vanishes where ``t_i = sigmoid(2 s_i)`` (see ``zlpr_probability``).

    Args:
        scores: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device.
        targets: floating tensor of the same shape, entries in ``[0, 1]``
            (hard or soft labels); converted to the compute dtype of
            ``scores``. Differentiable.

    Returns:
        Tensor of shape ``scores.shape[:-1]`` and dtype ``scores.dtype``.

    Masking: a term whose weight (``t_i`` or ``1 - t_i``) is exactly 0
    contributes exactly 0, whatever ``s_i`` is (including ``+-inf`` and the
    GlobalPointer-style ``-1e7``). A masked position (``s_i = -1e7`` or
    ``-inf`` with ``t_i = 0``) therefore changes neither the value nor the
    gradient with respect to the other positions, bit for bit (the sums
    over the label axis leave such entries out and use an order that does
    not depend on the row length, on every device), and its own gradient
    (with respect to ``s_i`` and ``t_i``) is exactly 0. The derivative with respect to a
    zero weight is the true one-sided one (e.g. ``e^{-s_i} / (1 + sum t
    e^{-s})`` at ``t_i = 0``) where that is representable, and 0 where it
    is not (at a masked position it would be ``e^{1e7}`` or ``+inf``).
    A score ``-inf`` with ``t_i > 0`` (or ``+inf`` with ``t_i < 1``) gives
    ``+inf``; the half that is infinite then contributes no gradient (never
    NaN), the other half its usual one.

    Stability: each half ``log(1 + sum_i w_i e^{a_i})`` (``a = s, w = 1 - t``
    and ``a = -s, w = t``) is a logsumexp over ``{0}`` and
    ``{a_i + log w_i : w_i > 0}``, shifted by the detached largest element
    ``(a_p, log w_p)``, with exponents formed as
    ``2 (a_i/2 - a_p/2) + (log w_i - log w_p)`` (<= 0 up to rounding, no
    overflow for ``|s|`` up to the dtype's maximum, and ``a_i - a_p`` rounded
    relative to itself, not to ``|a_p|``) and evaluated as ``m + log1p(s')``
    with the maximal element's 1 removed exactly, so small losses keep their
    relative accuracy. Both halves are >= 0: the sum has
    no cancellation. The gradient of each half is a softmax-type ratio
    ``w_i e^{a_i - m} / S``, always finite.

    Raises:
        ValueError: ``scores`` not a floating tensor, 0-d or with an empty
            last axis; ``targets`` not a floating tensor, of another shape,
            or (CPU tensors only; skipped elsewhere to avoid a device sync)
            with entries outside ``[0, 1]``.
    """
    dtype = floating(scores, "scores", axis="label")
    if not isinstance(targets, torch.Tensor) or not targets.is_floating_point():
        raise ValueError("targets must be a floating-point torch.Tensor with entries in [0, 1], got "
                         + (f"dtype {targets.dtype}" if isinstance(targets, torch.Tensor) else type(targets).__name__))
    if targets.shape != scores.shape:
        raise ValueError(f"targets must have the shape of scores {tuple(scores.shape)}, got {tuple(targets.shape)}")
    unit_interval(targets, "targets")
    n = scores.shape[-1]
    s = scores.to(dtype).reshape(-1, n)
    t = targets.to(device=s.device, dtype=dtype).reshape(-1, n)
    return _Zlpr.apply(s, t).reshape(scores.shape[:-1]).to(scores.dtype)


def zlpr_probability(scores: torch.Tensor) -> torch.Tensor:
    """ZLPR probability ``sigmoid(2 s) = 1 / (1 + e^{-2 s})`` elementwise.

    Catalogue section 3; seed 002: ``t_i = sigmoid(2 s_i)`` makes every
    partial derivative of ``zlpr`` vanish, so this (not ``sigmoid(s)``) is
    the probability a ZLPR-trained score encodes. Derivative
    ``2 sigma (1 - sigma)``.

    Args:
        scores: floating tensor (any shape, 0-d allowed); float16, bfloat16,
            float32 or float64, on any device.

    Returns:
        Tensor of the shape and dtype of ``scores``.

    Stability: ``1 / (1 + e^{-2s})`` for ``s >= 0`` and
    ``e^{2s} / (1 + e^{2s})`` for ``s < 0`` (each branch on its own inputs,
    double where), so the exponential never overflows and both tails keep
    their relative accuracy (the lower tail down to the subnormal range);
    ``2s`` overflowing to ``+-inf`` for ``|s|`` near the dtype's maximum
    gives exactly 1 or 0 with a zero derivative, never NaN.

    Raises:
        ValueError: ``scores`` not a floating tensor.
    """
    dtype = floating(scores, "scores")
    s = scores.to(dtype)
    nonneg = s >= 0
    zeros = torch.zeros_like(s)
    e_pos = torch.exp(-2 * torch.where(nonneg, s, zeros))
    e_neg = torch.exp(2 * torch.where(nonneg, zeros, s))
    out = torch.where(nonneg, 1 / (1 + e_pos), e_neg / (1 + e_neg))
    return out.to(scores.dtype)
