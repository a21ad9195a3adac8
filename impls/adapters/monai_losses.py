"""MONAI's losses and box utilities in the catalogue's signatures (audited with
MONAI's defaults, which are declared as conventions)."""

from __future__ import annotations

from . import Adapter, Convention

DOCS = "monai {} (https://docs.monai.io/)"
SMOOTH_DEFAULT = 1e-5  # DiceLoss's smooth_nr and smooth_dr defaults


def _dice_loss(probs, targets, squared, jaccard):
    from monai.losses import DiceLoss
    loss = DiceLoss(squared_pred=squared, jaccard=jaccard, reduction="none")  # defaults: smooth_nr = smooth_dr = 1e-5
    return loss(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1)).reshape(())


def dice(probs, targets, smooth=0.0, squared=False):
    """DiceLoss()(probs, targets) on the flattened array (batch 1, one channel): 1 − dice, with
    smooth_nr = smooth_dr = 1e-5 whatever is asked."""
    return _dice_loss(probs, targets, squared, jaccard=False)


def jaccard(probs, targets, smooth=0.0):
    """DiceLoss(jaccard=True): 1 − (2I + 1e-5)/(2(P + T − I) + 1e-5), the Jaccard loss with smooth 5e-6."""
    return _dice_loss(probs, targets, False, jaccard=True)


def giou(a, b):
    """box_pair_giou on (N, 4) pairs: the catalogue's batch axes flattened into N and restored."""
    import torch
    from monai.data.box_utils import box_pair_giou
    a, b = torch.broadcast_tensors(a, b)
    return box_pair_giou(a.reshape(-1, 4), b.reshape(-1, 4)).reshape(a.shape[:-1])


def giou_loss(a, b):
    """BoxGIoULoss(reduction='none')(a, b) on (N, 4) pairs: 1 − GIoU, the batch axes flattened and restored."""
    import torch
    from monai.losses import BoxGIoULoss
    a, b = torch.broadcast_tensors(a, b)
    return BoxGIoULoss(reduction="none")(a.reshape(-1, 4), b.reshape(-1, 4)).reshape(a.shape[:-1])


ADAPTERS = [
    Adapter("monai.DiceLoss", "dice", "torch", dice, ("monai", "torch"), DOCS.format("monai.losses.DiceLoss"),
            complement=True,
            conventions=(Convention("smooth = 1e-5", "smooth_nr = smooth_dr = 1e-5 (its defaults) whatever is asked",
                                    lambda a: {**a, "smooth": SMOOTH_DEFAULT}),),
            note="DiceLoss(squared_pred=squared, reduction='none')(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1))"),
    Adapter("monai.DiceLoss(jaccard=True)", "jaccard", "torch", jaccard, ("monai", "torch"),
            DOCS.format("monai.losses.DiceLoss"), complement=True,
            conventions=(Convention("smooth = 5e-6", "smooth_nr = smooth_dr = 1e-5 (its defaults) on 2I and 2(P + T − I): "
                                    "the Jaccard index with smooth 5e-6", lambda a: {**a, "smooth": SMOOTH_DEFAULT / 2}),),
            note="DiceLoss(jaccard=True, reduction='none')(probs.reshape(1, 1, -1), targets.reshape(1, 1, -1))"),
    Adapter("monai.box_pair_giou", "giou", "torch", giou, ("monai", "torch"), DOCS.format("monai.data.box_utils.box_pair_giou"),
            note="box_pair_giou(a.reshape(-1, 4), b.reshape(-1, 4)) in (x1, y1, x2, y2) mode"),
    Adapter("monai.BoxGIoULoss", "giou", "torch", giou_loss, ("monai", "torch"), DOCS.format("monai.losses.BoxGIoULoss"),
            complement=True,
            note="BoxGIoULoss(reduction='none')(a.reshape(-1, 4), b.reshape(-1, 4)) (box_pair_giou in float32, "
                 "cast back to the input dtype)"),
]
