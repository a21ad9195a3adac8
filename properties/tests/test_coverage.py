"""Every quantity in the registry has both implementations, a benchmark and a
report row — the registry cannot grow a half-finished record."""

import pytest

from losscheck import impls, spec


@pytest.mark.parametrize("fw", ["torch", "jax"])
def test_every_quantity_is_implemented(fw):
    pytest.importorskip(fw)
    missing = set(spec.QUANTITIES) - set(impls.implementations(fw))
    assert not missing, f"no {fw} implementation of {sorted(missing)}"


def test_every_quantity_has_benchmarks():
    from asv_benchmarks import benchmarks
    covered = set(benchmarks.benchmarked_quantities())
    assert set(spec.QUANTITIES) <= covered, set(spec.QUANTITIES) - covered


def test_every_quantity_has_a_report_row():
    from losscheck.reports.build import build_results
    from losscheck.reports.render import render_markdown
    results = build_results([], symbolic=False)
    md = render_markdown(results)
    for name, q in spec.QUANTITIES.items():
        assert name in results["quantities"]
        assert q.formula in md


def test_records_are_complete():
    for q in spec.QUANTITIES.values():
        assert q.formula and q.reference and q.claims, q.name
        assert q.array_args, q.name
        for c in q.numerical_claims:
            assert c.tolerance, f"{q.name}.{c.name} has no tolerance reason"
