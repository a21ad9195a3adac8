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
        return getattr(importlib.import_module(f"textbook.{self.module}"), self.name)


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
    Textbook("softmax_native", "softmax", "torch", "torch_textbook", "torch.softmax(k·x), 0 on an all-masked row"),
    Textbook("soft_argmax_softmax_index", "soft_argmax", "torch", "torch_textbook", "Σ i · torch.softmax(k·x)_i"),
    Textbook("entropy_plogp", "entropy", "torch", "torch_textbook", "−Σ p log p, 0 where p = 0"),
    Textbook("kl_divergence_plogpq", "kl_divergence", "torch", "torch_textbook", "Σ p (log p − log q) (F.kl_div), 0 where p = 0"),
    Textbook("soft_accuracy_gather", "soft_accuracy", "torch", "torch_textbook", "torch.softmax(logits) gathered at the label"),
    Textbook("hinge_clamp", "hinge_loss", "torch", "torch_textbook", "clamp(1 − l·f, min=0)"),
    Textbook("zlpr_logsumexp_zero", "zlpr", "torch", "torch_textbook", "logsumexp([s + log(1 − t), 0]) + logsumexp([−s + log t, 0]) (Su's form)"),
    Textbook("zlpr_probability_sigmoid", "zlpr_probability", "torch", "torch_textbook", "torch.sigmoid(2s)"),
    Textbook("lovasz_hinge_berman", "lovasz_hinge", "torch", "torch_textbook", "Berman's lovasz_hinge_flat + lovasz_grad"),
    Textbook("lovasz_softmax_berman", "lovasz_softmax", "torch", "torch_textbook", "Berman's lovasz_softmax_flat, classes='present'"),
    Textbook("auc_mann_whitney", "auc", "torch", "torch_textbook", "mean over positive–negative pairs of 1[s_i > s_j] + ½·1[s_i = s_j]"),
    Textbook("box_iou_upcast", "box_iou", "torch", "torch_textbook", "torchvision-style inter / union, half upcast to float32"),
    Textbook("giou_upcast", "giou", "torch", "torch_textbook", "torchvision generalized_box_iou_loss's value, half upcast to float32"),
    Textbook("diou_upcast", "diou", "torch", "torch_textbook", "torchvision distance_box_iou_loss's value, half upcast to float32"),
    Textbook("ciou_upcast", "ciou", "torch", "torch_textbook", "torchvision complete_box_iou_loss's value (α under no_grad), half upcast"),
    Textbook("soft_topk_recursion", "soft_topk", "torch", "torch_textbook", "seed 004: x − min x, then topk times p += torch.softmax(k·(1 − p)·x)"),
    Textbook("softmax_jax", "softmax", "jax", "jax_textbook", "jax.nn.softmax(k·x), 0 on an all-masked row"),
    Textbook("cross_entropy_jax", "cross_entropy", "jax", "jax_textbook", "−Σ t · jax.nn.log_softmax(x)"),
    Textbook("dice_jax", "dice", "jax", "jax_textbook", "(2Σpt + s) / (Σp + Σt + s), 1 for two empty sets"),
    Textbook("giou_jax", "giou", "jax", "jax_textbook", "torchvision's GIoU in jax.numpy, half upcast to float32"),
]
