"""Broken torch classification losses (see __init__.BROKEN for what each gets wrong)."""

import math

import torch


def _labels_to_target(logits, target):
    if not target.is_floating_point():
        return torch.nn.functional.one_hot(target, logits.shape[-1]).to(logits.dtype)
    return target


def ce_log_of_softmax(logits, target):
    t = _labels_to_target(logits, target)
    return -(t * torch.log(torch.softmax(logits, -1))).sum(-1)  # log(0) = -inf for large logit gaps


def ce_soft_targets_argmax(logits, target):
    if target.is_floating_point():
        target = target.argmax(-1)  # label smoothing / distillation silently lost
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1),
                                             reduction="none").reshape(logits.shape[:-1]).to(logits.dtype)


def ce_masked_nan(logits, target):
    t = _labels_to_target(logits, target)
    return -(t * torch.log_softmax(logits, -1)).sum(-1)  # 0 · (−inf) = NaN at a masked class


def entropy_nan_at_zero(p):
    return -(p * torch.log(p)).sum(-1)  # 0 · log 0 = NaN


def kl_swapped(p, q):
    return (q * (torch.log(q) - torch.log(p))).sum(-1)  # KL(q‖p)


def kl_seed003(p, q):
    return (p * torch.log(p + q)).sum(-1)  # seed 003's typo


def soft_accuracy_batch_axis(logits, labels):
    p = torch.softmax(logits, 0)  # softmax over the batch axis
    return p.gather(-1, labels.unsqueeze(-1)).squeeze(-1) if p.ndim > 1 else p[labels]


def logistic_naive(f, l):
    return torch.log(1 + torch.exp(-l * f))  # overflows for −l·f ≳ 89 (float32); log(1 + tiny) = 0


def hinge_wrong_sign(f, l):
    return torch.clamp(1 + l * f, min=0)


def logistic_no_label_check(f, l):
    return torch.nn.functional.softplus(-l * f)  # accepts l = 0


_ = math


def logistic_softplus_threshold(f, l):
    """softplus with a threshold of 20 (as torch.nn.functional.softplus): beyond it log(1 + e^z) is
    returned as z, dropping e^−20 ≈ 2e-9 — correct to 1e-10 relative, which float64 resolves."""
    z = -l * f
    return torch.where(z > 20, z, torch.log1p(torch.exp(torch.clamp(z, max=20))))
