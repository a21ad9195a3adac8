"""Broken torch AUC implementations (see __init__.BROKEN)."""

import torch


def _pairs(scores, labels):
    pos = labels.bool()
    d = scores.unsqueeze(-1) - scores.unsqueeze(-2)  # d[i, j] = s_i − s_j
    w = (pos.unsqueeze(-1) & ~pos.unsqueeze(-2)).to(scores.dtype)
    return d, w


def auc_ties_zero(scores, labels):
    d, w = _pairs(scores.double(), labels)
    return ((d > 0).double() * w).sum((-1, -2)).div(w.sum((-1, -2))).to(scores.dtype)


def auc_swapped(scores, labels):
    d, w = _pairs(scores.double(), labels)
    h = (d < 0).double() + 0.5 * (d == 0).double()
    return (h * w).sum((-1, -2)).div(w.sum((-1, -2))).to(scores.dtype)


def soft_auc_ignores_tau(scores, labels, tau=1.0):
    d, w = _pairs(scores, labels)
    return (torch.sigmoid(d) * w).sum((-1, -2)) / w.sum((-1, -2))


def auc_pairs_nan_swallowed(scores, labels):
    """The textbook pairwise AUC, right on finite scores; a NaN score compares False with everything,
    so it counts as a plain loss and the answer stays a finite, plausible number."""
    d, w = _pairs(scores.double(), labels)
    h = (d > 0).double() + 0.5 * (d == 0).double()
    return (h * w).sum((-1, -2)).div(w.sum((-1, -2))).to(scores.dtype)
