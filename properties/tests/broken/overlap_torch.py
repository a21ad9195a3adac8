"""Broken torch overlap measures (see __init__.BROKEN for what each gets wrong).
Each is correct except for its one defect: validation, half precision and the
empty-set guard as in impls.torch_overlap unless the defect is there."""

import torch


def _f(probs, targets):
    ct = torch.float32 if probs.dtype in (torch.float16, torch.bfloat16) else probs.dtype
    return probs.to(ct), targets.to(ct)


def _ratio(num, den):
    empty = den == 0
    return torch.where(empty, torch.ones_like(num), num / torch.where(empty, torch.ones_like(den), den))


def _check(smooth):
    if smooth < 0:
        raise ValueError("smooth must be >= 0")


def jaccard_union_no_subtract(probs, targets, smooth=0.0):
    _check(smooth)
    p, t = _f(probs, targets)
    inter = (p * t).sum()
    return _ratio(inter + smooth, p.sum() + t.sum() + smooth).to(probs.dtype)  # union = P + T, not P + T − I


def jaccard_intersection_twice(probs, targets, smooth=0.0):
    _check(smooth)
    p, t = _f(probs, targets)
    inter = (p * t).sum()
    return _ratio(2 * inter + smooth, p.sum() + t.sum() - inter + smooth).to(probs.dtype)  # Σ p·t counted twice


def soft_f1_last_axis(probs, targets, eps=0.0):
    if eps < 0:
        raise ValueError("eps must be >= 0")
    p, t = _f(probs, targets)
    return _ratio(2 * (p * t).sum(-1), p.sum(-1) + t.sum(-1) + eps).to(probs.dtype)  # reduces axis −1, not 0


def dice_no_empty_guard(probs, targets, smooth=0.0, squared=False):
    _check(smooth)
    p, t = _f(probs, targets)
    size = (p * p).sum() + (t * t).sum() if squared else p.sum() + t.sum()
    return ((2 * (p * t).sum() + smooth) / (size + smooth)).to(probs.dtype)  # 0/0 = NaN for two empty sets


def dice_smooth_numerator_only(probs, targets, smooth=0.0, squared=False):
    _check(smooth)
    p, t = _f(probs, targets)
    size = (p * p).sum() + (t * t).sum() if squared else p.sum() + t.sum()
    return _ratio(2 * (p * t).sum() + smooth, size).to(probs.dtype)


def dice_ignores_squared(probs, targets, smooth=0.0, squared=False):
    _check(smooth)
    p, t = _f(probs, targets)
    return _ratio(2 * (p * t).sum() + smooth, p.sum() + t.sum() + smooth).to(probs.dtype)


def dice_seed001(probs, targets, smooth=0.0, squared=False):
    """Seed 001's dice_loss as printed, as a score: smooth = 1, A_sum = Σ t·p (instead of Σ p), B_sum = Σ t·t."""
    _check(smooth)
    p, t = _f(probs, targets)
    iflat, tflat = p.contiguous().view(-1), t.contiguous().view(-1)
    intersection = (iflat * tflat).sum()
    a_sum = torch.sum(tflat * iflat)
    b_sum = torch.sum(tflat * tflat)
    return ((2.0 * intersection + 1.0) / (a_sum + b_sum + 1.0)).to(probs.dtype)


def dice_accepts_negative_smooth(probs, targets, smooth=0.0, squared=False):
    p, t = _f(probs, targets)  # no validation of smooth: −1 gives a value outside [0, 1] silently
    size = (p * p).sum() + (t * t).sum() if squared else p.sum() + t.sum()
    return _ratio(2 * (p * t).sum() + smooth, size + smooth).to(probs.dtype)
