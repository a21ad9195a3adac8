"""The Lovász losses in PyTorch (catalogue section 4).

Berman, Rannen Triki and Blaschko, "The Lovász-Softmax loss: a tractable
surrogate for the optimization of the intersection-over-union measure in
neural networks", CVPR 2018 (arXiv:1705.08790). The Jaccard loss of a set M
of mispredicted elements against a ground truth G is the set function
``Delta(M) = |M| / |G u M|``; its Lovász extension at an error vector ``e``
is ``sum_t g_t e_(t)`` with ``e`` sorted in decreasing order and ``g_t`` the
increase of ``Delta`` when the t-th largest error joins the set. It is
convex and piecewise linear, and equals ``Delta`` where ``e`` is 0/1.

Conventions shared by both functions:

* Both reduce over ALL elements of their inputs and return a 0-d tensor of
  the input's dtype (the reference code's ``per_image=False``).
* float16 and bfloat16 inputs are computed in float32 and the result is cast
  back.
* The sort only chooses the order: its indices are computed without
  gradient and the errors are gathered with them, so autograd differentiates
  the gather (the derivative of the loss with respect to an error is its
  increment ``g_t``; at tied errors that is the gradient of one of the
  adjacent linear pieces, a valid subgradient).
* Value checks that read the data (labels in range, probabilities in
  [0, 1]) are made only for CPU tensors: elsewhere they would force a
  device synchronisation.
"""

from __future__ import annotations

import torch

from ._torch_checks import floating

__all__ = ["lovasz_hinge", "lovasz_softmax"]

def _increments(gt_sorted: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The Lovász increments g_t along the last axis of ``gt_sorted`` (bool,
    the ground truth read in the order of decreasing errors).

    With I_t = |G minus the first t| and U_t = |G u the first t| (counted
    exactly in int64), the Jaccard loss of the first t elements is
    1 - I_t / U_t and g_t is its difference. The reference code forms that
    difference of two rounded values near 1, which loses ~log2(U^2) bits when
    g_t ~ 1 / U^2 is small; here the difference is written out:

        t-th element in G:      I drops by 1, U stays:  g_t = 1 / U_t
        t-th element not in G:  I stays, U grows by 1:  g_t = (I_{t-1} / U_{t-1}) / U_t

    a few roundings relative to g_t. U_t >= 1 for t >= 1; U_0 = |G| = 0 (no
    ground truth) makes I_0 / U_0 = 0 / 0, taken as 1 (two empty sets agree
    perfectly), which gives the reference code's g = (1, 0, ..., 0).
    """
    gt = gt_sorted.to(torch.int64)
    gts = gt.sum(dim=-1, keepdim=True)
    inter = gts - gt.cumsum(dim=-1)
    union = gts + (1 - gt).cumsum(dim=-1)
    inter_prev = torch.cat([gts, inter[..., :-1]], dim=-1)
    union_prev = torch.cat([gts, union[..., :-1]], dim=-1)
    ratio_prev = torch.where(union_prev > 0, inter_prev.to(dtype) / union_prev.clamp(min=1).to(dtype),
                             torch.ones((), dtype=dtype, device=gt.device))
    numerator = torch.where(gt_sorted, torch.ones((), dtype=dtype, device=gt.device), ratio_prev)
    return numerator / union.to(dtype)


def lovasz_hinge(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Binary Lovász hinge loss over all elements.

    Catalogue section 4; Berman et al. 2018, eq. (10)::

        e = 1 - logits * (2 labels - 1)                 (hinge errors)
        lovasz_hinge = sum_t g_t relu(e_(t))            (e sorted decreasingly)
        g_t = Delta(first t) - Delta(first t - 1),  Delta(M) = |M| / |G u M|

    with G the elements labelled 1. With no element labelled 1 the loss is
    ``max(0, 1 + max(logits))`` (g = (1, 0, ..., 0): the reference code's
    gts = 0 case). Convex in ``logits``.

    Args:
        logits: floating tensor of any shape (float16, bfloat16, float32 or
            float64, any device).
        labels: tensor of the shape of ``logits``, integer, bool or floating,
            values in {0, 1} (checked on the CPU only).

    Returns:
        0-d tensor of the dtype of ``logits`` (0 for an empty input),
        differentiable with respect to ``logits``.

    Algorithm, O(n log n) for n elements: one stable sort of the margins
    ``logits * (2 labels - 1)`` in increasing order, which is the order of
    decreasing errors and, unlike the errors, exact in every dtype (a sign
    flip), so ties are exactly the tied errors; increments from exact integer
    counts (see ``_increments``); one dot product.

    Raises:
        ValueError: ``logits`` not a floating tensor; ``labels`` not a tensor,
            of another shape, complex, or (on the CPU) not in {0, 1}.
    """
    dtype = floating(logits, "logits")
    if not isinstance(labels, torch.Tensor):
        raise ValueError(f"labels must be a torch.Tensor, got {type(labels).__name__}")
    if labels.is_complex():
        raise ValueError(f"labels must be real (0 or 1), got dtype {labels.dtype}")
    if labels.shape != logits.shape:
        raise ValueError(f"labels must have the shape of logits {tuple(logits.shape)}, got {tuple(labels.shape)}")
    fg = labels if labels.dtype == torch.bool else labels == 1
    if labels.device.type == "cpu" and labels.dtype != torch.bool and not bool(torch.all(fg | (labels == 0))):
        raise ValueError("labels must be 0 or 1 (or bool)")
    x = logits.reshape(-1).to(dtype)
    fg = fg.reshape(-1).to(logits.device)
    margins = torch.where(fg, x, -x)
    order = torch.argsort(margins.detach(), stable=True)  # increasing margin = decreasing error
    errors = 1 - margins[order]
    loss = torch.dot(torch.relu(errors), _increments(fg[order], dtype))
    return loss.to(logits.dtype)


def lovasz_softmax(probs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Multi-class Lovász-Softmax loss, averaged over the classes present.

    Catalogue section 4; Berman et al. 2018, eq. (12) with classes='present'::

        e_c = |1[labels = c] - probs[..., c]|            (errors of class c)
        loss_c = sum_t g^c_t e_c,(t)                    (e_c sorted decreasingly)
        lovasz_softmax = mean of loss_c over the classes c occurring in labels

    with g^c the increments of the Jaccard loss against G_c = {labels = c}.
    Absent classes are skipped (the reference code's classes='present'), so
    every averaged class has a nonempty ground truth. Convex in ``probs``.

    Args:
        probs: floating tensor of shape ``(N, C)`` -- or any ``(..., C)``,
            the leading axes flattened to N -- with entries in [0, 1]
            (checked on the CPU only; rows summing to 1 are not required).
        labels: integer tensor of shape ``probs.shape[:-1]``, values in
            0..C-1 (checked on the CPU only).

    Returns:
        0-d tensor of the dtype of ``probs`` (0 for N = 0), differentiable
        with respect to ``probs``.

    Algorithm, O(C N log N): the errors of every class in a (C, N) tensor,
    ONE batched stable sort along N (no loop over classes), increments from
    exact integer counts per class (``_increments``), a weighted sum. Errors
    are 1 - p on the class's rows and p elsewhere, as probabilities lie in
    [0, 1]; the sort uses them rounded in the compute dtype, so two errors
    within one rounding may come out in either order (same value; the
    gradient of either adjacent piece).

    Raises:
        ValueError: ``probs`` not a floating tensor, 0-d, or (on the CPU)
            outside [0, 1]; ``labels`` not an integer tensor, of a shape other
            than ``probs.shape[:-1]``, or (on the CPU) outside 0..C-1.
    """
    dtype = floating(probs, "probs")
    if probs.ndim == 0:
        raise ValueError("probs must have at least one dimension (the class axis is the last one)")
    if probs.device.type == "cpu" and not bool(torch.all((probs >= 0) & (probs <= 1))):
        raise ValueError("probs must lie in [0, 1]")
    if not isinstance(labels, torch.Tensor):
        raise ValueError(f"labels must be a torch.Tensor, got {type(labels).__name__}")
    if labels.dtype == torch.bool or labels.is_floating_point() or labels.is_complex():
        raise ValueError(f"labels must be an integer tensor of class indices, got dtype {labels.dtype}")
    if labels.shape != probs.shape[:-1]:
        raise ValueError(f"labels must have the shape probs.shape[:-1] = {tuple(probs.shape[:-1])}, "
                         f"got {tuple(labels.shape)}")
    classes = probs.shape[-1]
    if labels.device.type == "cpu" and labels.numel() > 0 and not bool(torch.all((labels >= 0) & (labels < classes))):
        raise ValueError(f"labels must be class indices in 0..{classes - 1}")
    p = probs.reshape(-1, classes).to(dtype).T  # (C, N)
    fg = labels.reshape(1, -1).to(probs.device) == torch.arange(classes, device=probs.device).unsqueeze(-1)
    errors = torch.where(fg, 1 - p, p)
    order = torch.argsort(errors.detach(), dim=-1, descending=True, stable=True)
    per_class = (torch.gather(errors, -1, order) * _increments(torch.gather(fg, -1, order), dtype)).sum(dim=-1)
    present = fg.any(dim=-1)
    loss = torch.where(present, per_class, 0).sum() / present.sum().clamp(min=1).to(dtype)
    return loss.to(probs.dtype)
