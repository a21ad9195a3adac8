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
    cotangent: tuple | None
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
    Regression("soft_topk", "stability[float64]",
               {"x": [1.7976931348623155e308, 4.5887314034229055e-52, -1.5188693689678413e-69,
                      -5.232663271283324e197, 2.8123372120761224e-40], "topk": 3, "k": 4.090140519286891},
               (-1.3231715778290862, 0.8694820397497964, -1.307070585184622, 0.0, 0.0),
               "entries 1, 2, 4 tie in float64 (4.6e-52 apart at a span of 5.2e197): the gradient is ~1e198, "
               "the exact one 1.38 within ~1e185; accepted as the spec with every step rounded to float64 "
               "(the witness of properties/checks.py), 0.06 ULPs from it (topk = 4, 5: NaN, open)"),
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
    Regression("auc", "value[float32]", {"scores": [0.0, 3.3e-43], "labels": [1, 0]}, None,
               "a subnormal score: XLA flushes it to 0, a comparison then sees a tie (0.5 instead of 0)"),
]


def cases(quantity: str, prop: str) -> list[dict]:
    """The regression cases of ``quantity`` for the property named ``prop``."""
    return [r.case() for r in REGRESSIONS if r.quantity == quantity and r.property == prop]
