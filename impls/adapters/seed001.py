"""Seed 001's code snippets ("optimizing directly for the metric"), audited
like any third-party code.

The three functions below are quoted from ``../shared/seeds/001_*.txt``
as printed (only the indentation, lost in the text, is restored); the
adapters after them present each in its catalogue signature and declare its
conventions.  What the audit finds is in the report ("Third-party code");
the seed's own claims are in ``spec/overlap.py``.
"""

from __future__ import annotations

import numpy as np

from losscheck import spec

from . import Adapter, Convention, conventions

SOURCE = "seed 001, 'optimizing directly for the metric' (../shared/seeds/001_07736c44142ab38c.txt)"


# -- the snippets, verbatim ------------------------------------------------------------
def soft_f1_score(y, y_hat, eps=1e-6):
    tp = (y_hat * y).sum(0)
    fp = (y_hat * (1 - y)).sum(0)
    fn = ((1 - y_hat) * y).sum(0)
    soft_f1 = 2*tp / (2*tp + fn + fp + eps)
    loss = 1 - soft_f1
    return loss.mean()


def dice_loss(pred, target):
    import torch
    smooth = 1.
    iflat = pred.contiguous().view(-1)
    tflat = target.contiguous().view(-1)
    intersection = (iflat * tflat).sum()
    A_sum = torch.sum(tflat * iflat)
    B_sum = torch.sum(tflat * tflat)
    return 1 - ((2. * intersection + smooth) / (A_sum + B_sum + smooth) )


def get_iou(pred_bbox, gt_bbox):
    '''
    :param pred_bbox: [x1, y1, x2, y2]
    :param gt_bbox: [x1, y1, x2, y2]
    :return: iou
    '''
    ixmin = max(pred_bbox[0], gt_bbox[0])
    iymin = max(pred_bbox[1], gt_bbox[1])
    ixmax = min(pred_bbox[2], gt_bbox[2])
    iymax = min(pred_bbox[3], gt_bbox[3])
    iw = np.maximum(ixmax - ixmin + 1.0, 0.)
    ih = np.maximum(iymax - iymin + 1.0, 0.)
    inters = iw * ih
    # uni=s1+s2-inters
    uni = (pred_bbox[2] - pred_bbox[0] + 1.0) * (pred_bbox[3] - pred_bbox[1] + 1.0) + \
          (gt_bbox[2] - gt_bbox[0] + 1.0) * (gt_bbox[3] - gt_bbox[1] + 1.0) - inters
    iou = inters / uni
    return iou


# -- the adapters: catalogue signatures -------------------------------------------------
def soft_f1(probs, targets, eps=0.0):
    """Catalogue ``soft_f1(probs, targets, eps)`` per column (axis 0 is the sample), through
    ``soft_f1_score(y, y_hat, eps)`` called on one column at a time (it averages its columns'
    losses): returns the per-column loss 1 − F1."""
    import torch
    n = probs.shape[0]
    p, t = probs.reshape(n, -1), targets.reshape(n, -1)
    losses = [soft_f1_score(t[:, j:j + 1], p[:, j:j + 1], eps=eps) for j in range(p.shape[1])]
    return (torch.stack(losses) if losses else p.new_zeros(0)).reshape(probs.shape[1:])


def dice(probs, targets, smooth=0.0, squared=False):
    """Catalogue ``dice(probs, targets, smooth, squared)`` through ``dice_loss(pred, target)``,
    which fixes smooth and the denominator's form (see the conventions): returns 1 − dice."""
    return dice_loss(probs, targets)


def box_iou(a, b):
    """Catalogue ``box_iou(a, b)`` for boxes (..., 4) through ``get_iou(pred_bbox, gt_bbox)``,
    one pair at a time, in the inputs' NumPy dtype (bfloat16, which NumPy lacks, in float32)."""
    import torch
    a, b = torch.broadcast_tensors(a, b)
    work = torch.float32 if a.dtype == torch.bfloat16 else a.dtype
    pa = a.detach().to(work).cpu().numpy().reshape(-1, 4)
    pb = b.detach().to(work).cpu().numpy().reshape(-1, 4)
    out = np.array([get_iou(u, v) for u, v in zip(pa, pb)], dtype=pa.dtype).reshape(a.shape[:-1])
    return torch.from_numpy(out).to(a.dtype)



ADAPTERS = [
    Adapter("seed001.soft_f1_score", "soft_f1", "torch", soft_f1, ("torch",), SOURCE, complement=True,
            note="soft_f1_score(targets[:, j], probs[:, j], eps) per column j; eps passed through (the snippet's "
                 "default is 1e-6, the catalogue's 0)"),
    Adapter("seed001.dice_loss", "dice", "torch", dice, ("torch",), SOURCE, complement=True,
            conventions=(
                Convention("smooth = 1", "the snippet fixes smooth = 1 (its `smooth = 1.`), whatever is asked",
                           lambda a: {**a, "smooth": 1.0}),
                Convention("squared (V-Net)", "its denominator's B_sum = Σ t·t is the squared (V-Net) form's Σ t², "
                           "so the squared Dice is the one it means", lambda a: {**a, "squared": True}),
            ),
            note="dice_loss(probs, targets); smooth and squared are not passed (the snippet has no such "
                 "parameters)"),
    Adapter("seed001.get_iou", "box_iou", "torch", box_iou, ("torch",), SOURCE, differentiable=False,
            # the shift is done in float64: 0.5 ULP of a coordinate, inside float64's tolerance
            conventions=(conventions.named("pixel+1", spec.get("box_iou")),),
            note="get_iou(a[i], b[i]) for each pair, a NumPy metric without gradients"),
]
