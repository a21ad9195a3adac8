"""losscheck as a library: one ``losscheck`` namespace in site-packages, the Python API
(``audit``, ``reference``, ``quantities``, ``show``), ``python -m losscheck``, and the pytest plugin."""

import importlib.util
import math
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import losscheck
from losscheck.reports.cli import EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_one_namespace_and_no_tests(tmp_path):
    """pip install . leaves only losscheck and its dist-info in site-packages: the design card's folders
    install as losscheck.spec, .impls, .properties, .reports; tests and benchmarks stay out."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is not installed here: the wheel cannot be built without the network")
    src = tmp_path / "src"
    src.mkdir()
    for item in ("pyproject.toml", "README.md", "src", "spec", "impls", "properties", "reports", "asv_benchmarks"):
        copy = shutil.copytree if (ROOT / item).is_dir() else shutil.copy
        copy(ROOT / item, src / item, **({"ignore": shutil.ignore_patterns("__pycache__", "*.egg-info")}
                                         if (ROOT / item).is_dir() else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist"),
                    str(src)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("losscheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"losscheck", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    for pkg in ("spec", "impls", "impls/adapters", "properties", "reports"):
        assert f"losscheck/{pkg}/__init__.py" in names
    assert "losscheck/__main__.py" in names and "losscheck/pytest_plugin.py" in names
    assert not [n for n in names if "/tests/" in n or "asv_benchmarks" in n]
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "losscheck = losscheck.reports.cli:main" in meta and "losscheck = losscheck.pytest_plugin" in meta


def test_quantities_and_show_come_from_the_registry(capsys):
    from losscheck import spec
    assert losscheck.quantities() == tuple(sorted(spec.QUANTITIES)) and "dice" in losscheck.quantities()
    text = losscheck.show("logsumexp")
    assert spec.get("logsumexp").formula in text and "logsumexp(x, k=1.0)" in text
    assert "[symbolic] gradient_is_softmax" in text and "proved" in text  # a claim with its status
    assert main(["show", "dice", "--no-prove"]) == EXIT_OK and "dice(probs, targets" in capsys.readouterr().out
    assert main(["show", "dise"]) == EXIT_USAGE and "unknown quantity 'dise'" in capsys.readouterr().err


def test_version_and_python_dash_m():
    out = subprocess.run([sys.executable, "-m", "losscheck", "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"losscheck {losscheck.__version__}" and losscheck.__version__ != "0+unknown"


def test_reference_at_a_users_input():
    """The value and gradient by closed forms independent of the spec: log Σ e^x and softmax."""
    x = [1.0, 2.0, 3.0]
    r = losscheck.reference("logsumexp", x=x)
    assert r.value == pytest.approx(math.log(sum(math.exp(v) for v in x)), rel=1e-15)
    e = np.exp(np.array(x) - 3.0)
    np.testing.assert_allclose(r.grad["x"], e / e.sum(), rtol=1e-15)
    p, t = np.array([[0.2, 0.7], [0.5, 0.5]]), np.array([[0, 1], [1, 1]])
    r = losscheck.reference("dice", probs=p, targets=t.tolist())  # one value over the whole array
    s, d = (p * t).sum(), p.sum() + t.sum()
    assert r.value.shape == () and r.value == pytest.approx(2 * s / d, rel=1e-15)
    assert set(r.grad) == {"probs"}
    np.testing.assert_allclose(r.grad["probs"], 2 * t / d - 2 * s / d**2, rtol=1e-14)
    r = losscheck.reference("softmax", x=[[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]])  # one value per entry of each row
    assert r.value.shape == (3, 2) and r.value[2, 0] == pytest.approx(1 / (1 + math.exp(-2)), rel=1e-15)
    with pytest.raises(ValueError, match="targets: required"):
        losscheck.reference("dice", probs=[0.5])
    with pytest.raises(ValueError, match="temperature: not arguments"):
        losscheck.reference("logsumexp", x=[1.0], temperature=2.0)


torch = pytest.importorskip("torch")


def _dice_loss(probs, targets):
    """Dice loss with smooth = 1 hard-coded."""
    return 1 - (2 * (probs * targets).sum() + 1) / (probs.sum() + targets.sum() + 1)


def _dice_loss_broken(probs, targets):
    """The factor 2 of the numerator forgotten."""
    return 1 - ((probs * targets).sum() + 1) / (probs.sum() + targets.sum() + 1)


def test_audit_returns_typed_results():
    fast = dict(loss=True, fix={"smooth": 1.0, "squared": False}, names=["value[float64]", "gradient[float64]"], max_examples=5)
    ok = losscheck.audit(_dice_loss, "dice", **fast)
    assert ok.passed and not ok.failures and [r.verdict for r in ok.results] == ["holds", "holds"], ok.summary()
    bad = losscheck.audit(_dice_loss_broken, "dice", **fast)
    assert not bad and {r.property for r in bad.failures} == {"value[float64]", "gradient[float64]"}
    f = bad.failures[0]
    assert f.severity == "bug" and f.counterexample and "_dice_loss_broken" in f.counterexample.snippet
    c = f.counterexample  # typed: what was compared, where, what came back, the arguments with every digit
    assert c.check in ("value", "gradient d/dprobs") and c.index is not None and c.got_value != c.expected_value
    assert set(c.args) == {"probs", "targets", "smooth", "squared"} and c.args["smooth"] == 1.0
    assert "FAIL at gate bug" in bad.summary() and "2 bug" in bad.summary()
    with pytest.raises(ValueError, match="gate must be one of"):
        losscheck.audit(_dice_loss, "dice", gate="bugs")
    with pytest.raises(ValueError, match="unknown quantity 'dise'"):
        losscheck.audit(_dice_loss, "dise")
    with pytest.raises(ValueError, match="max_examples must be a positive integer"):
        losscheck.audit(_dice_loss, "dice", max_examples=0)


PLUGIN_TEST = '''
import torch

import losscheck
from spec import SMOOTH  # the project's own spec package, beside losscheck's


def dice_loss(probs, targets):
    return 1 - (2 * (probs * targets).sum() + SMOOTH) / (probs.sum() + targets.sum() + SMOOTH)


def dice_loss_broken(probs, targets):
    return 1 - ((probs * targets).sum() + SMOOTH) / (probs.sum() + targets.sum() + SMOOTH)


DECLARED = dict(loss=True, fix={"smooth": 1.0, "squared": False}, names=["value[float64]", "gradient[float64]"])
test_dice = losscheck.check(dice_loss, "dice", **DECLARED)
test_dice_broken = losscheck.check(dice_loss_broken, "dice", **DECLARED)
'''


def test_the_pytest_plugin_fails_once_per_failing_property(pytester):
    """In a project with its own spec/ package: one pytest case per property, the correct Dice passes,
    the broken one fails once per failing property with the counterexample snippet."""
    pytester.mkpydir("spec").joinpath("__init__.py").write_text("SMOOTH = 1.0\n")
    pytester.makepyfile(test_losses=PLUGIN_TEST)
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--losscheck-max-examples", "5", "-rA")
    out = res.stdout.str()
    cases = ["value[float64]", "gradient[float64]"]
    failed = [c for c in cases if f"FAILED test_losses.py::test_dice_broken[{c}]" in out]
    assert "PASSED test_losses.py::test_dice[value[float64]]" in out and "PASSED test_losses.py::test_dice[gradient[float64]]" in out
    assert "FAILED test_losses.py::test_dice[" not in out, out
    assert {"value[float64]", "gradient[float64]"} <= set(failed), out
    assert res.parseoutcomes().get("failed") == len(failed)  # one failure per failing property, nothing else
    assert out.count("counterexample (runnable)") >= len(failed) and "from test_losses import dice_loss_broken" in out
