"""Textbook implementations: code as tutorials write it.

The catalogue's masks and empty sets are handled in the simplest way that
works (a ``where`` before the division or the log, so no NaN reaches the
gradient), and nothing more: no log1p near 0, no care for the dtype's range.
They are correct implementations, and the default verdict (gate ``bug``)
must pass every one; their accuracy and range findings are listed, not
counted (properties/tests/test_textbook.py pins that).
"""

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Textbook:
    name: str
    quantity: str
    framework: str
    module: str
    how: str

    @property
    def target(self) -> str:
        return f"properties/tests/textbook/{self.module}.py:{self.name}"

    def load(self) -> Callable:
        import importlib
        return getattr(importlib.import_module(f"properties.tests.textbook.{self.module}"), self.name)


TEXTBOOK = [
    Textbook("logsumexp_max_shift", "logsumexp", "torch", "torch_textbook", "m + log Σ exp(k·x − m), m = max k·x"),
    Textbook("logsumexp_native", "logsumexp", "torch", "torch_textbook", "torch.logsumexp(k·x) / k"),
    Textbook("cross_entropy_log_softmax", "cross_entropy", "torch", "torch_textbook", "−Σ t · log_softmax(x)"),
    Textbook("logistic_softplus", "logistic_loss", "torch", "torch_textbook", "softplus(−l·f)"),
    Textbook("dice_plain", "dice", "torch", "torch_textbook", "(2Σpt + s) / (Σp + Σt + s), 1 for two empty sets"),
    Textbook("jaccard_plain", "jaccard", "torch", "torch_textbook", "(Σpt + s) / (Σp + Σt − Σpt + s)"),
    Textbook("soft_f1_plain", "soft_f1", "torch", "torch_textbook", "2Σpt / (Σp + Σt + eps) per column"),
    Textbook("soft_auc_all_pairs", "soft_auc", "torch", "torch_textbook", "mean of σ((s_i − s_j)/τ) over positive–negative pairs"),
    Textbook("logsumexp_jax", "logsumexp", "jax", "jax_textbook", "jax.nn.logsumexp(k·x) / k"),
]
