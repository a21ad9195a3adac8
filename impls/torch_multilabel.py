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
from ._torch_rows import any_rows, first_argmax, sigmoid_lower_tail

__all__ = ["zlpr", "zlpr_probability"]


def _halving_sum(x: torch.Tensor) -> torch.Tensor:
    """Sum of the 2-d ``x`` over its last axis, in a fixed order that does not depend on
    its length ``n`` once zeros are appended: ``x`` is thought of as zero-padded to a power
    of two, which is summed by halving (``y[:h] + y[h:]``). The padding is never written:
    the first step adds the upper part onto a copy of the lower one (``v + 0 = v``, the
    same bits), later steps halve in place. A longer row only adds halving steps whose upper
    halves are exactly 0."""
    rows, n = x.shape
    if n == 1:
        return x[:, 0].clone()
    h = 1 << ((n - 1).bit_length() - 1)  # n <= 2h
    buf = x[:, :h].clone()
    buf[:, :n - h] += x[:, h:]
    while h > 1:
        h //= 2
        buf[:, :h] += buf[:, h:2 * h]
        buf = buf[:, :h]
    return buf[:, 0]


def _sum_kept(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Sum of the 2-d ``x`` over its last axis, counting the entries where ``keep``.

    Bit for bit independent of how many other entries there are and where:
    the kept entries are packed, in order, to the front of a zero buffer
    (positions from an integer cumsum, which is exact), which is then summed
    by :func:`_halving_sum`. A row that keeps every entry is summed as it
    is (the same order, without the cumsum); only rows that drop an entry
    are packed. No autograd here: the caller's backward is closed form
    (dropped entries have a zero derivative).
    """
    out = _halving_sum(x)
    drop = ~keep.all(-1)
    if any_rows(drop):
        r = drop.nonzero().squeeze(1)
        out[r] = _packed_sum(x[r], keep[r])
    return out


def _packed_sum(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """:func:`_halving_sum` of the entries of each row of ``x`` where ``keep``, packed in order
    to the front of the row (the dropped ones are never read: NaN or inf there is harmless)."""
    rows, n = x.shape
    pos = torch.cumsum(keep.to(torch.int64), dim=-1) - 1
    pos = torch.where(keep, pos, n)  # one spare slot collects the dropped entries
    packed = x.new_zeros(rows, n + 1)
    packed.scatter_(-1, pos, torch.where(keep, x, torch.zeros((), dtype=x.dtype, device=x.device)))
    return _halving_sum(packed[:, :n])


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


def _limits(dtype: torch.dtype) -> tuple[float, float]:
    """``(big, low)`` of the direct path of :func:`_halves`: ``e^{a}`` for ``|a| <= big`` is a
    normal number and ``n e^{big}`` cannot overflow for any feasible ``n`` (44 in float32, 354
    in float64); ``exp`` may return 0 (underflow, or a subnormal flushed) only below ``low``."""
    fi = torch.finfo(dtype)
    return float(math.floor(math.log(fi.max) / 2)), math.log(fi.tiny) + 1.0


def _rows(mask: torch.Tensor):
    """Indices of the True entries of a per-row ``mask``, or None if there are none."""
    if not any_rows(mask):
        return None
    r = mask.nonzero().squeeze(1)
    return r if r.numel() else None


def _halves(s: torch.Tensor, t: torch.Tensor, s_min: torch.Tensor, s_max: torch.Tensor):
    """Both halves of ``zlpr`` on 2-d ``s``, ``t``: for each, ``(value, e, s1, inf_row)`` as
    returned by :func:`_log1p_weighted_sum` (without ``dw``).

    Direct path, for the rows of a half whose positive-weight scores ``a_i`` (``a = s`` or
    ``-s``) are all ``<= big`` (:func:`_limits`): no shift, ``s' = sum_i w_i e^{a_i}``, each
    term rounded a few times relative to itself (``e^{-s}`` as ``t / e^{s}`` where
    ``s <= big``, else ``t e^{-s}``), value ``log1p(s')`` (accurate near 0), ``e_i`` the
    terms. An entry whose ``e^{a_i}`` is 0 (``a_i = -inf``, a masked ``-1e7``) or whose
    ``a_i > big`` (then ``w_i = 0``: a masked ``+1e7`` or ``+inf``) is left out of the sum
    (:func:`_sum_kept`) and has ``e_i = 0``. Whether a row takes this path, and what it drops,
    do not depend on its masked entries, so appending or inserting masked entries leaves the
    value and the other derivatives bit for bit as they were. The other rows (a positive
    weight at ``a_i > big``: huge scores, ``+inf``) take the pivoted log-weight path of
    :func:`_log1p_weighted_sum`.
    """
    big, low = _limits(s.dtype)
    zero = torch.zeros((), dtype=s.dtype, device=s.device)
    halves = ((s_max, s_min, 1.0, lambda r: torch.rsub(t[r], 1)), (-s_min, -s_max, -1.0, lambda r: t[r]))
    # per half (a = sign * s), the rows with a positive weight at a > big: the careful path
    careful = []
    for hi, _, sign, w_of in halves:
        c_rows = None
        r = _rows(hi > big)
        if r is not None:
            c = torch.where(w_of(r) > 0, s[r] * sign, -math.inf).amax(-1)
            c_rows = r[c > big]
            if c_rows.numel() == 0:
                c_rows = None
        careful.append(c_rows)
    # the direct terms, on the rows that are not careful in both halves
    sub = None
    if careful[0] is not None and careful[1] is not None:
        both = torch.zeros(s.shape[0], dtype=torch.bool, device=s.device)
        both[careful[0]] = True
        both &= torch.isin(torch.arange(s.shape[0], device=s.device), careful[1])
        if any_rows(both):
            sub = (~both).nonzero().squeeze(1)
    terms = _direct_terms(s, t, s_max, big) if sub is None else \
        [x.new_zeros(s.shape).index_copy_(0, sub, y) for x, y in zip((s, s), _direct_terms(s[sub], t[sub], s_max[sub], big))]
    out_halves = []
    for term, (hi, lo, sign, w_of), c_rows in zip(terms, halves, careful):
        s1 = _halving_sum(term)
        inf_row = torch.zeros(s1.shape, dtype=torch.bool, device=s.device)
        # rows that may drop an entry: an a_i > big, or an e^{a_i} that may be 0
        drop = (hi > big) | (lo < low)
        if c_rows is not None:
            drop[c_rows] = False
        r = _rows(drop)
        if r is not None:
            a_r = s[r] * sign
            keep = (a_r <= big) & (torch.exp(a_r) != 0)
            term_r = torch.where(keep, term[r], zero)
            term[r] = term_r
            s1[r] = _packed_sum(term_r, keep)
        out = torch.log1p(s1)
        if c_rows is not None:
            o, e, _, s1c, infc = _log1p_weighted_sum(s[c_rows] * sign, w_of(c_rows), False)
            # a half whose value is +inf has no gradient: its e (unshifted there, may overflow) is 0
            e = torch.where(infc.unsqueeze(-1), zero, e)
            out[c_rows], term[c_rows], s1[c_rows], inf_row[c_rows] = o, e, s1c, infc
        out_halves.append((out, term, s1, inf_row))
    return out_halves


def _direct_terms(s: torch.Tensor, t: torch.Tensor, s_max: torch.Tensor, big: float):
    """``((1 - t) e^{s}, t e^{-s})`` of :func:`_halves`' direct path (entries it drops or
    rows it leaves to the careful path may hold inf or NaN)."""
    ex = torch.exp(s)
    term2 = torch.div(t, ex)  # t e^{-s}: e^{s} is normal where |s| <= big; other rows below
    term1 = torch.rsub(t, 1).mul_(ex)  # (1 - t) e^{s}
    del ex
    far = _rows(s_max > big)  # e^{-s} may be subnormal: t e^{-s} directly
    if far is not None:
        term2[far] = t[far] * torch.exp(-s[far])
    return term1, term2


class _Zlpr(torch.autograd.Function):
    """``zlpr`` on 2-d ``s`` and ``t`` (compute dtype); returns the rows. The two halves come
    from :func:`_halves`; the backward is their closed form, ``g e_i / (1 + s')`` per half,
    0 for a half whose value is ``+inf`` and for a row with a NaN. With respect to ``t`` it is
    ``g dw_i / (1 + s')`` with ``dw`` and ``s'`` of :func:`_log1p_weighted_sum` over every row
    (computed only when ``t`` requires a gradient). Not twice differentiable."""

    @staticmethod
    def forward(ctx, s, t, t_checked):
        # (two reductions: torch.aminmax over the last axis was slower, 11.3 against 8.6 ms)
        s_max, s_min = s.amax(-1), s.amin(-1)  # a NaN score makes both NaN
        (out1, e1, s1_1, inf1), (out2, e2, s1_2, inf2) = _halves(s, t, s_min, s_max)
        out = out1.add_(out2)
        dw = (None,) * 6
        if ctx.needs_input_grad[1]:
            _, _, dw1, d1, dinf1 = _log1p_weighted_sum(s, 1 - t, True)
            _, _, dw2, d2, dinf2 = _log1p_weighted_sum(-s, t, True)
            zero = torch.zeros((), dtype=s.dtype, device=s.device)  # an infinite half: no gradient
            dw1, dw2 = torch.where(dinf1.unsqueeze(-1), zero, dw1), torch.where(dinf2.unsqueeze(-1), zero, dw2)
            dw = (dw1, d1, dinf1, dw2, d2, dinf2)
        # NaN in, NaN out (the careful path tests w > 0 and b == max, which a NaN fails silently)
        # a NaN score makes its row's max NaN; a NaN target makes its row's sum NaN, unless the
        # targets were checked (unit_interval rejects NaN), which saves a pass
        maybe = torch.isnan(s_max) if t_checked else torch.isnan(s_max + t.sum(-1))
        nan_row = None
        if any_rows(maybe):
            nan_row = torch.isnan(s).any(-1) | torch.isnan(t).any(-1)
            out = torch.where(nan_row, torch.nan, out)
        ctx.save_for_backward(e1, s1_1, inf1, e2, s1_2, inf2, *dw, nan_row)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        e1, s1_1, inf1, e2, s1_2, inf2, dw1, d1, dinf1, dw2, d2, dinf2, nan_row = ctx.saved_tensors
        zero = torch.zeros((), dtype=g.dtype, device=g.device)
        if nan_row is not None:
            g = torch.where(nan_row, zero, g)
        gs = gt = None
        if ctx.needs_input_grad[0]:
            k1 = torch.where(inf1, zero, g / (1 + s1_1)).unsqueeze(-1)
            k2 = torch.where(inf2, zero, g / (1 + s1_2)).unsqueeze(-1)
            gs = (e1 * k1).sub_(e2 * k2)
            if nan_row is not None:  # a NaN row's terms may be NaN
                gs = torch.where(nan_row.unsqueeze(-1), zero, gs)
        if ctx.needs_input_grad[1]:
            k1 = torch.where(dinf1, zero, g / (1 + d1)).unsqueeze(-1)
            k2 = torch.where(dinf2, zero, g / (1 + d2)).unsqueeze(-1)
            gt = (dw2 * k2).sub_(dw1 * k1)
        return gs, gt, None


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
    and ``a = -s, w = t``) is computed per row in one of two ways. Where
    every positive-weight ``a_i`` is at most 44 (float32) or 354 (float64)
    — the usual case — directly: ``log1p(sum_i w_i e^{a_i})``, each term a
    few roundings relative to itself (no overflow; small losses keep their
    relative accuracy). Otherwise (huge scores, ``+inf``) as a logsumexp over
    ``{0}`` and ``{a_i + log w_i : w_i > 0}``, shifted by the detached
    largest element ``(a_p, log w_p)``, with exponents formed as
    ``2 (a_i/2 - a_p/2) + (log w_i - log w_p)`` (<= 0 up to rounding, no
    overflow for ``|s|`` up to the dtype's maximum, and ``a_i - a_p`` rounded
    relative to itself, not to ``|a_p|``), ``log w`` compensated for its
    rounding at tiny weights, and evaluated as ``m + log1p(s')`` with the
    maximal element's 1 removed exactly. Which way a row takes does not
    depend on its masked positions. Both halves are >= 0: the sum has
    no cancellation. The gradient of each half is a softmax-type ratio
    ``w_i e^{a_i - m} / S``, always finite. Symbolic statements: ``spec/multilabel.py`` (ZLPR).

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
    checked = unit_interval(targets, "targets") is not None  # read, so no target is NaN
    n = scores.shape[-1]
    s = scores.to(dtype).reshape(-1, n)
    t = targets.to(device=s.device, dtype=dtype).reshape(-1, n)
    return _Zlpr.apply(s, t, checked).reshape(scores.shape[:-1]).to(scores.dtype)


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

    Stability: torch's sigmoid kernel ``1 / (1 + e^{-2s})`` keeps both
    tails' relative accuracy wherever ``e^{-2s}`` is finite; below that
    (outputs under ~1e-38 in float32) the value is ``e^{2s}``, so the lower
    tail holds down to the subnormal range; the derivative is formed from
    ``sigma(-2s)``, not from ``1 - sigma(2s)`` (see ``_SigmoidTwice``).
    ``2s`` overflowing to ``+-inf`` for ``|s|`` near the dtype's maximum
    gives exactly 1 or 0 with a zero derivative, never NaN.

    Raises:
        ValueError: ``scores`` not a floating tensor.
    """
    dtype = floating(scores, "scores")
    return _SigmoidTwice.apply(scores.to(dtype)).to(scores.dtype)


class _SigmoidTwice(torch.autograd.Function):
    """``sigmoid(2s)`` in torch's sigmoid kernel, both tails to their relative accuracy.

    Forward: ``1 / (1 + e^{-2s})`` (torch.sigmoid: relatively accurate wherever ``e^{-2s}`` is
    finite; ``2s = ±inf`` gives exactly 1 or 0), the lower tail below ``e^{-2s}``'s overflow as
    ``e^{2s}`` (``_torch_rows.sigmoid_lower_tail``).  Backward: ``2 g sigma(2s) sigma(-2s)``, with
    ``sigma(-2s)`` from the same kernel instead of ``1 - sigma(2s)``, which cancels for large ``s``
    (the catalogue's derivative ``2 sigma (1 - sigma)``)."""

    @staticmethod
    def forward(ctx, s):
        u = s * 2
        y = sigmoid_lower_tail(torch.sigmoid(u), u)
        ctx.save_for_backward(u, y)
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        u, y = ctx.saved_tensors
        neg = u.neg()
        return sigmoid_lower_tail(torch.sigmoid(neg), neg).mul_(y).mul_(g).mul_(2)
