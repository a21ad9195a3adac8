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
#: zlpr's tiny-weight gradient (log-weight rounding compensated) and the reference's own cancellation
#: (CE ≈ 1e-50; the reference now measures the digits a row loses), giou's gradient residual where a
#: box spans the enclosing box and ciou's overflowing angle derivative of a flat box (issue 4).
OPEN = {
    ("soft_topk", "stability[float64]"):
        "open: x = [-5.96e130, 1.26e-300, 1.89e200, -4.2e-136, -8.9e15], topk = 5: entries 1 and 3 stay "
        "nearly tied through several passes, each multiplying the adjoint by k(1 − p)(x − min x) ~ 1e130; our "
        "backward (through the accurate frames) forms adjoints ~1e275 that cancel to the true −6.1e129 and "
        "returns 7.3e259, while the spec's step structure bounds the adjoint rounding at 387 ULPs (issue note)",
    # issue 4, found by the first full run after the box family merged (derandomised CI draws), and by
    # `losscheck report` for the other box quantities.  Not a defect of our box code: on the dyadic grid
    # both implementations are exactly translation invariant (0 difference on 20000 grid rows per quantity,
    # and with the related boxes snapped to the grid the claim holds at 0 ULPs), but the claim regime's
    # related boxes ("inside", and the other axis of "disjoint"/"touching") are drawn at lo(1 − u) + hi·u for a
    # float u, off the 2^-10 grid, so a + s rounds and the exact values themselves differ by more than the
    # tolerance: giou at a = (11.650390625, −208.990234375, 11.7568359375, −208.5634765625), b = (11.681594442647908,
    # −208.5634765625, 11.720577861664923, −102.0283203125), s = (−276.45703125, −6.9990234375) is exactly
    # −0.63124182461149670 before and −0.63124182461136370 after the shift (1.3e-13 > 1.42e-14); box_iou
    # 0.055515102294148695 against 0.055515102294165786.  The draw (properties/strategies.py) needs a fix.
    **{(q, "claim:translation"): "open: the claim regime's related boxes are drawn off the 2^-10 grid, so a + s "
       "rounds and even the exact values differ by more than the tolerance (see the comment above); our code is "
       "exact on the grid" for q in ("box_iou", "giou", "diou", "ciou")},
    # issue 4, found by `losscheck report` (its draws differ from CI's): a soft_f1 gradient entry of 2.8e-14
    # off by 8e-10 relative
    ("soft_f1", "gradient[float64]"):
        "open: probs = [0, 1], targets = [0, 1.19e-7]: d/dprobs[1] = 2.842170265e-14 (torch), 2.842170268e-14 "
        "(jax) against 2.8421702677610963e-14 (9.3e5 ULPs): a cancelling difference in the gradient",
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
