"""asv_benchmarks/roofline.py: the machine's least time for a benchmark call (bytes, transcendentals, sorts)."""

import numpy as np
import pytest

from asv_benchmarks import benchmarks as B
from asv_benchmarks import roofline
from losscheck import spec

RATES = {"bandwidth": 1e9, "exp_rate": 1e8, "threads": 1}  # 1 GB/s, 10^8 exp/s: round figures


@pytest.fixture
def rates(monkeypatch):
    monkeypatch.setattr(roofline, "machine", lambda: RATES)


def test_the_machine_rates_are_measured():
    rates = roofline.machine()
    assert rates["bandwidth"] > 1e8 and np.isfinite(rates["bandwidth"])  # any machine streams 100 MB/s
    assert rates["exp_rate"] > 1e6 and np.isfinite(rates["exp_rate"])
    assert rates["threads"] >= 1


def test_soft_topk_is_bound_by_its_exponentials(rates):
    x = np.zeros((100, 50), np.float32)
    out = roofline.roofline("soft_topk", "forward", {"x": x}, {"topk": 5, "k": 1.0})
    assert out["transcendentals"] == pytest.approx(5 * 5000 / 1e8)  # topk softmax passes, one exp per entry each
    assert out["bytes"] == pytest.approx(2 * x.nbytes / 1e9)  # x read, p written (same shape)
    assert out["seconds"] == out["transcendentals"] and out["bound"] == "transcendentals"
    fb = roofline.roofline("soft_topk", "forward_backward", {"x": x}, {"topk": 5, "k": 1.0})
    assert fb["bytes"] == pytest.approx(3 * x.nbytes / 1e9)  # and the gradient written


def test_a_reduction_writes_one_value_per_row_of_its_layout(rates):
    rows = np.zeros((8, 6, 4), np.float32)
    out = roofline.roofline("logsumexp", "forward", {"x": rows}, {"k": 1.0})
    assert out["bytes"] == pytest.approx((rows.nbytes + 4 * 48) / 1e9)  # the last axis reduced
    out = roofline.roofline("soft_f1", "forward", {"probs": rows, "targets": rows}, {"eps": 0.0})
    assert out["bytes"] == pytest.approx((2 * rows.nbytes + 4 * 24) / 1e9)  # layout "first": axis 0
    out = roofline.roofline("dice", "forward", {"probs": rows, "targets": rows}, {"smooth": 0.0, "squared": False})
    assert out["bytes"] == pytest.approx((2 * rows.nbytes + 4) / 1e9)  # layout "all": one value


def test_soft_auc_counts_its_pairs_and_hinge_only_its_bytes(rates):
    labels = np.array([[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
    scores = np.zeros(labels.shape, np.float32)
    out = roofline.roofline("soft_auc", "forward", {"scores": scores, "labels": labels}, {"tau": 1.0})
    assert out["transcendentals"] == pytest.approx((2 * 3 + 1 * 4) / 1e8)  # a sigmoid per positive-negative pair
    f = np.ones((10, 10), np.float32)
    out = roofline.roofline("hinge_loss", "forward", {"f": f, "l": f}, {})
    assert out["transcendentals"] == 0 and out["bound"] == "bytes"


def test_a_sort_based_quantity_is_bound_by_at_least_its_sort(rates):
    arrays, consts = B.make_inputs("lovasz_hinge", (64, 64))
    out = roofline.roofline("lovasz_hinge", "forward", arrays, consts)
    assert out["sort"] > 0 and out["seconds"] >= out["sort"]


def test_every_benchmarked_quantity_has_a_roofline(rates):
    for name in spec.QUANTITIES:
        arrays, consts = B.make_inputs(name, "small")
        for mode in B.MODES:
            out = roofline.roofline(name, mode, arrays, consts)
            assert out["seconds"] > 0 and np.isfinite(out["seconds"]), (name, mode)
