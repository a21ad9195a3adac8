"""segmentation_models_pytorch's losses (binary mode) in the catalogue's signatures.

smp 0.6.0 as shipped: ``from_logits=False`` where the quantity takes probabilities, the
catalogue's ``smooth`` passed through (smp's ``smooth`` enters numerator and denominator
alike), ``eps = 1e-7`` (a lower clamp on the denominator) and ``log_loss=False`` left at their
defaults.  Two things smp does on purpose, both in the known-deviations table:

* the loss of a channel whose target is empty is set to 0 (``mask = y_true.sum(dims) > 0``),
  whatever the prediction;
* the intersection is ``(Σp + Σt − ‖p − t‖₁) / 2`` = Σ min(p, t) (``soft_tversky_score``,
  the "Jaccard metric losses" of arXiv 2302.05666), which equals Σ p·t only at binary targets,
  and whose gradient at p = t is that of min, not of the product.
"""

from __future__ import annotations

from . import Adapter, Convention

DOCS = "segmentation_models_pytorch {} (https://smp.readthedocs.io/en/latest/losses.html)"


def dice(probs, targets, smooth=0.0, squared=False):
    """DiceLoss('binary', from_logits=False, smooth=smooth) on the flattened array (batch 1, one
    channel): 1 − dice.  smp has no squared form, and its smooth counts twice (see the conventions)."""
    from segmentation_models_pytorch.losses import DiceLoss
    loss = DiceLoss("binary", from_logits=False, smooth=smooth)
    return loss(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1))


def jaccard(probs, targets, smooth=0.0):
    """JaccardLoss('binary', from_logits=False, smooth=smooth) on the flattened array: 1 − jaccard."""
    from segmentation_models_pytorch.losses import JaccardLoss
    loss = JaccardLoss("binary", from_logits=False, smooth=smooth)
    return loss(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1))


def lovasz_hinge(logits, labels):
    """LovaszLoss('binary') (per_image=False) with the whole array as one image."""
    from segmentation_models_pytorch.losses import LovaszLoss
    return LovaszLoss("binary")(logits.reshape(1, 1, -1), labels.reshape(1, 1, -1))


_REQ = ("segmentation_models_pytorch", "torch")
ADAPTERS = [
    Adapter("smp.DiceLoss", "dice", "torch", dice, _REQ, DOCS.format("segmentation_models_pytorch.losses.DiceLoss"),
            complement=True,
            conventions=(Convention("no squared form", "DiceLoss has only the plain denominator Σp + Σt",
                                    lambda a: {**a, "squared": False}),
                         Convention("smooth × 2", "soft_tversky_score(α = β = ½) computes (I + s)/(I + ½FP + ½FN + s) "
                                    "= (2I + 2s)/(Σp + Σt + 2s): the catalogue's Dice with smooth 2s",
                                    lambda a: {**a, "smooth": 2 * a["smooth"]})),
            note="DiceLoss('binary', from_logits=False, smooth=smooth)(probs.reshape(1, 1, -1), "
                 "targets.reshape(1, 1, -1)) (eps = 1e-7, log_loss=False; no squared form)"),
    Adapter("smp.JaccardLoss", "jaccard", "torch", jaccard, _REQ,
            DOCS.format("segmentation_models_pytorch.losses.JaccardLoss"), complement=True,
            note="JaccardLoss('binary', from_logits=False, smooth=smooth)(probs.reshape(1, 1, -1), "
                 "targets.reshape(1, 1, -1)) (eps = 1e-7, log_loss=False)"),
    Adapter("smp.LovaszLoss", "lovasz_hinge", "torch", lovasz_hinge, _REQ,
            DOCS.format("segmentation_models_pytorch.losses.LovaszLoss"),
            note="LovaszLoss('binary')(logits.reshape(1, 1, -1), labels.reshape(1, 1, -1)) (per_image=False)"),
]
