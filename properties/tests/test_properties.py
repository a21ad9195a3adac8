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
OPEN = {
    ("soft_topk", "stability[float64]"):
        "open: at |x| ~ 1e53 with a 1e-210 entry and topk = n the recursion amplifies the rounding of "
        "x − min(x) by |x|^topk; our gradient (≈1e242) and the reference's (≈1e118) disagree beyond "
        "the first-order bound — either the bound must model reverse-mode adjoint rounding or the "
        "implementation must change (issue note)",
}


def _params():
    for fw in frameworks.NAMES:
        for device in frameworks.get(fw).all_devices():
            for qname, q in spec.QUANTITIES.items():
                for prop in properties_for(q, fw):
                    marks = [pytest.mark.xfail(reason=OPEN[qname, prop.name], strict=False)] if (qname, prop.name) in OPEN else []
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
    rec = run_property(prop, target, make_settings()[0])
    assert rec["verdict"] == "holds", explain(rec)
    if prop.draw is not None:
        assert rec["examples"] > 0, "the property ran on no example"
