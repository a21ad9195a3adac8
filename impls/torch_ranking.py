"""Ranking: AUC and its sigmoid relaxation, in PyTorch (catalogue section 6, seed 001).

Seed 001 ("optimizing directly for the metric") proposes optimising the AUC
directly through a smooth surrogate. The AUC is the Wilcoxon-Mann-Whitney
statistic: the probability that a positive outscores a negative, ties
counting one half; ``soft_auc`` replaces the step by a sigmoid of the score
difference at temperature ``tau``.

Conventions shared by both functions:

* ``scores`` is a floating ``torch.Tensor`` of shape ``(..., n)``; the LAST
  axis holds the elements of one ranking problem, leading axes are batch
  axes. The result has the batch shape ``scores.shape[:-1]`` and the dtype
  of ``scores``.
* ``labels`` has the shape of ``scores``, integer, bool or floating, with
  values in {0, 1} (1 = positive). Every row needs at least one positive
  and one negative.
* The value checks on ``labels`` (and on a tensor ``tau``) read the data,
  so they are made only for CPU tensors: on another device they would force
  a synchronisation. An unchecked row without a positive or without a
  negative gives NaN (0 / 0).
"""

from __future__ import annotations

import math

import torch

from ._torch_checks import floating, positive_scalar

__all__ = ["auc", "soft_auc"]


def _check_labels(labels, scores: torch.Tensor) -> torch.Tensor:
    """Validate ``labels``; return the positive mask (bool) on ``scores.device``."""
    if not isinstance(labels, torch.Tensor):
        raise ValueError(f"labels must be a torch.Tensor, got {type(labels).__name__}")
    if labels.is_complex():
        raise ValueError(f"labels must be real (0 or 1), got dtype {labels.dtype}")
    if labels.shape != scores.shape:
        raise ValueError(f"labels must have the shape of scores {tuple(scores.shape)}, got {tuple(labels.shape)}")
    positive = labels == 1 if labels.dtype != torch.bool else labels
    rows = math.prod(labels.shape[:-1])
    if rows > 0 and labels.shape[-1] < 2:
        raise ValueError("labels: every row (last axis) needs at least one positive and one negative")
    if labels.device.type == "cpu" and labels.numel() > 0:
        if labels.dtype != torch.bool and not bool(torch.all((labels == 0) | positive)):
            raise ValueError("labels must be 0 or 1 (or bool)")
        n_pos = positive.sum(dim=-1)
        if bool(torch.any(n_pos == 0)) or bool(torch.any(n_pos == labels.shape[-1])):
            raise ValueError("labels: every row (last axis) needs at least one positive and one negative")
    return positive.to(scores.device)


class _Sigmoid(torch.autograd.Function):
    """``torch.sigmoid`` whose derivative is ``sigmoid(x) sigmoid(-x)``.

    ``torch.sigmoid``'s own backward forms ``s (1 - s)``, where ``1 - s``
    cancels for large ``x`` (relative error ``eps / sigmoid(-x)``: 1e-7 at
    ``x = 20``, and exactly 0 beyond ``x = 37`` in float64 although the true
    derivative is ``e^-x``). The backward is written with differentiable
    operations on the saved input, so double backward works too.
    """

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (torch.sigmoid(x) * torch.sigmoid(-x))


def auc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Area under the ROC curve (Wilcoxon-Mann-Whitney) over the last axis.

    Catalogue section 6; seed 001 ("optimizing directly for the metric")::

        auc = (1 / (P N)) sum_{i positive} sum_{j negative}
                  ( 1[s_i > s_j] + 1/2 1[s_i = s_j] )

    with ``P`` positives and ``N`` negatives in the row. Invariant under any
    strictly increasing map of the scores; ``soft_auc`` tends to it as
    ``tau -> 0+``.

    Args:
        scores: floating tensor of shape ``(..., n)`` (float16, bfloat16,
            float32 or float64, any device).
        labels: tensor of the shape of ``scores``, integer, bool or
            floating, values in {0, 1}; every row needs a positive and a
            negative (both checked on the CPU only).

    Returns:
        Tensor of shape ``scores.shape[:-1]`` and dtype ``scores.dtype``,
        without gradient (the AUC is piecewise constant).

    Algorithm, O(n log n) per row: sort the row (in the input dtype, so that
    ties are exactly the scores that compare equal as given), give each
    element its midrank (the average of the 1-based positions of its tie
    group, found with a forward cummax of group starts and a backward
    cummin of group ends), and use ``U = R - P (P + 1) / 2``, ``R`` the sum
    of the positives' midranks: ``auc = U / (P N)``.

    Exactness: twice the midranks are integers, so ``2 U = 2 R - P (P + 1)``
    and ``2 P N`` are counted exactly in int64, whatever the score dtype
    (float16 included); the one float64 division then gives the correctly
    rounded value (while ``2 P N < 2^53``, i.e. ``n`` below ~9e7), which is
    cast to the dtype of ``scores``.

    Raises:
        ValueError: ``scores`` not a floating tensor or 0-d; ``labels`` of
            another shape, not real, or (on the CPU) not in {0, 1} or with
            a row lacking a positive or a negative.
    """
    floating(scores, "scores", axis="element", nonempty=False)
    positive = _check_labels(labels, scores)
    n = scores.shape[-1]
    with torch.no_grad():
        values, order = torch.sort(scores, dim=-1)
        pos = torch.gather(positive, -1, order).to(torch.int64)
        index = torch.arange(n, device=scores.device)
        new = values[..., 1:] != values[..., :-1]  # a tie group ends between i and i + 1
        edge = torch.ones(values.shape[:-1] + (1,), dtype=torch.bool, device=scores.device)
        first = torch.cummax(torch.where(torch.cat([edge, new], dim=-1), index, 0), dim=-1).values
        last_rev = torch.where(torch.cat([new, edge], dim=-1), index, n - 1).flip(-1)
        last = torch.cummin(last_rev, dim=-1).values.flip(-1)
        twice_rank = first + last + 2  # 2 x (1-based midrank)
        n_pos = pos.sum(dim=-1)
        n_neg = n - n_pos
        twice_u = (twice_rank * pos).sum(dim=-1) - n_pos * (n_pos + 1)
        value = twice_u.to(torch.float64) / (2 * n_pos * n_neg).to(torch.float64)
        # NaN in, NaN out: sort places a NaN score last, where it would count as the largest
        value = torch.where(torch.isnan(scores).any(-1), torch.nan, value)
    return value.to(scores.dtype)


def soft_auc(scores: torch.Tensor, labels: torch.Tensor, tau=1.0) -> torch.Tensor:
    """Sigmoid relaxation of the AUC at temperature ``tau``, over the last axis.

    Catalogue section 6; seed 001 ("optimizing directly for the metric")::

        soft_auc = (1 / (P N)) sum_{i positive} sum_{j negative} sigmoid((s_i - s_j) / tau)

    Claims: ``soft_auc -> auc`` as ``tau -> 0+`` (ties give sigmoid(0) = 1/2,
    exactly the AUC's half); ``soft_auc(s, l) + soft_auc(s, 1 - l) = 1``
    (the swapped pairs have exactly negated arguments).

    Args:
        scores: floating tensor of shape ``(..., n)`` (float16, bfloat16,
            float32 or float64, any device); float16 and bfloat16 are
            computed in float32 and the result cast back.
        labels: tensor of the shape of ``scores``, integer, bool or
            floating, values in {0, 1}; every row needs a positive and a
            negative (both checked on the CPU only).
        tau: temperature, ``> 0`` and finite: a Python number, a 0-d numpy
            array or a 0-d tensor (a non-CPU tensor is not validated).

    Returns:
        Tensor of shape ``scores.shape[:-1]`` and dtype ``scores.dtype``,
        differentiable with respect to ``scores`` (and a tensor ``tau``).

    Memory: all ``n x n`` pairs of a row are formed at once and masked to
    the positive-negative ones, so time and memory are ``O(batch * n^2)``
    (a few tensors of that size, more under autograd). Split long rows into
    smaller batches yourself if that does not fit.

    Stability: the argument is formed as ``((s_i/2 - s_j/2) / tau) * 2``:
    ``s_i - s_j`` itself can overflow (``3e38 - (-3e38)`` in float32) and
    ``2 / tau`` overflows for subnormal ``tau``; the halving is exact
    (except for subnormal scores, far below the result's resolution). The
    sigmoid is ``torch.sigmoid`` (no overflow for large arguments), with the
    derivative formed as ``sigmoid(x) sigmoid(-x)``: ``torch.sigmoid``'s own
    ``s (1 - s)`` cancels for large ``x`` (relative error 1e-7 at ``x = 20``
    in float64, and 0 instead of ``e^-x`` beyond 37). Where
    ``|argument|`` exceeds ``-log(smallest subnormal) + 5`` (750 in float64,
    108 in float32) the sigmoid is exactly 0 or 1 with exactly zero
    derivative; there the argument is replaced by a constant through a
    double ``where``, so that an infinite argument (huge scores, tiny
    ``tau``) meets no ``inf * 0`` in the backward pass.

    Raises:
        ValueError: ``scores`` not a floating tensor or 0-d; ``labels`` as
            for :func:`auc`; ``tau`` not > 0 and finite or not a scalar.
    """
    dtype = floating(scores, "scores", axis="element", nonempty=False)
    positive = _check_labels(labels, scores)
    tau = positive_scalar(tau, "tau", scores.device, dtype)
    n, batch = scores.shape[-1], math.prod(scores.shape[:-1])
    half = scores.to(dtype).reshape(batch, n) * 0.5
    pos = positive.to(dtype).reshape(batch, n)
    # on the CPU, rows in chunks of at most _PAIRS pairs: each n x n temporary then stays in the cache and
    # in the allocator's pool (64 x 1000 float32: forward 909 -> 97 ms, forward+backward 1977 -> 350 ms,
    # where every one of them was a fresh 256 MB mapping); rows are independent: only the order of each row's
    # sum of n^2 terms can differ (within an ulp of the float64 sum at 64 x 1000, as before)
    rows = max(1, _PAIRS // max(n * n, 1)) if scores.device.type == "cpu" else max(batch, 1)
    total = torch.cat([_pair_sums(half[i:i + rows], pos[i:i + rows], tau, dtype)
                       for i in range(0, max(batch, 1), rows)])  # an empty batch: one empty chunk
    n_pos = pos.sum(dim=-1)
    return (total / (n_pos * (n - n_pos))).reshape(scores.shape[:-1]).to(scores.dtype)


_PAIRS = 1 << 20  # pairs per chunk of rows (4 MB per float32 temporary)


def _pair_sums(half, pos, tau, dtype):
    """``sum_{i positive, j negative} sigmoid((s_i - s_j) / tau)`` of each row of ``half = s / 2``
    (shape (rows, n); ``pos`` the 0/1 labels in ``dtype``), as :func:`soft_auc` describes."""
    diff = half[..., :, None] - half[..., None, :]  # (s_i - s_j) / 2, i positive, j negative
    bound = -math.log(torch.finfo(dtype).smallest_normal * torch.finfo(dtype).eps) + 5.0
    with torch.no_grad():
        arg = (diff / tau) * 2
        saturated = ~(arg.abs() <= bound)  # NaN counts as saturated and stays NaN
    arg = torch.where(saturated, arg.clamp(-bound, bound), (torch.where(saturated, 0.0, diff) / tau) * 2)
    pairs = pos[..., :, None] * (1 - pos)[..., None, :]
    return (_Sigmoid.apply(arg) * pairs).sum(dim=(-2, -1))
