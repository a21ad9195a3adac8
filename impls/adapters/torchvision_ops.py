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


def giou(a, b):
    import torch
    from torchvision.ops import generalized_box_iou_loss
    a, b = torch.broadcast_tensors(a, b)
    return generalized_box_iou_loss(a, b, reduction="none")


def diou(a, b):
    import torch
    from torchvision.ops import distance_box_iou_loss
    a, b = torch.broadcast_tensors(a, b)
    return distance_box_iou_loss(a, b, reduction="none")


def ciou(a, b):
    import torch
    from torchvision.ops import complete_box_iou_loss
    a, b = torch.broadcast_tensors(a, b)
    return complete_box_iou_loss(a, b, reduction="none")


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
