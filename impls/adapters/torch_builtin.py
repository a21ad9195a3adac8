"""torch's own functions in the catalogue's signatures.

Each adapter calls one public torch function the way its documentation
shows.  The catalogue's sharpness k is not a parameter of torch's functions:
it is pinned to 1 (``Adapter.fixed``), since scaling x by k in the adapter
would overflow where torch does not (a finding of the wrapper's).
"""

from __future__ import annotations

from . import Adapter

DOCS = "torch {} (https://pytorch.org/docs/stable/)"


def logsumexp(x, k=1.0):
    """torch.logsumexp(x, dim=-1); the sharpness k is pinned to 1 (torch has no such parameter)."""
    import torch
    return torch.logsumexp(x, dim=-1)


def softmax(x, k=1.0):
    """torch.softmax(x, dim=-1); k pinned to 1."""
    import torch
    return torch.softmax(x, dim=-1)


def entropy(p):
    import torch
    return torch.special.entr(p).sum(-1)


def cross_entropy(logits, target):
    """F.cross_entropy on (N, C) rows, integer labels or class probabilities, reduction='none'."""
    import torch.nn.functional as F
    n = logits.shape[-1]
    t = target.reshape(-1) if not target.is_floating_point() else target.reshape(-1, n)
    return F.cross_entropy(logits.reshape(-1, n), t, reduction="none").reshape(logits.shape[:-1])


def kl_divergence(p, q):
    """F.kl_div(input=log q, target=p, reduction='none') summed over the last axis (its documented use)."""
    import torch.nn.functional as F
    return F.kl_div(q.log(), p, reduction="none").sum(-1)


def logistic_loss_soft_margin(f, l):
    import torch.nn.functional as F
    return F.soft_margin_loss(f, l, reduction="none")


def logistic_loss_bce(f, l):
    """BCE with logits at the 0/1 target (1 + l)/2: log(1 + exp(−l·f)), the logistic loss."""
    import torch.nn.functional as F
    return F.binary_cross_entropy_with_logits(f, (1 + l) / 2, reduction="none")


ADAPTERS = [
    Adapter("torch.logsumexp", "logsumexp", "torch", logsumexp, ("torch",), DOCS.format("torch.logsumexp"),
            note="torch.logsumexp(x, dim=-1)", fixed={"k": 1.0}),
    Adapter("torch.softmax", "softmax", "torch", softmax, ("torch",), DOCS.format("torch.softmax"),
            note="torch.softmax(x, dim=-1)", fixed={"k": 1.0}),
    Adapter("torch.special.entr", "entropy", "torch", entropy, ("torch",), DOCS.format("torch.special.entr"),
            note="torch.special.entr(p).sum(-1)"),
    Adapter("torch.nn.functional.cross_entropy", "cross_entropy", "torch", cross_entropy, ("torch",),
            DOCS.format("torch.nn.functional.cross_entropy"),
            note="F.cross_entropy(logits.reshape(-1, C), target, reduction='none'): integer labels or probabilities"),
    Adapter("torch.nn.functional.kl_div", "kl_divergence", "torch", kl_divergence, ("torch",),
            DOCS.format("torch.nn.functional.kl_div"), note="F.kl_div(q.log(), p, reduction='none').sum(-1)"),
    Adapter("torch.nn.functional.soft_margin_loss", "logistic_loss", "torch", logistic_loss_soft_margin, ("torch",),
            DOCS.format("torch.nn.functional.soft_margin_loss"), note="F.soft_margin_loss(f, l, reduction='none')"),
    Adapter("torch.nn.functional.binary_cross_entropy_with_logits", "logistic_loss", "torch", logistic_loss_bce,
            ("torch",), DOCS.format("torch.nn.functional.binary_cross_entropy_with_logits"),
            note="F.binary_cross_entropy_with_logits(f, (1 + l)/2, reduction='none')"),
]
