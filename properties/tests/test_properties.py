"""Every generic property on every implementation of every quantity.

One pytest item per quantity × framework × device × property, so one
failure never hides another; devices that do not exist here are skipped
visibly (the skip reason names them).
"""

import pytest
import tiers

from losscheck import impls, spec
from losscheck.properties import frameworks
from losscheck.properties.checks import Target, properties_for
from losscheck.properties.engine import make_settings, run_property

#: Open findings on our own implementations, tracked on the issue; visible as xfail, never hidden.
#: They run without shrinking (the counterexamples are in the issue note).  Fixed and moved to
#: properties/regressions.py: soft_topk's float32/bfloat16 NaN gradients (now computed in float64),
#: zlpr's tiny-weight gradient (log-weight rounding compensated), the reference's own cancellation
#: (CE ≈ 1e-50; the reference now measures the digits a row loses), soft_f1's, dice's and jaccard's
#: cancelling gradients (issue 4; a dominant entry's derivative uses sums taken without it), giou's gradient
#: residual where a box spans the enclosing box and ciou's overflowing angle derivative of a flat box.
#: The box quantities' claim:translation failed on draws off the dyadic grid (the shifted boxes rounded):
#: the claim regime now draws related boxes on the grid, where our code is exactly translation invariant.
#: soft_topk's gradient at near-ties amplified by a span near the dtype's range (NaN from adjoints that
#: overflow with both signs, and results that no fixed precision determines): where the reverse pass gives
#: NaN, a second one carrying a per-row exponent gives the entries, and properties/checks.py accepts a result
#: between the exact and the rounded-steps evaluations where those two disagree (counted as undetermined in
#: the record).
OPEN: dict = {
    ("giou", "stability[float64]"): "jax only, under jax.jit, found by the typical domain's large boxes (session 10): "
    "a box 6807 px wide and 1e-6 px tall beside others; ∂GIoU/∂b at one entry 6.777464e-16 for 6.777456e-16 "
    "(1.2e-6 relative; normwise within the practical tolerance: an accuracy finding); it passes when the torch "
    "item ran first in the worker (the reference cache), fails alone — both to be looked into",
    **{(q, "stability[float64]"): "a range finding (session 11), torch and jax alike: a = [-7.4e15, 2.2e-309, 1.1e284, "
       "2.6e-114], b = [-3.66e15, 3.6e-223, -3.54e15, 1.4e228] (IoU 2e-342 underflows); ∂/∂a_3 is 7.436e-229 "
       "(inter's width over the union), ours give 0 or 5.9e-285.  Drawn by another derandomised seed (the seed "
       "hashes the engine's source, which changed during that run), not by today's; boxes of 1e284 px are far "
       "outside the typical domain (≤ 8192 px)" for q in ("box_iou", "diou", "ciou")},
    **{("soft_argmax", f"stability[{dt}]"): "jax only, a range finding drawn by the installed package's seed "
    "(session 12, CI; the seed hashes the engine's file): x rows like [-1.9, -5802, 0, -1333] at k = 46.5, "
    "∂/∂x of -6.79e-37 (a result of scale 1.2e-34, below the typical domain's 1e-30) comes out 0 because "
    "exp(k·(x_i − max)) = exp(-88.4) = 4.5e-39 is subnormal in float32 and XLA on the CPU flushes subnormal "
    "intermediates to zero (torch keeps them); the checker accepts flushed inputs (checks.flushed), not yet "
    "flushed intermediates (nox -s report found the same at bfloat16, computed in float32)" for dt in ("float32", "bfloat16")},
}


#: (quantity, framework, property) items of the slow tier beyond the half dtypes (see tiers.py):
#: each took 35–72 s of one core in the CI runs of session 11 (cold caches), the rest of the suite ~2 s an item
SLOW = {
    ("soft_topk", "jax", "gradient[float32]"), ("soft_topk", "jax", "gradient[float64]"),
    ("soft_topk", "jax", "stability[float32]"), ("soft_topk", "jax", "stability[float64]"),
    ("zlpr", "jax", "claim:masked_positions"), ("box_iou", "jax", "claim:disjoint_gradient"),
}


def _params():
    for fw in frameworks.NAMES:
        for device in frameworks.get(fw).all_devices():
            for qname, q in spec.QUANTITIES.items():
                for prop in properties_for(q, fw):
                    # one xdist group per (quantity, property): torch and jax share the reference cache
                    marks = [pytest.mark.xdist_group(f"{qname}-{prop.name}")]
                    if prop.dtype in tiers.SLOW_DTYPES or (qname, fw, prop.name) in SLOW or \
                            (fw, prop.name.split("[")[0]) in tiers.SLOW_KINDS:
                        marks.append(pytest.mark.slow)
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
