"""torchmetrics' binary_auroc, a reference for ``auc`` (torchmetrics 1.9.0)."""

from __future__ import annotations

from . import Adapter


def auc(scores, labels):
    """binary_auroc(scores[i], labels[i]) for each row i (thresholds=None: the exact, unbinned curve).
    torchmetrics applies a sigmoid to scores outside [0, 1] (normalization='sigmoid', its default)."""
    import torch
    from torchmetrics.functional.classification import binary_auroc
    s = scores.detach().reshape(-1, scores.shape[-1])
    lab = labels.reshape(-1, labels.shape[-1]).long()
    rows = [binary_auroc(sr, lr) for sr, lr in zip(s, lab)]
    out = torch.stack(rows) if rows else s.new_zeros(0)
    return out.to(scores.dtype).reshape(scores.shape[:-1])


ADAPTERS = [
    Adapter("torchmetrics.binary_auroc", "auc", "torch", auc, ("torchmetrics", "torch"),
            "torchmetrics.functional.classification.binary_auroc (https://lightning.ai/docs/torchmetrics/)",
            differentiable=False,
            note="binary_auroc(scores[i], labels[i].long()) per row (thresholds=None)"),
]
