"""Audits in a child process: whatever the audited code does (``sys.exit(0)``, ``os._exit``, a
segfault, a hang), the parent reads a verdict, never the child's exit status alone.

The child is ``python -m reports.cli audit ... --in-process --record FILE``: it writes FILE (JSON,
atomically) when it starts, when each property starts (``running``, ``running_since``) and ends, and
at the end with ``completed: true``.  The parent (:func:`run_child`) polls the child and FILE; a
child that ends without ``completed`` in FILE, is killed by a signal, or runs past a time limit is a
:class:`ChildOutcome` with a ``problem`` naming the property in progress.  ``subprocess`` with a
polling loop, rather than multiprocessing: the child must be a fresh interpreter that imports the
user's code itself, and its progress lines go straight to the terminal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: seconds between two looks at the child
POLL = 0.2


@dataclass
class ChildOutcome:
    code: int | None  # the child's exit status (negative: killed by that signal); None: we stopped it
    record: dict = field(default_factory=dict)  # the child's last record ({} if it wrote none)
    problem: str = ""  # "" where the child completed its audit

    @property
    def running(self) -> str:
        return self.record.get("running") or ""


def _read(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def run_child(argv: list[str], record_path: Path, *, property_timeout: float | None = None,
              total_timeout: float | None = None, stdout=None, stderr=None, env=None, cwd=None) -> ChildOutcome:
    """Run ``python -m reports.cli AUDIT-ARGV --in-process --record record_path`` and judge how it
    ended.  ``property_timeout``: seconds one property may run; ``total_timeout``: the whole audit."""
    record_path = Path(record_path)
    if record_path.exists():
        record_path.unlink()
    # -P: the current folder is not put first on sys.path, so a user's own spec/ or reports/ package
    # there does not shadow losscheck's in the child (the target's module is imported by load_target)
    cmd = [sys.executable, "-P", "-m", "losscheck.reports.cli", *argv, "--in-process", "--record", str(record_path)]
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
    t0 = time.monotonic()
    stopped = ""
    while proc.poll() is None:
        time.sleep(POLL)
        now = time.monotonic()
        if total_timeout is not None and now - t0 > total_timeout:
            stopped = f"timed out after {total_timeout:g} s (the audit's time limit)"
        elif property_timeout is not None:
            rec = _read(record_path)
            since = rec.get("running_since")
            if rec.get("running") and since is not None and time.time() - since > property_timeout:
                stopped = f"timed out after {property_timeout:g} s (the time limit per property)"
        if stopped:
            proc.kill()
            proc.wait()
            break
    record = _read(record_path)
    if stopped:
        return ChildOutcome(None, record, f"the target {stopped}")  # killed: it hung, or is too slow
    code = proc.returncode
    if record.get("completed"):
        return ChildOutcome(code, record)
    if code == 2 and record.get("usage_error"):  # said by the child (reports.cli.main) on stderr
        return ChildOutcome(code, record)
    who = "the target" if record.get("started") else "the audit process"  # before that: losscheck's own start
    return ChildOutcome(code, record, f"{who} {_exit_text(code)}")


def error_record(message: str, prop: str = "") -> dict:
    """A result record (the engine's shape) for a property, or the audit as a whole, that did not complete."""
    return {"property": prop or "(audit)", "kind": "conformance", "verdict": "error", "examples": 0, "max_ulps": None,
            "allowed_ulps": None, "message": message, "doc": "" if prop else "the audit of this target as a whole",
            "seconds": None, "counterexample": None}


def where(outcome: ChildOutcome) -> str:
    """"during gradient[float32]" / "before the first property"."""
    return f"during {outcome.running}" if outcome.running else "before the first property"


def env_with_root() -> dict:
    """The environment with this checkout's root on PYTHONPATH (the child imports reports.cli as we do)."""
    root = str(Path(__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
