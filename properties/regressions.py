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

from losscheck.spec.quantity import ARRAY_KINDS


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
        from losscheck import spec
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
               "(the witness of properties/checks.py), 0.06 ULPs from it"),
    *(Regression("soft_topk", "stability[float64]",
                 {"x": [1.7976931348623155e308, 4.5887314034229055e-52, -1.5188693689678413e-69,
                        -5.232663271283324e197, 2.8123372120761224e-40], "topk": topk, "k": 4.090140519286891},
                 (-1.3231715778290862, 0.8694820397497964, -1.307070585184622, 0.0, 0.0),
                 f"as the row above, topk = {topk}: adjoints ~1e395 of both signs overflowed and met as inf − inf, "
                 "a NaN gradient (fixed: where the reverse pass gives NaN, a second one carrying a per-row "
                 "exponent gives the entries)") for topk in (4, 5)),
    Regression("soft_topk", "stability[float64]", {"x": [0.0, 3.28e155, 3.28e155], "topk": 3, "k": 1.0},
               (0.0, 0.0, 1.0),
               "the gradient itself overflows (reference [0, −inf, +inf]); the first pass's softmax backward "
               "formed Σ q·g of g = [0, −inf, +inf] as inf − inf = NaN (fixed: the per-row-exponent reverse pass)"),
    Regression("soft_topk", "stability[float64]", {"x": [0.0, 0.0, 0.0, 0.0, -1.14e280], "topk": 4, "k": 1.0},
               (0.0, 0.0, 0.0, 1.0, 0.0),
               "four tied maxima at a span of 1.1e280 (audit --seed 2, 300 examples): the exact gradient itself "
               "overflows ([inf, inf, inf, −inf, 0]); ours was NaN even with the cotangent scaled by 2^-1000 "
               "(fixed: the reverse pass carries a per-row exponent)"),
    Regression("soft_topk", "stability[float64]",
               {"x": [2.8123372120761224e-40, -1.7976931348623157e+308, -9.70336491846808e-74,
                      6.464014607124793e-224, -9.326410657995479e-123], "topk": 4, "k": 318.66582572354196},
               (0.0, 0.0, -1.1320525036947326, 1.5420279860039594, 0.4776834338598408),
               "entries 0, 2, 3, 4 tie in float64 at a span of 1.8e308 (audit --seed 1, 300 examples): one pass "
               "multiplies an adjoint by k·span ≈ 6e310, so ours was NaN even with the cotangent scaled by "
               "2^-1000; exact [-17.7, 0, -107.9, 105.2, 20.4], the rounded-steps definition ~1e600: not "
               "determined by float64 (fixed: the reverse pass carries a per-row exponent, ±inf)"),
    Regression("soft_topk", "stability[float64]",
               {"x": [1.938716671718322e+80, 1.6297743100738157e-223, 0.0, -2.184220844293461e+16,
                      -1.7976931348623157e+308], "topk": 5, "k": 1.0},
               (1.8052524802429533, -0.5325647572550636, -0.14488287557034196, -1.8889306918351751, 0.0),
               "entries 1 and 2 tie in float64 at a span of 1.8e308 (audit --seed 1, 300 examples, torch and jax): "
               "a NaN gradient from adjoints beyond any cotangent scaling (fixed: the per-row-exponent reverse "
               "pass gives [0, -inf, +inf, 0, 0]; exact [0, -0.097, 0.097, 0, 0]: not determined by float64)"),
    *(Regression("soft_topk", "stability[float64]", {"x": x, "topk": 5, "k": 1.0}, w,
                 f"entries 0-2 tie in float64 at a span of {span} ({audit}): after three passes of 1/3 each, "
                 "1 - p is what is left of a cancellation (1.1e-16 in ours, another in the definition with "
                 "its steps rounded), and the span multiplies it into the next pass's logits: ours "
                 f"{ours}, exact {exact}, rounded-steps {witness}; accepted within the chain-rule scale "
                 f"({scale}) that bounds both, as undetermined (properties/dtypes.py between)")
      for x, w, span, audit, ours, exact, witness, scale in (
          ([4.133964212907935e-243, 1.455465755532612e-77, -9.557432847130611e-36, -1.221309143113449e+16,
            2.2704378213620064e+16], (1.6954490036792187, 0.9312514160778353, 0.0, 1.9999955109615204,
                                      0.38162740118827765),
           "3.5e16", "audit --seed 1, 300 examples, torch and jax", "-1.6e46", "4.5e30", "-1.1e46", "2.1e47"),
          ([0.0, 0.0, 3.824671485846626e-25, -3005413348249142.0, 289290534693896.0], (0.0, 0.0, 1.0, 0.0, 0.0),
           "3.3e15", "audit --seed 2, 300 examples, jax", "-1.5e44", "-2.2e14", "-1.3e44", "9.9e44"))),
    Regression("soft_topk", "stability[float64]",
               {"x": [-1.2e-198, -1.05e281, -3.6e16, -5.6e-154], "topk": 4, "k": 367.0}, (1.39, 0.0, 0.0, 0.0),
               "entries 0 and 3 a near-tie at a span of 1e281: the exact gradient is ±127.5, the definition with "
               "every step rounded to float64 gives ∓inf, the value itself hinges on the tie ([1.5, 0, 1, 1.5] "
               "exactly, [1.25, 0.25, 1.25, 1.25] rounded); ours was NaN, now ±inf: not determined by float64, "
               "accepted between the two (properties/dtypes.py between)"),
    Regression("soft_topk", "stability[float64]",
               {"x": [-2.9599424206984468e+16, -2.5460584425742267e+107, -2.0933590288095516e-262,
                      6.60192842834968e-54, 1.435791322245151e+16], "topk": 5, "k": 0.9999999999999994},
               (0.0, 0.0, -1.0408189796011234, 0.0, 0.0),
               "entries 2 and 3 tie at a span of 2.5e107 (audit --seed 1, 300 examples): exact gradient ±0.26, "
               "ours ±1.7e213, the rounded-steps definition ±1e426: not determined by float64"),
    *(Regression("soft_topk", f"stability[{dt}]",
                 {"x": [1.1754943508222875e-38, -1.2827050159324438e+38, -6.952431924753203e+16, 1706442046308352.0, -0.0], "topk": 5, "k": 1.0},
                 (1.0, 0.0, 0.0, 0.0, 0.0),
                 "entries 0 and 4 tie in float64 at a span of 1.3e38: ours ±1.41e74 rounds to ±inf, the exact "
                 "gradient is ∓4.8e36, the rounded-steps definition ~1e149: not determined by the dtype")
      for dt in ("float32", "bfloat16")),
    Regression("soft_topk", "stability[float32]",
               {"x": [-1327078322470912.0, 2.7145300127499363e-23, 0.0, 0.0, 0.0], "topk": 5, "k": 1.0},
               (0.0, 1.0, 0.0, 0.0, 0.0),
               "entries 1-4 tie below float64's resolution (audit --seed 1, 300 examples): ours (float64) is the "
               "rounded-steps definition's ±1.8e57 (±inf in float32; exact ∓6.2e13), and at the argmin 3.1e26 "
               "where that definition gives 3.7e19: cancellation of terms of 1e57, within the bound at the "
               "rounded point (its running-error scale, 7e58), not at the exact one"),
    Regression("soft_topk", "stability[bfloat16]",
               {"x": [[0.0, 0.0, 0.0, 0.0, 0.0], [-3.3895313892515355e+38, 0.0, 5.443140246024981e-29, 0.0, 0.0]],
                "topk": 4, "k": 13.375},
               ((0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, -1.234375, 0.0)),
               "a tied minimum (the zero row) makes the batch non-differentiable (check_gradient_finite); in the "
               "second row ours is [0, -inf, -inf, inf, -inf], the rounded-steps definition's [., -1.5e117, "
               "-1.5e117, 4.5e117, -1.5e117] rounded to bfloat16, where the exact one-sided gradient is "
               "[0, 3.1e78, 1.03, -6.3e78, 3.1e78]: ±inf is accepted where either overflows with that sign"),
    *(Regression("cross_entropy", f"stability[{dt}]", {"logits": [-1e30, -1e30, -2e30], "target": 1}, 1.0,
                 "two tied maxima far from 0: softmax [0.5, 0.5, 0], ∂/∂logits = [0.5, −0.5, 0]; a fused jax "
                 "kernel that left every tied maximum out of the pivot's term (session 13, before it was fixed) "
                 "gave [0, 1, 0] — and no drawn example found it")
      for dt in ("float32", "float64")),
    Regression("zlpr", "gradient[float64]", {"scores": [[0.0, 616.0, 0.0]], "targets": [[0.25, 0.0, 2.2e-265]]},
               (1.0,),
               "a tiny weight carried as log t loses |log t|·eps ≈ 610 eps of relative accuracy in ∂/∂s "
               "(fixed: r = t / exp(log t) compensates)"),
    Regression("zlpr", "value[float32]", {"scores": [0.0], "targets": [1.1754943508222875e-38]}, None,
               "t = the smallest normal float32: XLA returned exp(log t) flushed to 0, and the compensation "
               "t / exp(log t) became inf (NaN value)"),
    Regression("cross_entropy", "value[float64]", {"logits": [61.0, -54.0], "target": 0}, None,
               "CE ≈ 1.1e-50: a tiny loss must keep its relative accuracy (136 ULPs seen)"),
    Regression("soft_topk", "jit[float64]",
               {"x": [0.0, -45.22410583496094, 0.8787225484848022, 26.278085708618164, 25.553707122802734],
                "topk": 3, "k": 2.5776448249816895}, None,
               "under jax.jit XLA evaluated y once for max(y) and again, FMA-contracted, for y == max(y), which then "
               "matched no entry: 1 − q summed the maximum among the others and jax.jit(soft_topk) gave "
               "[2e-18, 5e-69, 1.9e-17, 0.866, 2.134] for [0.094, 2e-52, 0.906, 0.866, 1.134] (fixed: the maximum "
               "by index)"),
    Regression("soft_topk", "gradient[float32]",
               {"x": [-1.3032075718220799e-43, -45.22410583496094, 0.8787225484848022, 26.278085708618164,
                      25.553707122802734], "topk": 3, "k": 2.5776448249816895},
               (0.37236663699150085, 0.0, 1.2382745742797852, 0.5428704619407654, 0.0),
               "the jit row above, seen as a gradient: 1.9e-18 for −0.19 (jax targets are audited under jax.jit)"),
    Regression("cross_entropy", "masked[float64]",
               {"logits": [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf, 1.3119183759133692e-140], "target": 5}, 1.0,
               "CE = x − log(e^x) = 0 exactly; the reference gave x²/2 = −8.6e-281 (at 200 digits 1 + x + x²/2 "
               "rounds to 1 + x, and its check 30 digits deeper agreed): our exact 0 was failed by 1.8e15 ULPs "
               "(fixed: the check runs the row's span deeper)"),
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
    # tiny columns: I = Σ p t underflows (p = t = 2^-750: 2^-1500) where the value (~2^-750) and the gradient
    # (~1/2) do not; the value came out 0 and the gradient 2t/D (0.98 for 0.50), fixed by scaling each column
    # by a power of two (impls/*_overlap.py: _column_scale)
    *[Regression(q, f"{prop}[{dt}]",
                 {"probs": col([2.0 ** e, 2.0 ** (e - 3)]), "targets": col([2.0 ** e, 0.0]), **extra},
                 cot if prop == "gradient" else None,
                 f"p = [2^{e}, 2^{e - 3}], t = [2^{e}, 0]: the products underflow {dt}; value 0 and a gradient 2t/D "
                 "(twice the true 1/2) before the column scaling; squared dice: 0/0, the empty sets' 1, for 0.79")
      for q, col, extra, cot in (("soft_f1", lambda v: [[x] for x in v], {"eps": 0.0}, (1.0,)),
                                 ("dice", list, {"smooth": 0.0, "squared": False}, 1.0),
                                 ("dice", list, {"smooth": 0.0, "squared": True}, 1.0),
                                 ("jaccard", list, {"smooth": 0.0}, 1.0))
      for dt, e in (("float64", -750), ("float32", -100)) for prop in ("value", "gradient")],
    Regression("auc", "value[float32]", {"scores": [0.0, 3.3e-43], "labels": [1, 0]}, None,
               "a subnormal score: XLA flushes it to 0, a comparison then sees a tie (0.5 instead of 0)"),
    Regression("giou", "stability[float64]", {"a": [[-1.0, -1.0, 6.0, 80.0]], "b": [[0.0, 0.0, 1.0, 1.0]]}, (1.0,),
               "b inside a: ∂GIoU/∂a_y1 = 7/567² exactly, but a's share of H formed as h_a/H = 1 has the derivative "
               "1/H − h_a/H², which rounded to a residual eps/H (63.9 ULPs, 59.9 allowed; fixed: the share is "
               "differentiated as 1 − (H outside a)/H, exactly constant where a spans C)"),
    Regression("giou", "stability[float64]",
               {"a": [[-5015562465890284.0, -6.3667083948115496e16, 4.3336437000721497e307, 1.8353979324568467e219]],
                "b": [[5.982203967458401e156, 1.9, 6.169147841441476e156, 7342453673930406.0]]}, (0.6811542566130204,),
               "b inside a, IoU below the smallest subnormal: the gradient is 0, but the same residual of 1/H − h_a/H² "
               "(eps/H at the scale of a's y axis) gave ±7.9e-236 in ∂/∂a_y1, ∂/∂a_y2"),
    Regression("giou", "stability[float64]",
               {"a": [[-467142189384371.9, 3.172758658534612e-31, 4.163615880537428e16, 1.945944730077049e156]],
                "b": [[-3.936541235583594e16, -4.249663441200618e16, 4.163615880537427e16, 1.56211852138046e308]]},
               (0.5489870448649534,),
               "a's share of H is 1.2e-152: formed as 1 − (H outside a)/H (a first attempt at the previous row's "
               "fix) it is lost, and ∂GIoU/∂a_x1 = −8.4e-170 came out 0; the share's value must be h_a/H"),
    Regression("ciou", "stability[float64]",
               {"a": [[0.0, 0.12396711324148793, 5e-324, 0.12396711324148793]], "b": [[0.0, 0.0, 0.0, 0.0]]},
               (0.12396711324148793,),
               "a flat box of subnormal width: atan2(w, h)'s derivative −1/w in h overflowed (the gradient "
               "[0, −inf, 0, inf] in torch), where the spec's angle of a flat box is the constant π/2 (fixed: "
               "constant angles with a zero gradient where h = 0)"),
    Regression("ciou", "stability[float32]",
               {"a": [[0.0, 0.125, 1.401298464324817e-45, 0.125]], "b": [[0.0, 0.0, 0.0, 0.0]]}, (0.125,),
               "the previous row in float32 (constructed, not drawn): a flat box of the smallest subnormal width, "
               "torch's gradient [0, −inf, 0, inf]"),
    Regression("ciou", "stability[bfloat16]",
               {"a": [[0.0, 0.125, 9.183549615799121e-41, 0.125]], "b": [[0.0, 0.0, 0.0, 0.0]]}, (0.125,),
               "as in float32 (computed in float32, where bfloat16's smallest subnormal width is subnormal too)"),
    Regression("giou", "stability[float64]", {"a": [[0.0, 5e-324, 2.0, 1e-323]], "b": [[0.0, 5e-324, 1.0, 1e-323]]},
               (1.0,),
               "ties on three sides, heights of one subnormal ulp: the one-sided ∂/∂a_y2 of the spec's branch is "
               "−1/(2h) = −inf, but torch.maximum/minimum split a tie's gradient half and half, and the mixture "
               "overflowed to +inf (found by the audit; fixed: max picks a's coordinate, min b's, as the spec)"),
    Regression("box_iou", "stability[float16]", {"a": [[0.0, 0.0, 1.1920928955078125e-07, 1.0]],
                                                  "b": [[0.0, 0.0, 5.960464477539063e-08, 1.0]]}, (1.0,),
               "the same in half precision (constructed): widths of one and two subnormal float16 ulps sharing "
               "x1, ∂/∂b_x1 overflows float16 and the half-and-half tie gradient (torch and jax alike) took the other sign"),
    Regression("giou", "stability[float32]", {"a": [[0.0, 0.0, 1.0, 1.1754943508222875e-38]],
                                               "b": [[0.5, 5.877471754111438e-39, 0.515625, 5.289724578700294e-38]]},
               (1.0,),
               "XLA flushes b's subnormal y1 to 0, a tie with a's y1: jnp.maximum's half-and-half gradient gave "
               "∂/∂a_y1 = −1.60e37, the one-sided value of neither branch (−1.39e37 for the spec's; found by the "
               "audit; fixed with the previous row)"),
    Regression("giou", "stability[float64]",
               {"a": [[0.0, 0.0, 3.3962991156564384e298, 5.310493370433129e16]],
                "b": [[-1.1996322583513824e308, -1.0, 3.396299500491828e298, 5.31049337043313e16]]}, (1.0,),
               "b spans C in y: its overhang a_lo − min(a_lo, b_lo) is 0 with derivatives +1 and −1 along two "
               "paths, which reverse mode added to ∂/∂b_y1 = 5.3e-27 one at a time (an intermediate version of the "
               "first rows' fix: 5.331174383e-27, 8.5e-8 relative); an overhang that is 0 is now a constant"),
    # degenerate boxes at pixel scale: the catalogue asks for finite values and gradients there, so a NaN is a
    # bug on the typical domain; drawn only now and then (both boxes of a row degenerate), hence kept here
    # (a third, ordinary row makes the batch (3,), a shape the properties draw: jax compiles no program for it alone)
    *(Regression(q, f"stability[{dt}]", {"a": [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 2.0, 2.0]],
                                          "b": [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 3.0, 3.0]]},
                 (1.0, 1.0, 1.0),
                 "two degenerate boxes: a point twice (union and enclosing box 0), and a segment beside a point "
                 "(union 0): 0/0 = NaN, in the value or, behind a where that guards the value only, in the gradient")
      for q in ("box_iou", "giou", "diou", "ciou") for dt in ("float16", "bfloat16", "float32", "float64")),
    Regression("logistic_loss", "stability[float64]", {"f": [0.0, 0.0, 217.0], "l": [-1.0, -1.0, 1.0]},
               (1.0, 1.0, 1.0),
               "a reference defect, not an implementation's: log(1 + e^-217) = 5.7e-95 was 0 at both of the "
               "reference's check precisions (63 and 93 digits), so every correct implementation failed "
               "(torch's soft_margin_loss, found by the third-party audit); zeros are now re-checked at +400 digits"),
]


def cases(quantity: str, prop: str) -> list[dict]:
    """The regression cases of ``quantity`` for the property named ``prop``."""
    return [r.case() for r in REGRESSIONS if r.quantity == quantity and r.property == prop]
