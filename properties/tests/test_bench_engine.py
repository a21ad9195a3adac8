"""pytest-benchmark runs of the engine's own speed (see asv_benchmarks/engine.py): a whole audit of
our logsumexp and cross_entropy, the first counterexample of a broken logsumexp, and reference rows.

Run on request, beside the other benchmarks (``nox -s bench``)::

    LOSSCHECK_BENCH=1 python -m pytest properties/tests/test_bench_engine.py --benchmark-only

Nothing here asserts a time: each run checks what it measured came out as it should.
"""

import os

import pytest

pytestmark = pytest.mark.bench

if os.environ.get("LOSSCHECK_BENCH") != "1":
    pytest.skip("benchmarks: set LOSSCHECK_BENCH=1 and pass --benchmark-only", allow_module_level=True)

from asv_benchmarks import engine  # noqa: E402


@pytest.mark.parametrize("quantity", ["logsumexp", "cross_entropy"])
@pytest.mark.benchmark(group="engine: audit of ours (15 examples)")
def test_audit_ours(benchmark, quantity):
    engine.audit_ours(quantity, max_examples=1)  # warm: imports and compiled definitions
    result = benchmark.pedantic(engine.audit_ours, args=(quantity,), rounds=1, iterations=1)
    assert all(r["verdict"] in ("holds", "skipped") for r in result["results"] if r["kind"] == "conformance")


@pytest.mark.benchmark(group="engine: first counterexample")
def test_first_counterexample(benchmark):
    engine.first_counterexample(max_examples=1)
    result = benchmark.pedantic(engine.first_counterexample, rounds=3, iterations=1)
    assert result["results"][-1]["verdict"] == "fails"


@pytest.mark.benchmark(group="engine: reference rows (100 fresh rows of cross_entropy, n = 6)")
def test_reference_rows(benchmark):
    seeds = iter(range(1, 100))  # fresh rows every round: the reference memoises rows it has seen
    seconds = benchmark.pedantic(engine.reference_rows, setup=lambda: ((100,), {"seed": next(seeds)}), rounds=3)
    benchmark.extra_info["rows_per_second"] = 99 / seconds
    assert seconds > 0
