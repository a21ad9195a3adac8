"""Broken torch Lovász losses (see __init__.BROKEN for what each gets wrong)."""

import torch


def _increments(gt, dtype, shift=0):
    """The reference code's lovasz_grad along the last axis; ``shift`` = 1 makes its
    cumsums exclusive (off by one)."""
    gt = gt.to(dtype)
    gts = gt.sum(-1, keepdim=True)
    cg, cn = gt.cumsum(-1), (1 - gt).cumsum(-1)
    if shift:
        cg, cn = cg - gt, cn - (1 - gt)
    jaccard = 1 - (gts - cg) / (gts + cn).clamp(min=1)
    return torch.cat([jaccard[..., :1], jaccard[..., 1:] - jaccard[..., :-1]], dim=-1)


def _hinge(logits, labels, *, descending=True, sort=True, relu=True, shift=0):
    x = logits.reshape(-1).to(torch.float64)
    fg = labels.reshape(-1) == 1
    errors = 1 - torch.where(fg, x, -x)
    order = torch.argsort(errors.detach(), descending=descending, stable=True) if sort else torch.arange(x.numel())
    e = errors[order]
    return (torch.dot(torch.relu(e) if relu else e, _increments(fg[order], torch.float64, shift))).to(logits.dtype)


def lovasz_hinge_unsorted(logits, labels):
    return _hinge(logits, labels, sort=False)


def lovasz_hinge_ascending(logits, labels):
    return _hinge(logits, labels, descending=False)


def lovasz_hinge_no_relu(logits, labels):
    return _hinge(logits, labels, relu=False)


def lovasz_hinge_cumsum_off_by_one(logits, labels):
    return _hinge(logits, labels, shift=1)


def lovasz_hinge_relu_straight_through(logits, labels):
    """The right value, but relu's derivative taken as 1 everywhere (straight-through)."""
    x = logits.reshape(-1).to(torch.float64)
    fg = labels.reshape(-1) == 1
    errors = 1 - torch.where(fg, x, -x)
    order = torch.argsort(errors.detach(), descending=True, stable=True)
    e = errors[order]
    e = e + (torch.relu(e) - e).detach()
    return torch.dot(e, _increments(fg[order], torch.float64)).to(logits.dtype)


def lovasz_softmax_all_classes(probs, labels):
    """Averages over all C classes instead of the present ones."""
    c = probs.shape[-1]
    p = probs.reshape(-1, c).to(torch.float64).T
    fg = labels.reshape(1, -1) == torch.arange(c).unsqueeze(-1)
    errors = torch.where(fg, 1 - p, p)
    order = torch.argsort(errors.detach(), dim=-1, descending=True, stable=True)
    per_class = (torch.gather(errors, -1, order) * _increments(torch.gather(fg, -1, order), torch.float64)).sum(-1)
    return per_class.mean().to(probs.dtype)


def lovasz_hinge_ascending_concave(logits, labels):
    """lovasz_hinge_ascending again: sorted increasingly, the sum is the minimum over orders — concave."""
    return _hinge(logits, labels, descending=False)
