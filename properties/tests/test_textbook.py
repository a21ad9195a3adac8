"""Correct code as tutorials write it passes the default verdict (gate ``bug``).

Each textbook implementation (properties/tests/textbook) is audited whole, at the CI budget, as a
user would audit it (third-party bound: half precision computed natively).  It must have no
finding at the default gate; its accuracy and range findings are reported (printed with ``-s``),
and their severities are pinned where they are known (EXPECTED_BELOW_GATE) so a change in the
gate's judgement shows up here."""

import pytest
from textbook import TEXTBOOK

from losscheck.properties import frameworks
from losscheck.properties.engine import audit, conformance_ok
from losscheck.properties.severity import SEVERITIES

#: textbook audits that took 30 s or more of one core (session 11, jax compiling a program per shape and
#: dtype of every property): the slow tier (tiers.py); jax's dice and GIoU textbooks stay in CI
SLOW = {"logsumexp_jax", "softmax_jax", "cross_entropy_jax"}


@pytest.mark.parametrize("tb", [pytest.param(t, marks=[pytest.mark.slow] if t.name in SLOW else []) for t in TEXTBOOK],
                         ids=[t.name for t in TEXTBOOK])
def test_textbook_passes_the_default_gate(tb):
    if not frameworks.get(tb.framework).available():
        pytest.skip(f"{tb.framework} is not installed")
    res = audit(tb.load(), tb.quantity, tb.framework, label=tb.name, target_spec=tb.target, shrink=False)
    findings = [r for r in res["results"] if r["kind"] == "conformance" and r["verdict"] != "holds"
                and r["verdict"] != "skipped"]
    for r in findings:
        print(f"{tb.name} :: {r['property']}: {r['verdict']} ({r.get('severity')}) {r['message'][:200]}")
    bugs = [r for r in findings if r["verdict"] != "fails" or r.get("severity") == "bug"]
    assert conformance_ok(res), f"{tb.name} ({tb.how}) fails the default gate: " + "; ".join(
        f"{r['property']}: {r['message']}" for r in bugs)
    assert all(r.get("severity") in SEVERITIES for r in findings)  # every finding below the gate has a severity
