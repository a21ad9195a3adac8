"""Benchmarks of losscheck itself: how fast a verdict comes (asv, and pytest-benchmark through
``properties/tests/test_bench_engine.py``), so that a regression of the tool's own speed shows
up like any other.

* ``Audit.time_audit``: a whole derandomised audit (every property, ``EXAMPLES`` examples) of our
  torch logsumexp and cross_entropy, in process, the SymPy work already cached;
* ``FirstCounterexample.time_first_counterexample``: from the start of an audit of a broken logsumexp (no
  max-shift) to its first failing property (``--fail-fast``, shrinking on);
* ``Reference.track_rows_per_second``: reference rows (value, sensitivity) evaluated per second
  for cross_entropy at n = 6 (the properties' largest rows), new inputs every row.

Each ``setup`` warms what a process pays once (imports, compiled definitions), so the timings
are the audit's own work.
"""

from __future__ import annotations

import importlib
import importlib.util
import time

EXAMPLES = 15  # the CI profile's budget


def _losscheck(module: str):
    """``losscheck.<module>``; on a commit from before the losscheck namespace (ac557c8), which asv
    benchmarks for the history, the top-level package of that name."""
    if importlib.util.find_spec("losscheck") is not None:
        return importlib.import_module(f"losscheck.{module}")
    return importlib.import_module(module)


def audit_ours(quantity: str, max_examples: int = EXAMPLES, framework: str = "torch") -> dict:
    impls, engine = _losscheck("impls"), _losscheck("properties.engine")
    return engine.audit(impls.get(quantity, framework), quantity, framework, label=f"{framework} (ours)",
                        target_spec=impls.target(quantity, framework), max_examples=max_examples, native_half=False)


def broken_logsumexp():
    import torch

    def lse_no_max_shift(x, k=1.0):
        return torch.log(torch.exp(k * x).sum(-1)) / k
    return lse_no_max_shift


def first_counterexample(max_examples: int = EXAMPLES) -> dict:
    """The audit of a logsumexp without the max-shift, stopped at its first failing property."""
    engine = _losscheck("properties.engine")
    return engine.audit(broken_logsumexp(), "logsumexp", "torch", label="lse_no_max_shift",
                        max_examples=max_examples, stop_at_failure=True)


def reference_rows(count: int, n: int = 6, seed: int = 0) -> float:
    """Seconds to evaluate ``count`` fresh cross_entropy rows of n logits (value and sensitivity)."""
    import numpy as np

    spec = _losscheck("spec")
    reference = spec.Reference(spec.get("cross_entropy"))
    rng = np.random.default_rng(seed)
    rows = [{"logits": rng.normal(scale=8.0, size=(n,)), "target": np.int64(rng.integers(n))} for _ in range(count)]
    reference.evaluate(rows[0], rel_step=1e-5)  # compiles (or loads) the definition
    t0 = time.perf_counter()
    for row in rows[1:]:
        reference.evaluate(row, rel_step=1e-5)
    return time.perf_counter() - t0


class Audit:
    params = ["logsumexp", "cross_entropy"]
    param_names = ["quantity"]
    timeout = 600

    def setup(self, quantity):
        audit_ours(quantity, max_examples=1)  # imports, compiled definitions

    def time_audit(self, quantity):
        audit_ours(quantity)


class FirstCounterexample:
    timeout = 300

    def setup(self):
        first_counterexample(max_examples=1)

    def time_first_counterexample(self):
        first_counterexample()


class Reference:
    timeout = 300

    def setup(self):
        reference_rows(2)

    def track_rows_per_second(self):
        count = 200
        return (count - 1) / reference_rows(count, seed=1)

    track_rows_per_second.unit = "rows/s"
