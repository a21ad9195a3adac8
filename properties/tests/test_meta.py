"""The suite tests its own power: every deliberately broken implementation
in properties/tests/broken is caught by the property expected to catch it."""

import pytest
from broken import BROKEN

from losscheck.properties import frameworks
from losscheck.properties.engine import audit
from losscheck.properties.severity import at_gate


@pytest.mark.parametrize("broken", BROKEN, ids=[b.name for b in BROKEN])
def test_broken_is_caught(broken):
    if not frameworks.get(broken.framework).available():
        pytest.skip(f"{broken.framework} is not installed")
    # broken variants of our implementations, held to our bound: half precision computed in float32
    res = audit(broken.load(), broken.quantity, broken.framework, label=broken.name,
                target_spec=broken.target, only=broken.caught_by, shrink=False, stop_at_failure=True,
                native_half=False, gate=broken.gate)
    ran = [r for r in res["results"] if broken.caught_by in r["property"]]
    assert ran, f"no property named {broken.caught_by}*"
    # caught at its gate (a contract check counts as with --strict)
    failed = [r for r in ran if r["verdict"] == "fails" and (r["kind"] == "contract" or at_gate(r["severity"], broken.gate))]
    assert failed, f"{broken.name} ({broken.why}) was not caught by {broken.caught_by} at gate {broken.gate}: " + \
        "; ".join(f"{r['property']}={r['verdict']}/{r.get('severity')}" for r in ran)
    for r in failed:  # every failure carries a runnable counterexample
        if r["kind"] == "conformance":
            assert r["counterexample"] and "fn(" in r["counterexample"]["snippet"]


def test_catalogue_of_broken_covers_every_quantity():
    from losscheck import spec
    assert {b.quantity for b in BROKEN} >= set(spec.QUANTITIES)
    assert len(BROKEN) >= 8 + 15


def test_a_claim_is_not_blamed_for_an_overflow():
    """Naive log(1 + e^{−l·f}) overflows to +inf at f and at (−f, −l) alike: stability catches that,
    while the symmetry claim ℓ(f, l) = ℓ(−f, −l) holds (equal infinities agree, inf − inf is no error)."""
    if not frameworks.get("torch").available():
        pytest.skip("torch is not installed")
    broken = next(b for b in BROKEN if b.name == "logistic_naive")
    res = audit(broken.load(), broken.quantity, broken.framework, label=broken.name, target_spec=broken.target,
                only="claim:symmetry", shrink=False, native_half=False)
    [r] = [r for r in res["results"] if r["property"] == "claim:symmetry"]
    assert r["verdict"] == "holds", r


def test_an_undetermined_result_is_accepted_only_between_the_two_evaluations():
    """Where the exact result and the definition with its steps rounded disagree (see
    checks._outcome_from_compare), a result is accepted between them, or anything but NaN
    where exactly one of them overflows the dtype; nothing else is."""
    import mpmath
    import numpy as np

    from losscheck.properties.dtypes import between

    def ok(got, ref, other, dtype="float64"):
        ref, other = np.array([mpmath.mpf(ref)], dtype=object), np.array([mpmath.mpf(other)], dtype=object)
        return between(np.array([got]), ref, other, np.zeros(1), dtype, n=4)[0]

    assert ok(5e9, 1.0, 1e10) and ok(1.0, 1.0, 1e10) and ok(-3.0, 1.0, "-1e10")
    assert not ok(2e10, 1.0, 1e10) and not ok(0.5, 1.0, 1e10) and not ok(-1.0, 1.0, 1e10)
    assert not ok(float("nan"), 1.0, 1e10) and not ok(float("inf"), 1.0, 1e10)
    # an evaluation beyond the dtype's range: a spike whose sign rounding picks (soft_topk's rows)
    assert ok(float("inf"), 127.5, "-1e400") and ok(float("-inf"), 127.5, "-1e400") and ok(3.0, 127.5, "1e400")
    assert ok(float("inf"), 1.0, 1e39, "float32") and not ok(float("nan"), 127.5, "-1e400")
    # both beyond the range: between them still
    assert ok(float("inf"), "1e400", "1e500") and not ok(float("-inf"), "1e400", "1e500")
    # a gradient: anywhere within the chain-rule scale that bounds both (soft_topk, audit seed 1:
    # exact 4.5e30, rounded-steps -1.1e46 at a scale of 2.1e47, ours -1.6e46), never beyond it
    ref, other = np.array([mpmath.mpf("4.5e30")], dtype=object), np.array([mpmath.mpf("-1.1e46")], dtype=object)
    for got, accepted in ((-1.6e46, True), (2e47, True), (-3e47, False), (float("inf"), False), (float("nan"), False)):
        assert between(np.array([got]), ref, other, np.zeros(1), "float64", n=5, bound=np.array([2.1e47]))[0] == accepted
    assert between(np.array([-np.inf]), ref, other, np.zeros(1), "float64", n=5, bound=np.array([np.inf]))[0]


# jax: 37 s of one core (session 11), the slow tier (tiers.py)
@pytest.mark.parametrize("fw", ["torch", pytest.param("jax", marks=pytest.mark.slow)])
def test_soft_topk_near_ties_at_huge_spans_hold_as_undetermined(fw):
    """soft_topk's regression rows of stability[float64] include gradients that no float64
    evaluation determines (properties/regressions.py): they hold, never as NaN, and the record
    counts them as undetermined, so the acceptance stays visible in the report."""
    if not frameworks.get(fw).available():
        pytest.skip(f"{fw} is not installed")
    from losscheck import impls, spec
    from losscheck.properties.checks import Target, properties_for
    from losscheck.properties.engine import make_settings, run_property

    q = spec.get("soft_topk")
    prop = {p.name: p for p in properties_for(q, fw)}["stability[float64]"]
    rec = run_property(prop, Target(impls.get("soft_topk", fw), q, fw, "cpu", f"{fw} (ours)", impls.target("soft_topk", fw)),
                       make_settings(max_examples=1)[0])
    assert rec["verdict"] == "holds", rec["message"]
    assert rec.get("undetermined", 0) >= 3 and "undetermined" in rec["message"], rec
