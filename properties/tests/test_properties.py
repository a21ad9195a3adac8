"""Every generic property on every implementation of every quantity.

One pytest item per quantity × framework × device × property, so one
failure never hides another; devices that do not exist here are skipped
visibly (the skip reason names them).
"""

import pytest

import impls
import spec
from properties import frameworks
from properties.checks import Target, properties_for
from properties.engine import make_settings, run_property

#: Open findings on our own implementations, tracked on the issue; visible as xfail, never hidden.
#: They run without shrinking (the counterexamples are in the issue note).  Fixed and moved to
#: properties/regressions.py: soft_topk's float32/bfloat16 NaN gradients (now computed in float64),
#: zlpr's tiny-weight gradient (log-weight rounding compensated), the reference's own cancellation
#: (CE ≈ 1e-50; the reference now measures the digits a row loses), soft_f1's, dice's and jaccard's
#: cancelling gradients (issue 4; a dominant entry's derivative uses sums taken without it), giou's gradient
#: residual where a box spans the enclosing box and ciou's overflowing angle derivative of a flat box.
#: The box quantities' claim:translation failed on draws off the dyadic grid (the shifted boxes rounded):
#: the claim regime now draws related boxes on the grid, where our code is exactly translation invariant.
OPEN = {
    ("soft_topk", "stability[float64]"):
        "open (issue 2): where a near-tie below float64's resolution meets a huge span, the gradient is not "
        "determined by the error model. x = [-5.96e130, 1.26e-300, 1.89e200, -4.2e-136, -8.9e15], topk = 5, "
        "k = 1, w = e1 (entries 1, 3, 4 tie in float64): the exact spec gives ∓7.45e129, the spec with only z1 "
        "rounded ±8.88e259 (ours), the spec with every step rounded (the witness of properties/checks.py) "
        "±1e390 = ±inf: our recursion's intermediates (h = x/2 − min/2, c = 1 − p carried, frames, one-hot passes "
        "detached) are not the spec's steps, and admissible roundings move this gradient from 1e129 to overflow. "
        "Also NaN gradients (a defect) at x = [1.8e308, 4.6e-52, -1.5e-69, -5.2e197, 2.8e-40], k = 4.09, "
        "topk 4–5, w = [-1.32, 0.87, -1.31, 0, 0]: entries 1, 2, 4 tie, adjoints ~1e395 of both signs overflow "
        "and meet as inf − inf (the second pass's softmax backward, the argmin's −Σ), not only as inf·0; the "
        "property accepts there the exact gradient (finite, within ~4e185) or the witness's (±inf, but 5.4e157 "
        "at the argmin: ±1e395 cancelling to 1e-238), neither within reach of a float64 reverse pass "
        "(topk = 3 now holds through the witness: properties/regressions.py). Also NaN where the reference "
        "itself overflows: x = [0, 3.28e155, 3.28e155], topk = 3, k = 1, w = e2 expects [0, -inf, inf]; the "
        "first pass's softmax backward forms Σ q·g of g = [0, -inf, inf] (exactly 0 before overflow), and the "
        "argmin's −Σ likewise: a cotangent scaled by 2^-E (exact by linearity) would give [0, -inf, inf]; and "
        "x = [-1.2e-198, -1.05e281, -3.6e16, -5.6e-154], topk = 4, k = 367, w = 1.39·e0, "
        "entries 0 and 3 a near-tie at a span of 1e281 (reference ±127.3, ours NaN, and ±inf even with the "
        "cotangent scaled by 2^-1000; audit --seed 1 and --seed 2)",
    **{("soft_topk", f"stability[{dt}]"):
       "open (as stability[float64], found by a 300-example audit): x = [1.18e-38, -1.28e38, -6.95e16, 1.71e15, "
       "-0.0], topk = 5, k = 1: entries 0 and 4 tie in float64 at a span of 1.3e38; our float64 gradient "
       "(±1.41e74) rounds to [inf, 0, 0, 0, -inf], the exact one is ∓4.8e36 (bound ~6e37), the rounded-steps "
       "witness ~1e149 in four entries" for dt in ("float32", "bfloat16")},
}


def _params():
    for fw in frameworks.NAMES:
        for device in frameworks.get(fw).all_devices():
            for qname, q in spec.QUANTITIES.items():
                for prop in properties_for(q, fw):
                    # one xdist group per (quantity, property): torch and jax share the reference cache
                    marks = [pytest.mark.xdist_group(f"{qname}-{prop.name}")]
                    if (qname, prop.name) in OPEN:
                        marks.append(pytest.mark.xfail(reason=OPEN[qname, prop.name], strict=False))
                    yield pytest.param(qname, fw, device, prop.name, id=f"{qname}-{fw}-{device}-{prop.name}", marks=marks)


def _skip_unavailable(fw, device):
    f = frameworks.get(fw)
    if not f.available():
        pytest.skip(f"{fw} is not installed")
    if device not in f.devices():
        pytest.skip(f"{fw}:{device} is not available on this machine")


def explain(rec):
    lines = [f"{rec['property']}: {rec['verdict']} after {rec['examples']} examples", rec["message"]]
    c = rec.get("counterexample")
    if c:
        lines += ["reproduce:", c["snippet"], f"expected: {c['expected']}", f"got:      {c['got']}"]
    return "\n".join(lines)


@pytest.mark.parametrize("qname, fw, device, prop_name", list(_params()))
def test_property(qname, fw, device, prop_name):
    _skip_unavailable(fw, device)
    q = spec.get(qname)
    prop = {p.name: p for p in properties_for(q, fw)}[prop_name]
    target = Target(impls.get(qname, fw), q, fw, device, f"{fw} (ours)", impls.target(qname, fw))
    rec = run_property(prop, target, make_settings(shrink=(qname, prop_name) not in OPEN)[0])
    assert rec["verdict"] == "holds", explain(rec)
    if prop.draw is not None:
        assert rec["examples"] > 0, "the property ran on no example"
