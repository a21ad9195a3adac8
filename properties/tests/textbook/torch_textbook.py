"""Textbook torch implementations (see __init__.py): as tutorials write them."""

import torch
import torch.nn.functional as F


def _rows_all_masked(x):
    return torch.isneginf(x).all(dim=-1, keepdim=True)


def logsumexp_max_shift(x, k=1.0):
    z = k * x
    m = z.max(dim=-1, keepdim=True).values
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all-masked row: shift by 0
    s = torch.exp(z - m).sum(dim=-1, keepdim=True)
    ok = s > 0
    out = torch.where(ok, m + torch.log(torch.where(ok, s, torch.ones_like(s))), torch.full_like(s, -torch.inf))
    return (out / k).squeeze(-1)


def logsumexp_native(x, k=1.0):
    empty = _rows_all_masked(x)
    z = torch.where(empty, torch.zeros_like(x), k * x)  # torch.logsumexp's gradient is NaN on an all -inf row
    return torch.where(empty.squeeze(-1), torch.full_like(z[..., 0], -torch.inf), torch.logsumexp(z, dim=-1) / k)


def cross_entropy_log_softmax(logits, target):
    logp = F.log_softmax(logits, dim=-1)
    if not torch.is_floating_point(target):
        return -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    masked = torch.isneginf(logp) & (target == 0)  # a masked class with weight 0 contributes nothing
    return -(target * torch.where(masked, torch.zeros_like(logp), logp)).sum(dim=-1)


def logistic_softplus(f, l):
    return F.softplus(-l * f)


def dice_plain(probs, targets, smooth=0.0, squared=False):
    num = 2 * (probs * targets).sum() + smooth
    den = ((probs ** 2).sum() + (targets ** 2).sum() if squared else probs.sum() + targets.sum()) + smooth
    empty = den == 0
    return torch.where(empty, torch.ones_like(den), num / torch.where(empty, torch.ones_like(den), den))


def jaccard_plain(probs, targets, smooth=0.0):
    inter = (probs * targets).sum()
    den = probs.sum() + targets.sum() - inter + smooth
    empty = den == 0
    return torch.where(empty, torch.ones_like(den), (inter + smooth) / torch.where(empty, torch.ones_like(den), den))


def soft_f1_plain(probs, targets, eps=0.0):
    num = 2 * (probs * targets).sum(dim=0)
    den = probs.sum(dim=0) + targets.sum(dim=0) + eps
    empty = den == 0
    return torch.where(empty, torch.ones_like(den), num / torch.where(empty, torch.ones_like(den), den))


def soft_auc_all_pairs(scores, labels, tau=1.0):
    lab = labels.to(scores.dtype)
    pair = lab.unsqueeze(-1) * (1 - lab).unsqueeze(-2)  # positive i, negative j
    s = torch.sigmoid((scores.unsqueeze(-1) - scores.unsqueeze(-2)) / tau)
    return (pair * s).sum(dim=(-2, -1)) / (lab.sum(-1) * (1 - lab).sum(-1))
