"""fvcore's giou_loss (Detectron2's) in the catalogue's signature."""

from __future__ import annotations

from . import Adapter


def giou(a, b):
    import torch
    from fvcore.nn import giou_loss
    a, b = torch.broadcast_tensors(a, b)
    return giou_loss(a, b, reduction="none")


ADAPTERS = [
    Adapter("fvcore.giou_loss", "giou", "torch", giou, ("fvcore", "torch"),
            "fvcore.nn.giou_loss (https://github.com/facebookresearch/fvcore)", complement=True,
            note="giou_loss(a, b, reduction='none') (eps = 1e-7)"),
]
