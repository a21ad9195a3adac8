"""The suite tests its own power: every deliberately broken implementation
in properties/tests/broken is caught by the property expected to catch it."""

import pytest

from properties import frameworks
from properties.engine import audit
from properties.tests.broken import BROKEN


@pytest.mark.parametrize("broken", BROKEN, ids=[b.name for b in BROKEN])
def test_broken_is_caught(broken):
    if not frameworks.get(broken.framework).available():
        pytest.skip(f"{broken.framework} is not installed")
    # broken variants of our implementations, held to our bound: half precision computed in float32
    res = audit(broken.load(), broken.quantity, broken.framework, label=broken.name,
                target_spec=broken.target, only=broken.caught_by, shrink=False, stop_at_failure=True,
                native_half=False)
    ran = [r for r in res["results"] if broken.caught_by in r["property"]]
    assert ran, f"no property named {broken.caught_by}*"
    failed = [r for r in ran if r["verdict"] == "fails"]
    assert failed, f"{broken.name} ({broken.why}) was not caught by {broken.caught_by}: " + \
        "; ".join(f"{r['property']}={r['verdict']}" for r in ran)
    for r in failed:  # every failure carries a runnable counterexample
        if r["kind"] == "conformance":
            assert r["counterexample"] and "fn(" in r["counterexample"]["snippet"]


def test_catalogue_of_broken_covers_every_quantity():
    import spec
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
