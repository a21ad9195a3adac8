"""Known hard inputs: every audit of a (quantity, property) runs these first.

Each row is an input on which an implementation (ours, while it was being
written, or a third-party one) once failed, kept so that the failure stays
fixed and so that every other implementation meets it too — Hypothesis'
explicit examples, kept in a table rather than in the property code.  A row
is one case exactly as a property's draw would produce it: the arguments as
float64 / int64 NumPy values (exactly representable in the property's
dtype), and for properties with a gradient the cotangent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from spec.quantity import ARRAY_KINDS


@dataclass(frozen=True)
class Regression:
    quantity: str
    property: str  # exact property name, e.g. "stability[float32]"
    args: dict
    cotangent: tuple | float | None  # a float for a 0-d output
    why: str

    @property
    def dtype(self) -> str:
        return re.search(r"\[(\w+)\]", self.property).group(1)

    def case(self) -> dict:
        import spec
        kinds = {a.name: a.kind for a in spec.get(self.quantity).args}
        out = {"args": {k: (np.asarray(v) if kinds[k] in ARRAY_KINDS + ("label",) else v) for k, v in self.args.items()},
               "dtype": self.dtype}
        if self.cotangent is not None:
            out["cotangent"] = np.asarray(self.cotangent, dtype=np.float64)
        return out


REGRESSIONS = [
    Regression("soft_topk", "stability[float32]", {"x": [0.0, 0.0, -9.4e20, 0.0], "topk": 3, "k": 1.0},
               (1.0, 0.0, 0.0, 0.0),
               "the derivative (≈2.2e40) exceeds float32's range: a float32 backward formed inf·0 = NaN "
               "instead of ±inf (fixed: computed in float64)"),
    Regression("soft_topk", "stability[bfloat16]", {"x": [0.0, 0.0, -9.4e20, 0.0], "topk": 3, "k": 1.0},
               (0.0, 1.0, 0.0, 0.0), "as in float32: the derivative overflows bfloat16, NaN instead of ±inf"),
    Regression("zlpr", "gradient[float64]", {"scores": [[0.0, 616.0, 0.0]], "targets": [[0.25, 0.0, 2.2e-265]]},
               (1.0,),
               "a tiny weight carried as log t loses |log t|·eps ≈ 610 eps of relative accuracy in ∂/∂s "
               "(fixed: r = t / exp(log t) compensates)"),
    Regression("zlpr", "value[float32]", {"scores": [0.0], "targets": [1.1754943508222875e-38]}, None,
               "t = the smallest normal float32: XLA returned exp(log t) flushed to 0, and the compensation "
               "t / exp(log t) became inf (NaN value)"),
    Regression("cross_entropy", "value[float64]", {"logits": [61.0, -54.0], "target": 0}, None,
               "CE ≈ 1.1e-50: a tiny loss must keep its relative accuracy (136 ULPs seen)"),
    Regression("exact_accuracy", "value[float64]", {"mu": [0.0, 2.0, 1.0], "sigma": 1.0, "labels": 0}, None,
               "a too-coarse quadrature (4 Gauss–Hermite nodes) is 4% off here: 0.045208 for 0.047151; "
               "EXACT's budget draws only 3 examples, which can all be easy"),
    Regression("soft_f1", "gradient[float64]", {"probs": [[0.0], [1.0]], "targets": [[0.0], [1.192092896e-07]], "eps": 0.0},
               (1.0,),
               "one column, p = [0, 1], t = [0, 1.19e-7]: ∂/∂p_1 = 2t²/D² = 2.8e-14, but autodiff's 2t/D − 2I/D² "
               "subtracts two 2.4e-7 terms (t·p_1 cancels against itself): 9.3e5 ULPs off in torch, 1.2e5 in jax "
               "(fixed: at an entry above D/2 the gradient is 2(t(D − p) − (I − pt))/D², sums taken without it)"),
    Regression("dice", "gradient[float64]", {"probs": [0.0, 1.0], "targets": [0.0, 1.192092896e-07], "smooth": 0.0,
                                             "squared": False}, 1.0,
               "as soft_f1's row: ∂/∂p_1 = 2t²/D² = 2.8e-14, autodiff's 2t/D − (2I + s)/D² cancels t·p_1 against "
               "itself: 9.3e5 ULPs off in torch, 1.2e5 in jax (fixed: the closed form soft_f1 uses, smooth in the "
               "numerator)"),
    Regression("jaccard", "gradient[float64]", {"probs": [0.0, 1.0], "targets": [0.0, 1.192092896e-07], "smooth": 0.0},
               1.0,
               "∂/∂p_1 = (t(P + T + 2s) − I − s)/E² = t²/E² = 1.4e-14, autodiff's t/E − (I + s)(1 − t)/E² cancels "
               "t·p_1 against itself: 9.3e5 ULPs off in torch and jax (fixed: at an entry above (P + T + 2s)/2 the "
               "numerator is t(P + T + 2s − p) − (I − pt) − s, sums taken without it)"),
    Regression("auc", "value[float32]", {"scores": [0.0, 3.3e-43], "labels": [1, 0]}, None,
               "a subnormal score: XLA flushes it to 0, a comparison then sees a tie (0.5 instead of 0)"),
]


def cases(quantity: str, prop: str) -> list[dict]:
    """The regression cases of ``quantity`` for the property named ``prop``."""
    return [r.case() for r in REGRESSIONS if r.quantity == quantity and r.property == prop]
