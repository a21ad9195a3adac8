"""The command line as a user drives it: what a user's callable declares (``--loss``, ``--fix``,
``--no-grad``) and the usage errors that name the argument at fault."""

import pytest

from losscheck.reports.cli import EXIT_FAIL, EXIT_OK, EXIT_USAGE, main

pytest.importorskip("torch")

DICE_LOSS = '''
import torch

def dice_loss(probs, targets):
    """A library's Dice loss: smooth = 1 hard-coded, no `squared` option, returns 1 - Dice."""
    num = 2 * (probs * targets).sum() + 1.0
    den = probs.sum() + targets.sum() + 1.0
    return 1 - num / den
'''

FAST = ["--only", "value[float64]", "--max-examples", "5", "--no-shrink", "--in-process"]


@pytest.fixture
def dice_loss(tmp_path):
    path = tmp_path / "mylosses.py"
    path.write_text(DICE_LOSS)
    return f"{path}:dice_loss"


def test_a_loss_with_a_hard_coded_smoothing_passes_as_declared(dice_loss, capsys):
    code = main(["audit", dice_loss, "--quantity", "dice", "--loss", "--fix", "smooth=1", "--fix", "squared=False", *FAST])
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    assert "verdict: PASS" in out


def test_a_loss_audited_as_the_score_fails_with_a_hint(dice_loss, capsys):
    code = main(["audit", dice_loss, "--quantity", "dice", "--fix", "smooth=1", "--fix", "squared=False", *FAST])
    out = capsys.readouterr().out
    assert code == EXIT_FAIL, out
    assert "audit it with --loss" in out


def test_a_hard_coded_argument_must_be_declared(dice_loss, capsys):
    assert main(["audit", dice_loss, "--quantity", "dice", "--loss", *FAST]) == EXIT_USAGE
    assert "signature does not fit" in capsys.readouterr().err


@pytest.mark.parametrize("fix, named", [("smoth=1", "--fix smoth"), ("probs=1", "--fix probs"), ("smooth=x", "--fix smooth"),
                                        ("smooth", "NAME=VALUE")])
def test_a_bad_fix_is_a_usage_error_naming_it(dice_loss, capsys, fix, named):
    assert main(["audit", dice_loss, "--quantity", "dice", "--fix", fix, *FAST]) == EXIT_USAGE
    assert named in capsys.readouterr().err


def test_an_adapter_declares_its_own(capsys):
    assert main(["audit", "seed001.dice_loss", "--loss", *FAST]) == EXIT_USAGE
    assert "declares its own" in capsys.readouterr().err


@pytest.mark.parametrize("flag, where, says", [
    ("--json", "missing/out.json", "does not exist"), ("--json", ".", "is a folder"), ("--report", "afile", "is a file"),
    ("--report", "afile/sub", "is a file, not a folder")])
def test_an_output_that_cannot_be_written_is_a_usage_error_before_any_work(dice_loss, tmp_path, monkeypatch, capsys,
                                                                          flag, where, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    assert main(["audit", dice_loss, "--quantity", "dice", flag, where, *FAST]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert says in captured.err and "losscheck audit" not in captured.out  # nothing ran


def test_the_json_says_what_ran_and_whether_it_completed(dice_loss, tmp_path):
    import json
    out = tmp_path / "r.json"
    out.write_text('{"stale": true}')
    main(["audit", dice_loss, "--quantity", "dice", "--loss", "--fix", "smooth=1", "--fix", "squared=False", "--json", str(out), *FAST])
    data = json.loads(out.read_text())
    assert "stale" not in data and data["completed"] is True and data["passed"] is True
    assert data["target"] == dice_loss and data["quantity"] == "dice" and data["losscheck_version"]
    assert [r["property"] for r in data["results"]] == ["value[float64]"]


@pytest.mark.parametrize("returns, says", [("float(x.sum())", "returned float"), ("x.tolist()", "returned list"),
                                           ("None", "returned NoneType None")])
def test_a_return_value_that_is_no_tensor_is_said_as_it_is(tmp_path, capsys, returns, says):
    path = tmp_path / "odd.py"
    path.write_text(f"def softmax(x, k=1.0):\n    return {returns}\n")
    assert main(["audit", f"{path}:softmax", "--quantity", "softmax", "--framework", "torch", *FAST]) == EXIT_FAIL
    out = capsys.readouterr().out
    assert says in out and "expected a torch.Tensor" in out


def test_a_framework_the_target_does_not_use_is_a_usage_error(dice_loss, capsys):
    assert main(["audit", dice_loss, "--quantity", "dice", "--loss", "--fix", "smooth=1", "--fix", "squared=False",
                 "--framework", "jax", *FAST]) == EXIT_USAGE
    assert "uses torch only" in capsys.readouterr().err


def test_a_target_that_exits_at_import_is_a_usage_error_not_a_pass(tmp_path, capsys):
    path = tmp_path / "quits.py"
    path.write_text("import sys\nimport torch\nsys.exit(0)\ndef softmax(x, k=1.0):\n    return torch.softmax(k * x, -1)\n")
    assert main(["audit", f"{path}:softmax", "--quantity", "softmax", *FAST]) == EXIT_USAGE
    assert "called sys.exit(0)" in capsys.readouterr().err


def test_a_target_that_exits_during_a_property_fails_it(tmp_path, capsys):
    path = tmp_path / "quits_later.py"
    path.write_text("import sys\nimport torch\n\ndef softmax(x, k=1.0):\n    if x.requires_grad:\n        sys.exit(0)\n"
                    "    return torch.softmax(k * x, -1)\n")
    code = main(["audit", f"{path}:softmax", "--quantity", "softmax", "--only", "[float64]", "--max-examples", "3", "--no-shrink",
                 "--in-process"])
    out = capsys.readouterr().out
    assert code == EXIT_FAIL, out
    assert "called sys.exit(0)" in out and "verdict: FAIL" in out


# -- the audit in a child process (reports/isolation.py): the fault classes of issue 16 ----------------
FAULTS = {
    "os._exit(0)": ("import os", "os._exit(0)"),
    "a segfault": ("import os, signal", "os.kill(os.getpid(), signal.SIGSEGV)"),
    "a hang": ("import time", "time.sleep(600)"),
}


@pytest.mark.parametrize("fault, says", [("os._exit(0)", "exited with status 0 during gradient[float64]"),
                                         ("a segfault", "killed by signal SIGSEGV during gradient[float64]"),
                                         ("a hang", "timed out after 8 s (the time limit per property) during gradient[float64]")])
def test_a_target_that_ends_crashes_or_hangs_is_an_error_verdict(tmp_path, capfd, fault, says):
    """Each in the child process of an ordinary audit: the finished property kept, the one in progress
    an error, the verdict FAIL (exit 1), never exit 0 without a verdict."""
    path = tmp_path / "faulty.py"
    body = "".join(f"        {line}\n" for line in FAULTS[fault])
    path.write_text(f"import torch\n\n\ndef softmax(x, k=1.0):\n    if x.requires_grad:\n{body}"
                    "    return torch.softmax(k * x, -1)\n")
    out_json = tmp_path / "r.json"
    code = main(["audit", f"{path}:softmax", "--quantity", "softmax", "--only", "[float64]", "--max-examples", "3",
                 "--no-shrink", "--timeout", "8", "--json", str(out_json)])
    out = capfd.readouterr().out
    assert code == EXIT_FAIL, out
    assert says in out and "verdict: FAIL" in out
    import json
    data = json.loads(out_json.read_text())
    assert data["completed"] is False and data["passed"] is False
    assert data["results"][0]["property"] == "value[float64]" and data["results"][0]["verdict"] == "holds"  # kept
    assert data["results"][-1]["verdict"] == "error" and says in data["results"][-1]["message"]


def test_an_isolated_audit_passes_through_its_verdict_and_usage_errors(dice_loss, capfd):
    args = ["audit", dice_loss, "--quantity", "dice", "--loss", "--fix", "smooth=1", "--fix", "squared=False",
            "--only", "value[float64]", "--max-examples", "3"]
    assert main(args) == EXIT_OK
    assert "verdict: PASS" in capfd.readouterr().out
    assert main(args[:-4] + ["--only", "nosuchproperty"]) == EXIT_USAGE
    assert "matches no property" in capfd.readouterr().err


def test_a_users_own_spec_and_reports_packages_are_the_users(tmp_path, monkeypatch, capfd):
    """losscheck lives in its own namespace: a project's own spec/ and reports/ packages neither
    shadow losscheck's modules nor are shadowed by them, for the file audited, at import and at call."""
    for pkg, body in (("spec", "SMOOTH = 1.0\n"), ("reports", "def note(x):\n    return x\n")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text(body)
    (tmp_path / "losses").mkdir()
    (tmp_path / "losses" / "dice.py").write_text(
        "import torch\nfrom spec import SMOOTH\n\n\ndef dice_loss(probs, targets):\n"
        "    from reports import note  # at call time too\n"
        "    return note(1 - (2 * (probs * targets).sum() + SMOOTH) / (probs.sum() + targets.sum() + SMOOTH))\n")
    monkeypatch.chdir(tmp_path)
    code = main(["audit", "losses/dice.py:dice_loss", "--quantity", "dice", "--loss", "--fix", "smooth=1", "--fix", "squared=False",
                 "--only", "value[float64]", "--max-examples", "3"])
    assert code == EXIT_OK, capfd.readouterr()


PIXEL_IOU = '''
import torch

def iou(a, b):
    """Pixel-index boxes, inclusive corners: width x2 - x1 + 1 (Fast R-CNN's bbox_overlaps)."""
    iw = (torch.minimum(a[..., 2], b[..., 2]) - torch.maximum(a[..., 0], b[..., 0]) + 1).clamp(min=0)
    ih = (torch.minimum(a[..., 3], b[..., 3]) - torch.maximum(a[..., 1], b[..., 1]) + 1).clamp(min=0)
    inter = iw * ih
    area = lambda x: (x[..., 2] - x[..., 0] + 1) * (x[..., 3] - x[..., 1] + 1)
    return inter / (area(a) + area(b) - inter)
'''


def test_a_named_convention_turns_a_failure_into_a_deviation(tmp_path, capsys):
    path = tmp_path / "pixel.py"
    path.write_text(PIXEL_IOU)
    args = ["audit", f"{path}:iou", "--quantity", "box_iou", "--no-grad", *FAST]
    assert main(args) == EXIT_FAIL
    capsys.readouterr()
    assert main(args + ["--convention", "pixel+1"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "holds under the declared convention(s) (+1 pixel)" in out and "verdict: PASS" in out, out
    assert main(args[:4] + ["--convention", "pixel+2"] + args[4:]) == EXIT_USAGE
    assert "unknown name 'pixel+2'; known: pixel+1" in capsys.readouterr().err
    assert main(["audit", f"{path}:iou", "--quantity", "dice", "--convention", "pixel+1", *FAST]) == EXIT_USAGE
    assert "applies to box quantities" in capsys.readouterr().err


def test_findings_print_once_per_root_cause_bugs_first(tmp_path, capsys):
    """A Dice without the numerator's factor 2 fails value, gradient and stability at every dtype: the
    terminal shows each root cause once (value; gradient), saying where else it shows."""
    path = tmp_path / "dice2.py"
    path.write_text("import torch\n\n\ndef dice_loss(probs, targets):\n"
                    "    return 1 - ((probs * targets).sum() + 1) / (probs.sum() + targets.sum() + 1)\n")
    code = main(["audit", f"{path}:dice_loss", "--quantity", "dice", "--loss", "--fix", "smooth=1", "--fix", "squared=False",
                 "--only", "[float", "--max-examples", "5", "--no-shrink", "--in-process"])
    out = capsys.readouterr().out
    assert code == EXIT_FAIL
    heads = [line for line in out.splitlines() if line.startswith("--- ")]
    failing = [line for line in out.splitlines() if line.startswith("  BUG ")]
    assert len(failing) >= 6 and 2 <= len(heads) < len(failing), out
    assert heads[0].startswith("--- BUG: value: a wrong value — value[float64] (also in value[float16], value[float32]")
    assert f"{len(heads)} finding(s) by root cause" in out
