"""Classification losses in PyTorch (catalogue section 2, seeds 000, 003, 004).

Seed 003 ("Focus on Cross-entropy loss and KL divergence") gives the
cross-entropy, the entropy and the KL divergence (its ``log(P + Q)`` is a
typo for ``log(P / Q)``; the textbook definition is used) and names the
logistic and hinge losses as consistent surrogates of the 0-1 loss; seed 000
("How to Train Your Accuracy?") gives the smooth accuracy
``<1_y, softmax(x)>`` and the logistic / hinge toy example; seed 004 the
max-shifted softmax.

Conventions shared by every function here:

* Arrays are ``torch.Tensor``. The LAST axis is the class axis and all
  leading axes are batch axes; per-sample quantities return the batch shape
  ``x.shape[:-1]``. ``logistic_loss`` and ``hinge_loss`` are elementwise.
* float16 and bfloat16 are computed internally in float32 and the result is
  cast back: the output dtype is the input floating dtype. Everything is
  computed on the device of the (first) floating input.
* Integer class labels are any integer dtype (``int64`` canonically), never
  ``bool``.
* Bad input raises ``ValueError`` naming the argument. Checks of VALUES
  (labels in range, probabilities in [0, 1], ``l`` in {-1, +1}) need the data
  on the host; they are done for CPU tensors only and skipped for tensors on
  other devices (reading them would force a device synchronisation). Shape
  and dtype checks are always done.
* ``+inf`` and NaN inputs are outside the domain.

Stability. A softmax-type quantity is shifted by a row "pivot" ``c``, the
value ``x_p`` of the first maximal entry ``p`` of the row. Unlike the usual
detached maximum, ``c`` stays in the graph: each expression below is an
exact identity in which the pivot's own term is dropped explicitly, e.g.

    CE(x, t) = sum_{i != p} t_i (x_p - x_i) + T log(1 + sum_{i != p} exp(x_i - x_p))

with ``T = sum_i t``. Every term is >= 0 (no cancellation in the value), the
exponents are <= 0 (no overflow), and the derivative with respect to
``x_p`` comes out as ``-T sum_{i != p} e_i / (1 + s')`` rather than as
``softmax_p - 1`` formed from a softmax near 1, so it keeps its relative
accuracy when the prediction is confident. Differences ``x_i - x_p`` can
overflow (``-3e38 - 3e38`` in float32), so they are formed as
``2 (x_i/2 - x_p/2)`` (halving only changes the exponent). Masked entries
get their exponent ``-inf`` and their zero term from a second ``where``
("double where"), so that no ``0 * inf`` reaches the backward pass.
"""

from __future__ import annotations

import math
import numbers

import torch

from ._torch_checks import class_labels, compute_dtype, floating, unit_interval
from ._torch_rows import any_rows, first_argmax, sigmoid_lower_tail, softmax_rows

__all__ = ["cross_entropy", "entropy", "kl_divergence", "soft_accuracy", "logistic_loss", "hinge_loss"]


# -- validation ----------------------------------------------------------------------------------

def _check_sign_labels(l, f: torch.Tensor) -> torch.Tensor:
    """``l`` in {-1, +1}: a floating or integer tensor (or Python number) broadcastable with ``f``."""
    if isinstance(l, bool) or (not isinstance(l, torch.Tensor) and not isinstance(l, numbers.Real)):
        raise ValueError(f"l must be a tensor of labels in {{-1, +1}}, got {type(l).__name__}")
    if not isinstance(l, torch.Tensor):
        l = torch.tensor(l)
    if l.dtype == torch.bool or l.is_complex():
        raise ValueError(f"l must be a floating or integer tensor with values in {{-1, +1}}, got dtype {l.dtype}")
    try:
        torch.broadcast_shapes(f.shape, l.shape)
    except RuntimeError:
        raise ValueError(f"l must be broadcastable with f: shapes {tuple(l.shape)} and {tuple(f.shape)}") from None
    if l.device.type == "cpu" and l.numel():
        lo, hi = torch.aminmax(l.abs())  # every |l| is 1 (a NaN fails both); one pass each, no masks
        if not (float(lo) == 1 and float(hi) == 1):
            raise ValueError("l must have values in {-1, +1}")
    return l.to(f.device)


def _minus_l_times(l: torch.Tensor, fc: torch.Tensor, plus: float = 0.0) -> torch.Tensor:
    """``plus - l fc`` in one pass (``addcmul``), in the dtype of ``fc``: ``l`` is +-1, so the
    product is an exact sign flip and the only rounding is that of the sum."""
    if l.is_floating_point() and l.dtype != fc.dtype:
        l = l.to(fc.dtype)  # (exact: +-1)
    return torch.addcmul(fc.new_full((), plus), l, fc, value=-1)


class _Softplus(torch.autograd.Function):
    """``softplus(z) = log(1 + e^z)`` elementwise, to the relative accuracy of both tails.

    Forward: torch's ``logaddexp(z, 0)`` kernel, which forms ``max(z, 0) + log1p(exp(-|z|))``
    (exp(z) and z itself where they are the answer, no overflow).  Backward: ``g sigmoid(z)``,
    its deep lower tail (``e^{-z}`` overflowing) as ``e^z`` (``_torch_rows.sigmoid_lower_tail``),
    so subnormal derivatives are kept; at ``z = 0`` it is the correct 1/2."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return torch.logaddexp(z, z.new_zeros(()))

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return sigmoid_lower_tail(torch.sigmoid(z), z).mul_(g)


# -- cross-entropy: one autograd node, closed-form backward --------------------------------------

class _CrossEntropy(torch.autograd.Function):
    """Rows of ``x`` (2-d, compute dtype) against float targets ``t`` (same shape) or labels ``y``
    (``(rows, 1)`` int64; ``t`` is then None). Returns ``(rows, 1)``.

    Forward: the pivot ``p`` (first maximal logit, :func:`first_argmax`), ``sm = softmax(x)``
    (fused; its exponentials are ``exp(x_i - x_p)`` divided by ``1 + s'``), ``q = sum_{i != p}
    sm_i = s' / (1 + s')`` summed without the pivot's entry, and ``s' = q / sm_p``: both
    relatively accurate, so ``log1p(s')`` is too. The value is ``(x_p - x_y) + log1p(s')``
    (labels) or ``2 sum_i t_i (x_p/2 - x_i/2) + T log1p(s')`` (targets; a masked entry's
    ``0 * inf`` is the only NaN a product can make there, and is zeroed).

    Backward (closed form, reusing ``sm``): ``g (T sm_i - t_i)`` with respect to the logits,
    except at the pivot, where it is ``g (sum_{i != p} t_i - T q)`` (not ``T sm_p - t_p`` formed
    from ``sm_p`` near 1); ``g (x_p - x_i + log1p(s'))`` with respect to the targets, 0 at a
    masked entry. Rows of ``-inf`` logits (no pivot) have ``sm = 0`` and ``s' = 0``. Not twice
    differentiable.
    """

    @staticmethod
    def forward(ctx, x, t, y):
        idx = first_argmax(x)
        c = x.gather(1, idx)
        empty = c == -math.inf  # a row of -inf logits: no pivot
        some_empty = any_rows(empty)
        if some_empty:
            c = torch.where(empty, torch.zeros_like(c), c)
        sm = torch.softmax(x, -1)
        if some_empty:
            sm.masked_fill_(empty, 0.0)  # softmax made NaN of them (-inf - -inf)
        sm_p = sm.gather(1, idx)
        sm.scatter_(1, idx, torch.zeros_like(sm_p))
        q = sm.sum(1, keepdim=True)
        s1 = q / sm_p
        if some_empty:
            s1 = torch.where(empty, torch.zeros_like(s1), s1)
        log1p_s1 = torch.log1p(s1)
        if y is not None:
            out = (c - x.gather(1, y)) + log1p_s1
            tsum = None
        else:
            # t_i (x_p - x_i) as 2 t_i (x_p/2 - x_i/2): a term beyond the dtype's range only if it is
            terms = torch.mul(x, 0.5).sub_(c * 0.5).mul_(t)
            terms.nan_to_num_(nan=0.0, posinf=math.inf, neginf=-math.inf)  # 0 * -inf at masked entries
            tsum = t.sum(1, keepdim=True)
            out = tsum * log1p_s1 - 2 * terms.sum(1, keepdim=True)
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(sm, idx, q, c, log1p_s1, empty, tsum, t, y,
                              x if ctx.needs_input_grad[1] else None)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        sm, idx, q, c, log1p_s1, empty, tsum, t, y, x = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:
            if y is not None:
                gx = sm * g
                on_p = (y == idx) & ~empty
                at_p = g * ((~on_p).to(g.dtype) - q)
                gx.scatter_(1, idx, torch.where(empty, gx.gather(1, idx), at_p))
                gx.scatter_add_(1, y, torch.where(on_p, torch.zeros_like(g), -g))
            else:
                gx = t * -g
                t_p = gx.gather(1, idx)
                gx.scatter_(1, idx, torch.where(empty, t_p, torch.zeros_like(t_p)))
                g_rest = -gx.sum(1, keepdim=True)  # g sum_{i != p} t_i, without t_p's rounding
                g_total = g * tsum
                gx.addcmul_(sm, g_total)
                gx.scatter_(1, idx, torch.where(empty, t_p, g_rest - g_total * q))
        if ctx.needs_input_grad[1]:
            # (x_p - x_i + log1p(s')) g as (x_p/2 - x_i/2 + log1p(s')/2) (2 g): no overflow of the difference
            gt = torch.mul(x, -0.5).add_(c * 0.5).add_(log1p_s1 * 0.5).mul_(g * 2)
            gt.masked_fill_((t == 0) & (x == -math.inf), 0.0)  # a masked entry: no term, no derivative
        return gx, gt, None


# -- public --------------------------------------------------------------------------------------

def cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy ``-sum_c target_c log softmax(logits)_c`` over the last axis.

    Catalogue section 2; seed 003 (cross-entropy and KL divergence).
    ``CE(t, softmax(x)) = H(t) + KL(t || softmax(x))`` and, for a target
    whose rows sum to 1, ``dCE/dlogits = softmax(logits) - target``
    (in general ``T softmax - target`` with ``T = sum_c target_c``).

    Args:
        logits: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device.
        target: EITHER integer class labels of shape ``logits.shape[:-1]``
            with values in ``0..n-1`` (int64 canonically; no gradient), OR a
            floating tensor of the shape of ``logits`` with entries in
            ``[0, 1]`` (probability vectors: label smoothing, distillation;
            rows need not sum to exactly 1). A floating target is converted
            to the compute dtype of ``logits`` and is differentiable:
            ``dCE/dtarget_c = -log softmax(logits)_c``.

    Returns:
        Tensor of shape ``logits.shape[:-1]`` and dtype ``logits.dtype``.

    Masking: a class whose logit is ``-inf`` and whose target weight is
    exactly 0 contributes nothing: not to the value, and its gradient (with
    respect to the logit AND to the target weight, whose one-sided
    derivative would be ``+inf``) is exactly 0, never NaN. A ``-inf`` logit
    with a positive weight (or an integer label pointing at it) gives
    ``+inf``, with finite gradients. A row of ``-inf`` logits gives 0 if its
    target is all zero, ``+inf`` otherwise.

    Stability: with the row pivot ``p`` (first maximal logit) the value is

        2 sum_{i != p} t_i (x_p/2 - x_i/2) + T log1p(sum_{i != p} exp(x_i - x_p))

    every term >= 0, exponents <= 0 and the differences halved, so nothing
    overflows for ``|logits|`` up to the dtype's maximum (a value beyond it
    is ``+inf``, correctly rounded). One autograd node with a closed-form
    backward (``T softmax - target``, reusing the forward's softmax) whose
    entry at the pivot is ``sum_{i != p} t_i - T s'/(1 + s')``, the form
    the module docstring derives, so that the logit gradient at the arg-max
    keeps its relative accuracy for confident predictions. Not twice
    differentiable.

    Raises:
        ValueError: ``logits`` not a floating tensor, 0-d or with an empty
            last axis; ``target`` with a wrong shape or dtype, labels out of
            range, or probabilities outside ``[0, 1]``. Value checks of
            ``target`` are skipped for non-CPU tensors (no device sync).
    """
    dtype = floating(logits, "logits", axis="class")
    n = logits.shape[-1]
    batch = logits.shape[:-1]
    x = logits.to(dtype).reshape(-1, n)
    if isinstance(target, torch.Tensor) and target.is_floating_point():
        if target.shape != logits.shape:
            raise ValueError(f"target (probabilities) must have the shape of logits {tuple(logits.shape)}, "
                             f"got {tuple(target.shape)}")
        unit_interval(target, "target")
        t, y = target.to(device=x.device, dtype=dtype).reshape(-1, n), None
    else:
        labels = class_labels(target, "target", logits, "logits")
        t, y = None, labels.reshape(-1, 1)
    out = _CrossEntropy.apply(x, t, y)
    return out.reshape(batch).to(logits.dtype)


def entropy(p: torch.Tensor) -> torch.Tensor:
    """Shannon entropy ``-sum_i p_i log p_i`` over the last axis, with ``0 log 0 = 0``.

    Catalogue section 2; seed 003. ``CE(p, q) = H(p) + KL(p || q)``.

    Args:
        p: floating tensor of shape ``(..., n)``, ``n >= 1``, entries in
            ``[0, 1]`` (rows need not sum to 1); float16, bfloat16, float32
            or float64, on any device.

    Returns:
        Tensor of shape ``p.shape[:-1]`` and dtype ``p.dtype``.

    Masking / gradient: an entry ``p_i = 0`` contributes 0 to the value and
    its gradient is 0 (the true derivative ``-log p_i - 1`` is ``+inf``
    there; ``log`` is taken of 1 where ``p = 0``, and the closed-form
    gradient is selected to 0 there, never NaN). Elsewhere the gradient is
    ``-log p_i - 1`` (one autograd node, ``_Entropy``).

    Stability: every term ``-p_i log p_i`` is >= 0, so the sum has no
    cancellation; subnormal ``p_i`` are fine.

    Raises:
        ValueError: ``p`` not a floating tensor, 0-d, with an empty last
            axis, or (CPU tensors only; skipped elsewhere to avoid a device
            sync) with entries outside ``[0, 1]``.
    """
    dtype = floating(p, "p", axis="class")
    unit_interval(p, "p")
    pc = p.to(dtype)
    return _Entropy.apply(pc).to(p.dtype)


class _Entropy(torch.autograd.Function):
    """``-sum_i p_i log p_i`` over the last axis (compute dtype), with the closed-form derivative
    ``-(log p_i + 1)``, 0 where ``p_i = 0``.  Autodiff of ``p log p`` formed ``log p + p / p``
    in five passes (a division, two products and a select's backward); this is two and a select
    (forward+backward at 4096 x 1000 float32: 15.8 -> 9.0 ms).  Not twice differentiable."""

    @staticmethod
    def forward(ctx, pc):
        pos = pc != 0  # p = 0 contributes 0; a NaN p stays in, and its NaN reaches the sum (NaN in, NaN out)
        log_safe = torch.log(torch.where(pos, pc, torch.ones_like(pc)))  # log 1 = 0 where p = 0
        ctx.save_for_backward(pos, log_safe)
        # p log(safe) is already 0 (0 * log 1) where p = 0: no second select
        return -(pc * log_safe).sum(dim=-1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        pos, log_safe = ctx.saved_tensors
        # the select's mask is uniform as a rule (p = 0 is rare), which is cheap on the CPU
        return torch.where(pos, (log_safe + 1).mul_(-g.unsqueeze(-1)), 0.0)


def kl_divergence(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Kullback-Leibler divergence ``sum_i p_i log(p_i / q_i)`` over the last axis.

    Catalogue section 2; seed 003 (whose ``log(P + Q)`` is a typo: this is
    the textbook definition). ``KL >= 0`` with equality iff ``p = q`` (for
    normalised rows), and ``CE(p, q) = H(p) + KL(p || q)``.

    Args:
        p: floating tensor of shape ``(..., n)``, ``n >= 1``, entries in
            ``[0, 1]``.
        q: floating tensor of the same shape, entries in ``[0, 1]``.
            float16, bfloat16, float32 or float64 (computed in the promoted
            dtype of ``p`` and ``q``; halves in float32), on any device.

    Returns:
        Tensor of shape ``p.shape[:-1]`` in the promoted floating dtype of
        ``p`` and ``q`` (``p.dtype`` when they agree).

    Masking: ``0 log(0 / q) = 0``, also for ``q = 0``; such a term has a zero
    gradient with respect to ``p_i`` and ``q_i`` (the one-sided derivative
    with respect to ``p_i`` would be ``-inf``). ``p_i > 0 = q_i`` gives
    ``+inf``, with gradient ``+inf`` (``p_i``) and ``-inf`` (``q_i``), never
    NaN. Elsewhere ``dKL/dp_i = log(p_i/q_i) + 1`` and ``dKL/dq_i = -p_i/q_i``.

    Stability: each term is ``p_i * L_i`` with ``L_i = log(p_i / q_i)``:
    ``log1p((p - q) / q)`` where ``q/2 <= p <= 2q`` (the difference is exact
    there, so ``L_i`` keeps its relative accuracy as ``p_i -> q_i``) and
    ``log(p/q)`` elsewhere (``|L_i| >= log 2``: the quotient's rounding is a
    few ulps of it); where ``p/q`` overflows or is not a normal number, the
    logs of ``p 2^k`` and ``q 2^k`` for the power of two that brings ``q``
    near ``[0.5, 1)`` (exact; ``_kl_log_ratio``). One autograd node with the
    closed-form derivatives above, from the forward's ``L_i``: ``-p_i/q_i``
    is one rounded quotient and overflows only where it exceeds the dtype
    (autodiff of ``p/q`` would form ``p/q^2``); no ``0 * inf`` arises.
    The sum itself can cancel (terms of both signs); that is the
    conditioning of KL, not of this evaluation.

    Raises:
        ValueError: ``p`` or ``q`` not a floating tensor; ``p`` 0-d or with
            an empty last axis; ``q`` with a shape other than ``p``'s;
            entries outside ``[0, 1]`` (CPU tensors only; skipped elsewhere
            to avoid a device sync).
    """
    floating(p, "p", axis="class")
    floating(q, "q")
    if q.shape != p.shape:
        raise ValueError(f"q must have the same shape as p {tuple(p.shape)}, got {tuple(q.shape)}")
    unit_interval(p, "p")
    unit_interval(q, "q")
    out_dtype = torch.promote_types(p.dtype, q.dtype)
    dtype = compute_dtype(out_dtype)
    pc = p.to(dtype)
    qc = q.to(device=pc.device, dtype=dtype)
    return _KL.apply(pc, qc).to(out_dtype)


def _kl_log_ratio(pc: torch.Tensor, qc: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """``log(p_i / q_i)`` where ``pos`` (0 elsewhere), to its relative accuracy (no autograd).

    ``log1p((p - q) / q)`` where ``1/2 <= p/q <= 2`` (``p - q`` exact there, Sterbenz), else
    ``log(p/q)``: the quotient's rounding is an absolute error ``eps`` of a log of size at least
    ``log 2``.  Where ``p/q`` overflows or is below the smallest normal number (its rounding no
    longer relative), the logs of ``p`` and ``q`` scaled together by a power of two (exact) that
    brings ``q`` into ``[1/2, 1)``, so that neither log is large beside their difference; on the
    CPU that form runs only when such an entry exists."""
    r = pc / qc
    near = (r >= 0.5) & (r <= 2)
    # the select as n log1p(..) + (1 - n) log(r), n = [near] in {0, 1}: exact where both are finite,
    # which the entries kept below are (the others are zeroed, or recomputed from scaled logs).
    # torch.where is a branch per entry on the CPU, ~7 ms at 4096 x 1000 where near is as random
    # as p/q is (~1 ms where the mask is uniform), against ~3 ms for this
    n = near.to(pc.dtype)
    out = torch.log1p((pc - qc) / qc).mul_(n).add_(torch.log(r).mul_(1 - n))
    if pc.device.type == "cpu":
        # the quotients logged, r where not near (n = 0) and 1 where near: a NaN (a NaN input) takes
        # the full form too; the select on pos is uniform, as a rule (p = 0 is rare), so cheap
        lo, hi = torch.aminmax(torch.where(pos, r.mul(1 - n).add_(n), 1.0))
        if float(lo) >= torch.finfo(pc.dtype).tiny and float(hi) < math.inf:
            return torch.where(pos, out, 0.0)
    # at most 2^(maxexp - 1) (2^1023 in float64: 2^1024 is inf), so the scaled q of a subnormal q is
    # below 1/2 but its log small
    k = (-torch.frexp(qc).exponent).clamp(max=math.frexp(torch.finfo(pc.dtype).max)[1] - 1)
    scale = torch.ldexp(torch.ones_like(pc), k)
    other = pos & ~near
    po, qo = torch.where(other, pc * scale, 1.0), torch.where(other, qc * scale, 1.0)
    return torch.where(near & pos, out, torch.where(other, torch.log(po) - torch.log(qo), 0.0))


class _KL(torch.autograd.Function):
    """``sum_i p_i log(p_i / q_i)`` over the last axis (compute dtype), 0 for ``p_i = 0``, with the
    closed-form derivatives ``log(p_i / q_i) + 1`` (w.r.t. ``p_i``) and ``-p_i / q_i`` (w.r.t.
    ``q_i``), both 0 where ``p_i = 0`` (the catalogue's masking), from the forward's log ratio."""

    @staticmethod
    def forward(ctx, pc, qc):
        pos = pc != 0  # p = 0 contributes 0; a NaN p stays in, and its NaN reaches the sum (NaN in, NaN out)
        lr = _kl_log_ratio(pc, qc, pos)
        ctx.save_for_backward(pc, qc, lr, pos)
        # lr is 0 where p = 0, so p * lr is the masked term without a select (one pass less)
        return (pc * lr).sum(dim=-1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        pc, qc, lr, pos = ctx.saved_tensors
        g = g.unsqueeze(-1)
        gp = torch.where(pos, lr + 1, 0.0).mul_(g) if ctx.needs_input_grad[0] else None
        gq = torch.where(pos, pc / qc, 0.0).mul_(-g) if ctx.needs_input_grad[1] else None
        return gp, gq


def soft_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Smooth accuracy ``softmax(logits)[label]`` per sample.

    Catalogue section 2; seed 000 ("How to Train Your Accuracy?"): the batch
    mean is the smooth accuracy ``<1_y, softmax(x)>``; at one-hot predictions
    it equals the accuracy. Seed 004 for the max-shifted softmax.

    Args:
        logits: floating tensor of shape ``(..., n)``, ``n >= 1``; float16,
            bfloat16, float32 or float64, on any device.
        labels: integer tensor (int64 canonically) of shape
            ``logits.shape[:-1]`` with values in ``0..n-1``.

    Returns:
        Tensor of shape ``logits.shape[:-1]`` and dtype ``logits.dtype``.

    Masking: ``-inf`` logits get probability 0; a label pointing at a
    ``-inf`` logit (or a row of ``-inf`` logits) gives 0 with a zero
    gradient, never NaN.

    Stability: ``e_y / (1 + sum_{i != p} e_i)`` with ``e_i = exp(x_i - x_p)``
    shifted by the row pivot ``x_p`` (first maximal logit, kept in the
    graph, ``e_p = 1`` a constant): exponents <= 0 and differences halved,
    so nothing overflows for ``|logits|`` up to the dtype's maximum. Where
    the label is the pivot the gradient ``p_y (1 - p_y)`` comes out as
    ``s' / (1 + s')^2`` and keeps its relative accuracy as ``p_y -> 1``.

    Raises:
        ValueError: ``logits`` not a floating tensor, 0-d or with an empty
            last axis; ``labels`` not integer, of the wrong shape, or (CPU
            tensors only; skipped elsewhere to avoid a device sync) out of
            range.
    """
    dtype = floating(logits, "logits", axis="class")
    y = class_labels(labels, "labels", logits, "logits")
    n = logits.shape[-1]
    out = _SoftAccuracy.apply(logits.to(dtype).reshape(-1, n), y.reshape(-1, 1))
    return out.reshape(logits.shape[:-1]).to(logits.dtype)


class _SoftAccuracy(torch.autograd.Function):
    """``p_y = softmax(x)_y`` for rows of ``x`` (2-d, compute dtype) and labels ``y`` (``(rows, 1)``
    int64): one autograd node over torch's fused softmax.  Returns ``(rows, 1)``.

    Forward: ``sm = softmax(x)`` (``exp(x_i - m) / sum_j exp(x_j - m)``, the value the pivot form
    ``e_y / (1 + s')`` of the docstring computes), rows of ``-inf`` logits set to 0.  Backward
    (closed form): ``g p_y (1[i = y] - sm_i)``, where at ``i = y`` the factor ``1 - p_y`` is the
    sum of the other entries when the label is the pivot ``p`` (first maximal logit) — accurate as
    ``p_y -> 1``, where ``1 - p_y`` formed from ``p_y`` cancels — and ``1 - p_y`` otherwise
    (``p_y <= 1/2`` there).  Not twice differentiable."""

    @staticmethod
    def forward(ctx, x, y):
        sm = softmax_rows(x)
        p_y = sm.gather(1, y)
        ctx.save_for_backward(x, sm, y, p_y)
        return p_y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        x, sm, y, p_y = ctx.saved_tensors
        idx = first_argmax(x)
        gp = g * p_y
        gx = sm * -gp
        at_p = gx.gather(1, idx)
        gx.scatter_(1, idx, torch.zeros_like(at_p))
        minus_gq = gx.sum(1, keepdim=True)  # -g p_y sum_{i != p} sm_i, without the pivot's rounding
        gx.scatter_(1, idx, at_p)
        gx.scatter_(1, y, torch.where(y == idx, -minus_gq, gp * (1 - p_y)))
        return gx, None


def logistic_loss(f: torch.Tensor, l) -> torch.Tensor:
    """Logistic loss ``log(1 + exp(-l f))`` elementwise, ``l`` in {-1, +1}.

    Catalogue section 2; seeds 000 and 003 (a classification-calibrated
    surrogate of the 0-1 loss: the minimiser of
    ``eta l(f, +1) + (1 - eta) l(f, -1)`` is ``log(eta / (1 - eta))``).
    Derivative: ``dl/df = -l sigmoid(-l f)``.

    Args:
        f: floating tensor (any shape, 0-d allowed); float16, bfloat16,
            float32 or float64, on any device.
        l: labels in {-1, +1}: a floating or integer tensor (or Python
            number) broadcastable with ``f``. Not differentiated.

    Returns:
        Tensor of the broadcast shape of ``f`` and ``l``, dtype ``f.dtype``.

    Stability: with ``z = -l f`` (an exact sign flip) the value is the
    softplus ``max(z, 0) + log1p(exp(-|z|))``: no overflow for ``|f|`` up to
    the dtype's maximum, and relatively accurate for ``z << 0`` (where it is
    ``~exp(z)``) as well as for ``z >> 0`` (``~z``). The derivative is
    ``sigmoid(z)`` in closed form (``_Softplus``), the correct ``1/2`` at
    ``z = 0`` (not the 0 of a ``relu``/``abs`` subgradient).

    Raises:
        ValueError: ``f`` not a floating tensor; ``l`` bool, complex, not
            broadcastable with ``f``, or (CPU tensors only; skipped elsewhere
            to avoid a device sync) with a value other than -1 and +1.
    """
    dtype = floating(f, "f")
    l = _check_sign_labels(l, f)
    return _Softplus.apply(_minus_l_times(l, f.to(dtype))).to(f.dtype)


def hinge_loss(f: torch.Tensor, l) -> torch.Tensor:
    """Hinge loss ``max(0, 1 - l f)`` elementwise, ``l`` in {-1, +1}.

    Catalogue section 2; seeds 000 and 003 (the minimiser of
    ``eta l(f, +1) + (1 - eta) l(f, -1)`` is ``sign(2 eta - 1)``).
    Derivative: ``-l`` where ``l f < 1``, 0 where ``l f > 1``; at the kink
    ``l f = 1`` the subgradient 0 is returned.

    Args:
        f: floating tensor (any shape, 0-d allowed); float16, bfloat16,
            float32 or float64, on any device.
        l: labels in {-1, +1}: a floating or integer tensor (or Python
            number) broadcastable with ``f``. Not differentiated.

    Returns:
        Tensor of the broadcast shape of ``f`` and ``l``, dtype ``f.dtype``.

    Stability: ``1 - f`` or ``1 + f`` (an exact sign flip, one rounding);
    no overflow for ``|f|`` up to the dtype's maximum.

    Raises:
        ValueError: ``f`` not a floating tensor; ``l`` bool, complex, not
            broadcastable with ``f``, or (CPU tensors only; skipped elsewhere
            to avoid a device sync) with a value other than -1 and +1.
    """
    dtype = floating(f, "f")
    l = _check_sign_labels(l, f)
    # relu keeps a NaN margin NaN (NaN in, NaN out); its derivative at the kink margin = 0 is 0
    return torch.relu(_minus_l_times(l, f.to(dtype), plus=1.0)).to(f.dtype)
