"""kornia's losses in the catalogue's signatures."""

from __future__ import annotations

from . import Adapter

DOCS = "kornia {} (https://kornia.readthedocs.io/)"


def lovasz_hinge(logits, labels):
    """lovasz_hinge_loss(pred (B, 1, H, W), target (B, H, W)) with the whole array as one image."""
    from kornia.losses import lovasz_hinge_loss
    return lovasz_hinge_loss(logits.reshape(1, 1, -1, 1), labels.reshape(1, -1, 1))


def lovasz_softmax(probs, labels):
    """lovasz_softmax_loss(pred (1, C, N, 1), target (1, N, 1)) with logits log(probs): kornia takes the
    softmax inside, and softmax(log p) = p / Σp is p up to rounding on the simplex (a zero probability
    becomes the logit −inf and softmax gives it 0).  kornia averages over all C classes, present or not."""
    import torch
    from kornia.losses import lovasz_softmax_loss
    c = probs.shape[-1]
    logits = torch.log(probs.reshape(-1, c)).T.reshape(1, c, -1, 1)
    return lovasz_softmax_loss(logits, labels.reshape(1, -1, 1))


ADAPTERS = [
    Adapter("kornia.lovasz_hinge_loss", "lovasz_hinge", "torch", lovasz_hinge, ("kornia", "torch"),
            DOCS.format("kornia.losses.lovasz_hinge_loss"),
            note="lovasz_hinge_loss(logits.reshape(1, 1, -1, 1), labels.reshape(1, -1, 1))"),
    # The gradient is not comparable: d/dp of f(softmax(log p)) is the spec's gradient minus its p-weighted mean
    # (the Jacobian of p / Σp), a reparametrisation of ours, not kornia's; values and claims are audited.
    Adapter("kornia.lovasz_softmax_loss", "lovasz_softmax", "torch", lovasz_softmax, ("kornia", "torch"),
            DOCS.format("kornia.losses.lovasz_softmax_loss"), differentiable=False,
            note="lovasz_softmax_loss(log(probs).T.reshape(1, C, N, 1), labels.reshape(1, N, 1)): kornia takes "
                 "logits and applies the softmax inside; log(probs) gives back probs up to rounding, and the "
                 "gradient through that reparametrisation is not kornia's, so it is not audited"),
]
