"""torchvision.ops box measures in the catalogue's signatures (torch 2.14.1 + torchvision 0.29.1,
the ``thirdparty`` nox session).  The losses are used as shipped: eps = 1e-7 added to the
union and the enclosing area (see the known-deviations table for what that does to small boxes)."""

from __future__ import annotations

from . import Adapter

DOCS = "torchvision.ops.{} (https://pytorch.org/vision/stable/ops.html)"


def box_iou(a, b):
    """box_iou is pairwise (N × M): the diagonal of the flattened pairs."""
    import torch
    from torchvision.ops import box_iou as pairwise
    a, b = torch.broadcast_tensors(a, b)
    return pairwise(a.reshape(-1, 4), b.reshape(-1, 4)).diagonal().reshape(a.shape[:-1])


def _loss(name):
    def loss(a, b):
        import torch
        import torchvision.ops
        a, b = torch.broadcast_tensors(a, b)
        return getattr(torchvision.ops, name)(a, b, reduction="none")
    loss.__name__ = name.replace("_loss", "")
    return loss


giou = _loss("generalized_box_iou_loss")
giou.__name__ = "giou"
diou = _loss("distance_box_iou_loss")
diou.__name__ = "diou"
ciou = _loss("complete_box_iou_loss")
ciou.__name__ = "ciou"

_REQ = ("torchvision", "torch")
ADAPTERS = [
    Adapter("torchvision.box_iou", "box_iou", "torch", box_iou, _REQ, DOCS.format("box_iou"),
            note="box_iou(a.reshape(-1, 4), b.reshape(-1, 4)).diagonal()"),
    Adapter("torchvision.generalized_box_iou_loss", "giou", "torch", giou, _REQ, DOCS.format("generalized_box_iou_loss"),
            complement=True, note="generalized_box_iou_loss(a, b, reduction='none') (eps = 1e-7)"),
    Adapter("torchvision.distance_box_iou_loss", "diou", "torch", diou, _REQ, DOCS.format("distance_box_iou_loss"),
            complement=True, note="distance_box_iou_loss(a, b, reduction='none') (eps = 1e-7)"),
    Adapter("torchvision.complete_box_iou_loss", "ciou", "torch", ciou, _REQ, DOCS.format("complete_box_iou_loss"),
            complement=True, note="complete_box_iou_loss(a, b, reduction='none') (eps = 1e-7)"),
]
