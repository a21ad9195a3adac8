"""Broken torch ZLPR implementations (see __init__.BROKEN)."""

import torch


def zlpr_clip_log(scores, targets):
    # seed 002's first attempt: clip, then log — a masked position (s = −1e7, t = 0) gives
    # t·e^{−s} = 0·inf = NaN in float32, or leaks through the clip.
    s = scores.clamp(-1e7, 1e7)
    pos = torch.log(1 + (targets * torch.exp(-s)).clamp(max=1e30).sum(-1))
    neg = torch.log(1 + ((1 - targets) * torch.exp(s)).clamp(max=1e30).sum(-1))
    return pos + neg


def zlpr_naive(scores, targets):
    return torch.log(1 + ((1 - targets) * torch.exp(scores)).sum(-1)) + torch.log(1 + (targets * torch.exp(-scores)).sum(-1))


def zlpr_probability_sigma_s(scores):
    return torch.sigmoid(scores)  # σ(s) instead of σ(2s)
