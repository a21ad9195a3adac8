"""kornia's losses in the catalogue's signatures."""

from __future__ import annotations

from . import Adapter

DOCS = "kornia {} (https://kornia.readthedocs.io/)"


def lovasz_hinge(logits, labels):
    """lovasz_hinge_loss(pred (B, 1, H, W), target (B, H, W)) with the whole array as one image."""
    from kornia.losses import lovasz_hinge_loss
    return lovasz_hinge_loss(logits.reshape(1, 1, -1, 1), labels.reshape(1, -1, 1))


ADAPTERS = [
    Adapter("kornia.lovasz_hinge_loss", "lovasz_hinge", "torch", lovasz_hinge, ("kornia", "torch"),
            DOCS.format("kornia.losses.lovasz_hinge_loss"),
            note="lovasz_hinge_loss(logits.reshape(1, 1, -1, 1), labels.reshape(1, -1, 1))"),
]
