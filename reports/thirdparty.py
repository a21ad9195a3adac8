"""Audit every adapter of ``impls/adapters`` whose library is installed, each in
its own subprocess with a time limit, and write ``thirdparty.{md,html,json}``.

The child is ``losscheck audit ADAPTER --json FILE``, which rewrites FILE after
every property; a crash, a hang or an exception in the audited code therefore
costs only that target: the parent records it as the target's verdict
("error", with the message and the properties finished before it) and goes
on.  The report is rewritten atomically after every target, so nothing already
written is lost when a later one fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: seconds one adapter's audit may take (all its properties) before it is stopped
DEFAULT_TIMEOUT = 900


def _error(message: str) -> dict:
    return {"property": "(audit)", "kind": "conformance", "verdict": "error", "examples": 0, "max_ulps": None,
            "allowed_ulps": None, "message": message, "doc": "the audit of this target as a whole",
            "seconds": None, "counterexample": None}


def metadata(ad) -> dict:
    """What an adapter declares, as the report shows it."""
    return {"label": ad.name, "target": ad.target, "quantity": ad.quantity, "framework": ad.framework,
            "device": "cpu", "third_party": True, "source": ad.source, "note": ad.note,
            "output": "1 − q (a loss)" if ad.complement else "q", "differentiable": ad.differentiable,
            "library": ad.name.split(".", 1)[0], "half": "native",  # `losscheck audit`'s default bound
            "conventions": [{"name": c.name, "text": c.text} for c in ad.conventions]}


def run_isolated(ad, max_examples=None, seed=None, timeout=DEFAULT_TIMEOUT, echo=True) -> dict:
    """The audit record of adapter ``ad`` from a child process (its progress lines go to
    our stdout as they come); an "error" result where the child crashed or timed out."""
    fd, path = tempfile.mkstemp(prefix="losscheck-audit-", suffix=".json")
    os.close(fd)
    os.unlink(path)  # the child creates it: an absent file means it wrote nothing
    cmd = [sys.executable, "-m", "reports.cli", "audit", ad.name, "--json", path]
    if max_examples is not None:
        cmd += ["--max-examples", str(max_examples)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    t0 = time.perf_counter()
    problem = None
    try:
        proc = subprocess.run(cmd, stdout=None if echo else subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=timeout, env=env, cwd=root)
        if proc.returncode not in (0, 1):  # 1: findings; anything else: a crash or a usage error
            tail = "\n".join((proc.stderr or "").strip().splitlines()[-8:])
            problem = f"the audit process exited with status {proc.returncode}: {tail or 'no message'}"
    except subprocess.TimeoutExpired:
        problem = f"timed out after {timeout} s (the audited code hung or is too slow for the example budget)"
    record = metadata(ad)
    try:
        with open(path, encoding="utf-8") as f:
            done = json.load(f)
        record["results"] = done.get("results", [])
    except (OSError, ValueError):
        record["results"] = []
    finally:
        if os.path.exists(path):
            os.unlink(path)
    if problem:
        finished = len(record["results"])
        record["results"].append(_error(f"{problem}; {finished} properties had finished (kept above)"))
    record["seconds"] = round(time.perf_counter() - t0, 2)
    return record


def audit_all(out_dir, max_examples=None, seed=None, timeout=DEFAULT_TIMEOUT, only=None, settings=None,
              echo=True) -> dict:
    """Audit every installed adapter (``only``: names containing it), isolated; write
    ``thirdparty.*`` into ``out_dir`` after each; return the results dict."""
    from impls import adapters as registry
    from impls.adapters import deviations

    from .build import build_results
    from .render import write_report
    chosen = [a for a in registry.adapters() if not only or only in a.name]
    results = build_results([], settings=settings, symbolic=False, quantities=sorted({a.quantity for a in chosen}))
    results["kind"] = "thirdparty"
    results["skipped_adapters"] = []
    for ad in chosen:
        if not registry.available(ad):
            results["skipped_adapters"].append({"adapter": ad.name, "quantity": ad.quantity,
                                                "missing": registry.missing(ad)})
    runnable = [a for a in chosen if registry.available(a)]
    for i, ad in enumerate(runnable, 1):
        print(f"[{i}/{len(runnable)}] {ad.name} :: {ad.quantity}", flush=True)
        record = run_isolated(ad, max_examples, seed, timeout, echo)
        deviations.annotate(record)
        results["audits"].append(record)
        write_report(results, out_dir, stem="thirdparty")
    results["stale_deviations"] = deviations.stale(results["audits"])
    for row in results["stale_deviations"]:
        print(f"warning: the known-deviations row {row!r} matched nothing (impls/adapters/deviations.py)", flush=True)
    write_report(results, out_dir, stem="thirdparty")
    return results
