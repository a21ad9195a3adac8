"""scikit-learn's roc_auc_score, a reference for ``auc`` (a NumPy metric, row by row)."""

from __future__ import annotations

import numpy as np

from . import Adapter


def auc(scores, labels):
    """roc_auc_score(labels[i], scores[i]) for each row i, in the scores' dtype (bfloat16 via float32)."""
    import torch
    from sklearn.metrics import roc_auc_score
    work = torch.float32 if scores.dtype == torch.bfloat16 else scores.dtype
    s = scores.detach().to(work).cpu().numpy()
    lab = labels.detach().cpu().numpy()
    rows = [roc_auc_score(lr, sr) for sr, lr in zip(s.reshape(-1, s.shape[-1]), lab.reshape(-1, lab.shape[-1]))]
    return torch.from_numpy(np.asarray(rows, dtype=s.dtype).reshape(s.shape[:-1])).to(scores.dtype)


ADAPTERS = [
    Adapter("sklearn.roc_auc_score", "auc", "torch", auc, ("sklearn", "torch"),
            "scikit-learn sklearn.metrics.roc_auc_score (https://scikit-learn.org/)", differentiable=False,
            note="roc_auc_score(labels[i], scores[i]) per row (NumPy)"),
]
