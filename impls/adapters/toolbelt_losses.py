"""pytorch_toolbelt's losses in the catalogue's signatures (pytorch-toolbelt 0.8.0).

Binary mode, ``from_logits=False`` where the quantity takes probabilities, the catalogue's
``smooth`` / ``eps`` passed through, the other defaults kept (``eps = 1e-7``: a lower clamp on
the denominator of Dice and Jaccard).  Like smp (which took these losses from here), Dice and
Jaccard set the loss of an empty target to 0 whatever the prediction; unlike smp 0.6.0 the
intersection is the catalogue's Σ p·t.  ``LovaszLoss`` takes probabilities (no softmax inside),
so it presents ``lovasz_softmax`` exactly.
"""

from __future__ import annotations

from . import Adapter, Convention

DOCS = "pytorch_toolbelt {} (https://github.com/BloodAxe/pytorch-toolbelt)"


def dice(probs, targets, smooth=0.0, squared=False):
    """DiceLoss('binary', from_logits=False, smooth=smooth) on the flattened array: 1 − dice."""
    from pytorch_toolbelt.losses import DiceLoss
    loss = DiceLoss("binary", from_logits=False, smooth=smooth)
    return loss(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1))


def jaccard(probs, targets, smooth=0.0):
    """JaccardLoss('binary', from_logits=False, smooth=smooth) on the flattened array: 1 − jaccard."""
    from pytorch_toolbelt.losses import JaccardLoss
    loss = JaccardLoss("binary", from_logits=False, smooth=smooth)
    return loss(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1))


def lovasz_hinge(logits, labels):
    """BinaryLovaszLoss() (per_image=False) on the flattened array."""
    from pytorch_toolbelt.losses import BinaryLovaszLoss
    return BinaryLovaszLoss()(logits.reshape(-1), labels.reshape(-1))


def lovasz_softmax(probs, labels):
    """LovaszLoss() (classes='present', per_image=False) on probabilities (N, C) given as one image
    (1, C, N, 1): a 3-d input would be read as a sigmoid output (B, H, W)."""
    from pytorch_toolbelt.losses import LovaszLoss
    c = probs.shape[-1]
    return LovaszLoss()(probs.reshape(-1, c).T.reshape(1, c, -1, 1), labels.reshape(1, -1, 1))


def soft_f1(probs, targets, eps=0.0):
    """soft_micro_f1(preds, targets, eps) on one column at a time (it averages its columns' losses):
    the per-column loss 1 − F1.  (BinarySoftF1Loss / SoftF1Loss take logits and clamp the sigmoid /
    softmax to [1e-6, 1 − 1e-6]; the probability function is the one the catalogue's signature takes.)"""
    import torch
    from pytorch_toolbelt.losses import soft_micro_f1
    n = probs.shape[0]
    p, t = probs.reshape(n, -1), targets.reshape(n, -1)
    losses = [soft_micro_f1(p[:, j:j + 1], t[:, j:j + 1], eps=eps) for j in range(p.shape[1])]
    return (torch.stack(losses) if losses else p.new_zeros(0)).reshape(probs.shape[1:])


_REQ = ("pytorch_toolbelt", "torch")
ADAPTERS = [
    Adapter("toolbelt.DiceLoss", "dice", "torch", dice, _REQ, DOCS.format("pytorch_toolbelt.losses.DiceLoss"),
            complement=True,
            conventions=(Convention("no squared form", "DiceLoss has only the plain denominator Σp + Σt",
                                    lambda a: {**a, "squared": False}),),
            note="DiceLoss('binary', from_logits=False, smooth=smooth)(probs.reshape(1, 1, -1), "
                 "targets.reshape(1, 1, -1)) (eps = 1e-7)"),
    Adapter("toolbelt.JaccardLoss", "jaccard", "torch", jaccard, _REQ, DOCS.format("pytorch_toolbelt.losses.JaccardLoss"),
            complement=True,
            note="JaccardLoss('binary', from_logits=False, smooth=smooth)(probs.reshape(1, 1, -1), "
                 "targets.reshape(1, 1, -1)) (eps = 1e-7)"),
    Adapter("toolbelt.BinaryLovaszLoss", "lovasz_hinge", "torch", lovasz_hinge, _REQ,
            DOCS.format("pytorch_toolbelt.losses.BinaryLovaszLoss"),
            note="BinaryLovaszLoss()(logits.reshape(-1), labels.reshape(-1)) (per_image=False)"),
    Adapter("toolbelt.LovaszLoss", "lovasz_softmax", "torch", lovasz_softmax, _REQ,
            DOCS.format("pytorch_toolbelt.losses.LovaszLoss"),
            note="LovaszLoss()(probs.T.reshape(1, C, N, 1), labels.reshape(1, N, 1)) (probabilities; classes='present')"),
    Adapter("toolbelt.soft_micro_f1", "soft_f1", "torch", soft_f1, _REQ,
            DOCS.format("pytorch_toolbelt.losses.soft_micro_f1"), complement=True,
            note="soft_micro_f1(probs[:, j:j+1], targets[:, j:j+1], eps=eps) per column"),
]
