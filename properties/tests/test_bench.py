"""Side-by-side benchmarks (pytest-benchmark): ours vs peers, 4096 x 1000.

Generated from ``spec.QUANTITIES`` and ``asv_benchmarks.benchmarks.PEERS``
(one table of peers for asv and pytest).  Each (quantity, mode) is one
benchmark group, so pytest-benchmark prints ours and the peers in one table;
``python -m asv_benchmarks.ratios FILE`` turns ``--benchmark-json FILE`` into
the ratios ours / fastest peer, beside the machine's roofline for each of our
calls (``asv_benchmarks/roofline.py``, stored in ``extra_info``).

Run only on request::

    LOSSCHECK_BENCH=1 python -m pytest properties/tests/test_bench.py \\
        --benchmark-only --benchmark-json /tmp/bench.json

Without ``LOSSCHECK_BENCH=1`` the module is skipped before anything heavy is
imported.  Nothing here asserts a time: only that the result is finite.
"""

import os

import pytest

pytestmark = pytest.mark.bench

if os.environ.get("LOSSCHECK_BENCH") != "1":
    pytest.skip("benchmarks: set LOSSCHECK_BENCH=1 and pass --benchmark-only", allow_module_level=True)

import numpy as np  # noqa: E402

from asv_benchmarks import benchmarks as B  # noqa: E402
from asv_benchmarks import roofline  # noqa: E402
from losscheck import spec  # noqa: E402

SIZE = "medium"  # 4096 x 1000


def _cases():
    for quantity in spec.QUANTITIES:
        for mode in B.MODES:
            group = f"{quantity} {mode} {B.size_label(SIZE)}"
            for label in B.labels(quantity):
                yield pytest.param(quantity, mode, label,
                                   marks=pytest.mark.benchmark(group=group),
                                   id=f"{quantity}-{mode}-{label}")


@pytest.mark.parametrize("quantity, mode, label", list(_cases()))
def test_bench(benchmark, quantity, mode, label):
    try:
        run = B.prepare(quantity, label, SIZE, mode)
    except NotImplementedError as e:
        pytest.skip(str(e))
    framework = B.framework_of(label)
    benchmark.extra_info.update(
        quantity=quantity, mode=mode, implementation=label, framework=framework,
        ours=label.split(":", 1)[1] == B.OURS, device=B.device(framework),
        size=B.size_label(SIZE))
    result = benchmark(run)
    assert np.isfinite(B.to_numpy(result)).all()
    if benchmark.extra_info["ours"]:  # the machine's bound beside our time (asv_benchmarks/roofline.py)
        benchmark.extra_info["roofline"] = roofline.roofline(quantity, mode, *B.make_inputs(quantity, SIZE))
