"""Deliberately broken implementations: the suite must catch every one.

Each entry of ``BROKEN`` names the quantity, the framework, the callable
and the property expected to catch it (a prefix of the property name).
The meta-tests audit each with that property and assert it fails; our own
implementations are audited by the ordinary tests and must never fail.
"""

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Broken:
    name: str
    quantity: str
    framework: str
    module: str  # module under properties.tests.broken
    caught_by: str  # property-name prefix expected to fail
    why: str

    @property
    def target(self) -> str:
        return f"properties/tests/broken/{self.module}.py:{self.name}"

    def load(self) -> Callable:
        import importlib
        return getattr(importlib.import_module(f"properties.tests.broken.{self.module}"), self.name)


_T, _J = "smoothing_torch", "smoothing_jax"
BROKEN = [
    Broken("lse_no_max_shift", "logsumexp", "torch", _T, "stability", "log Σ exp(k·x) overflows to inf for large x"),
    Broken("lse_forgot_inv_k", "logsumexp", "torch", _T, "value", "returns log Σ exp(k·x), without the 1/k"),
    Broken("lse_nan_all_masked", "logsumexp", "torch", _T, "masked", "max-shift with the -inf max of an all-masked row: NaN"),
    Broken("lse_half_native", "logsumexp", "torch", _T, "value[float16]", "accumulates in float16 instead of float32"),
    Broken("softmax_wrong_backward", "softmax", "torch", _T, "gradient", "hand-written backward drops the −p·Σ w p term"),
    Broken("softmax_ignores_k", "softmax", "torch", _T, "value", "softmax(x) whatever k"),
    Broken("softmax_nan_all_masked", "softmax", "torch", _T, "masked", "0/0 on an all-masked row"),
    Broken("softmax_accepts_k0", "softmax", "torch", _T, "contract:k", "no validation: k = 0 returns a uniform vector"),
    Broken("soft_argmax_one_based", "soft_argmax", "torch", _T, "value", "indices counted from 1 (seed 004's convention)"),
    Broken("soft_topk_no_min_shift", "soft_topk", "torch", _T, "value", "skips x ← x − min(x): not the seed's recursion"),
    Broken("soft_topk_k_first_pass_only", "soft_topk", "torch", _T, "value", "applies k in the first pass only"),
    Broken("soft_topk_renormalised", "soft_topk", "torch", _T, "claim:sum", "divides each pass by its max: Σ p ≠ topk"),
    Broken("lse_concrete_k_check", "logsumexp", "jax", _J, "jit", "validates k with float(k): fails under jax.jit"),
    Broken("softmax_no_max_shift", "softmax", "jax", _J, "stability", "exp(k·x)/Σ exp(k·x) overflows: NaN"),
    Broken("soft_argmax_one_based_jax", "soft_argmax", "jax", _J, "value", "indices counted from 1"),
    Broken("lse_nan_grad_all_masked_jax", "logsumexp", "jax", _J, "masked", "jax.nn.logsumexp-style: NaN gradient on an all-masked row"),
]
