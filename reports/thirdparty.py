"""Audit every adapter of ``impls/adapters`` whose library is installed, each in
its own subprocess with a time limit, and write ``thirdparty.{md,html,json}``.

The child is ``losscheck audit ADAPTER`` run in-process by reports/isolation.py,
which rewrites its record after every property; an exit (with any status), a
crash, a hang or an exception in the audited code therefore costs only that
target: the parent records it as the target's verdict ("error", with the
message and the properties finished before it) and goes on.  The report is rewritten atomically after every target, so nothing already
written is lost when a later one fails.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: seconds one adapter's audit may take (all its properties) before it is stopped
DEFAULT_TIMEOUT = 900


def metadata(ad) -> dict:
    """What an adapter declares, as the report shows it."""
    return {"label": ad.name, "target": ad.target, "quantity": ad.quantity, "framework": ad.framework,
            "device": "cpu", "third_party": True, "source": ad.source, "note": ad.note,
            "output": "1 − q (a loss)" if ad.complement else "q", "differentiable": ad.differentiable,
            "library": ad.name.split(".", 1)[0], "half": "native",  # `losscheck audit`'s default bound
            "conventions": [{"name": c.name, "text": c.text} for c in ad.conventions],
            "fixed": dict(ad.fixed)}


def run_isolated(ad, max_examples=None, seed=None, timeout=DEFAULT_TIMEOUT, echo=True) -> dict:
    """The audit record of adapter ``ad`` from a child process (reports/isolation.py; its progress
    lines go to our stdout as they come); an "error" result where the child did not complete its
    audit: it exited (with any status, 0 included) or crashed before the end, or timed out."""
    from losscheck.reports import isolation
    argv = ["audit", ad.name]
    if max_examples is not None:
        argv += ["--max-examples", str(max_examples)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="losscheck-audit-") as tmp:
        with open(Path(tmp) / "stderr", "w+", encoding="utf-8") as err:  # a file, not a pipe: nothing to drain
            out = isolation.run_child(argv, Path(tmp) / "record.json", total_timeout=timeout,
                                      stdout=None if echo else subprocess.DEVNULL, stderr=err,
                                      env=isolation.env_with_root(), cwd=str(Path(__file__).resolve().parent.parent))
            err.seek(0)
            tail = "\n".join(err.read().strip().splitlines()[-8:])
    record = metadata(ad)
    record["results"] = list(out.record.get("results", []))
    problem = out.problem and f"{out.problem}{f' ({tail})' if tail and out.code != 0 else ''}"
    if not problem and out.code not in (0, 1):  # a usage error of the adapter itself
        problem = f"the audit process exited with status {out.code}: {out.record.get('usage_error') or tail or 'no message'}"
    if problem:
        finished = len(record["results"])
        record["results"].append(isolation.error_record(f"{problem} {isolation.where(out)}; {finished} properties had finished "
                                        "(kept above)"))
    record["seconds"] = round(time.perf_counter() - t0, 2)
    return record


#: properties whose counterexample prints the audited call's own output (value or gradient), which a
#: replay can compare with "got"; a claim's "got" is a derived quantity, not what the snippet prints
REPLAYABLE = ("value[", "gradient[", "stability[", "masked[", "jit[")
_NUMBER = re.compile(r"[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)", re.IGNORECASE)


def _numbers(text: str) -> list[float]:
    return [float(t) for t in _NUMBER.findall(text or "")]


def _same(a: list[float], b: list[float]) -> bool:
    """The same numbers, to the 13 digits every stored result keeps (counterexamples print every
    digit; results written before that kept 17 decimals, fewer significant digits for small values)."""
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y))
                                    or abs(x - y) <= 1e-13 * max(abs(x), abs(y)) for x, y in zip(a, b))


def replay(record: dict, timeout: float = 300, cache: dict | None = None) -> None:
    """Run the snippet of each failing counterexample of ``record`` (a claim's makes every call the
    claim made, printing each output: ``printed``) in a fresh
    interpreter (``python -I -c SNIPPET``: the library, not losscheck) and note in the
    counterexample whether it printed exactly what the audit got (``"replayed"``).  A report
    reader can paste the same snippet; this checks that it shows the finding.  ``cache``
    (snippet → (problem or None, what it printed)) avoids running one snippet twice.  A failure that
    is an exception ("raised RuntimeError") is reproduced by the snippet raising the same one."""
    cache = {} if cache is None else cache
    for r in record.get("results", []):
        c = r.get("counterexample")
        if r.get("verdict") != "fails" or not isinstance(c, dict) or not c.get("snippet"):
            continue
        raised = c.get("exception")  # the snippet's own call raises it too
        if not str(r.get("property", "")).startswith(REPLAYABLE) and not raised and "printed" not in c:
            c["replayed"] = "not replayed: a claim recorded before claims' snippets made all their calls"
            continue
        code = c["snippet"]
        if code not in cache:  # (problem or None, what it printed)
            full = "import numpy as np\nnp.set_printoptions(precision=17, floatmode='unique')\n" + code  # every digit printed
            try:
                proc = subprocess.run([sys.executable, "-I", "-c", full], capture_output=True, text=True,
                                      timeout=timeout, cwd=tempfile.gettempdir())
                err = (proc.stderr or "").strip()
                last = [line for line in err.splitlines() if re.match(r"[\w.]*(Error|Exception)\b", line)][-1:] \
                    or err.splitlines()[-1:] or ["no message"]  # the exception's line, not a trailing hint
                cache[code] = (None if proc.returncode == 0 else
                               f"no: the snippet exited with status {proc.returncode} ({last[0]})", proc.stdout.strip())
            except subprocess.TimeoutExpired:
                cache[code] = (f"no: the snippet ran past {timeout} s", "")
        problem, out = cache[code]
        form = c.get("output_dtype") or (str(tuple(c["output_shape"])) if c.get("output_shape") is not None else None)
        printed = out.splitlines()
        values = "\n".join(printed[:-1]) if "out.dtype" in code else out  # the last line: dtype and shape
        if problem and raised and raised in problem:
            c["replayed"] = f"yes: a fresh interpreter running the snippet raised the same exception {problem[problem.index('('):]}"
        elif problem:
            c["replayed"] = problem
        elif form and printed and form in printed[-1]:
            c["replayed"] = f"yes: a fresh interpreter running the snippet printed dtype and shape {printed[-1]!r}"
        elif "printed" in c and _same(_numbers(out), _numbers(c["printed"])):
            c["replayed"] = "yes: a fresh interpreter running the snippet printed what each of the claim's calls returned"
        elif "printed" not in c and _same(_numbers(values), _numbers(str(c.get("got", "")))):
            c["replayed"] = "yes: a fresh interpreter running the snippet printed the same result"
        else:
            c["replayed"] = f"no: a fresh interpreter printed {out[:200]}"


def plan(only=None, settings=None, update_from=None) -> tuple[dict, list]:
    """(the results dict to fill, the adapters to audit): every adapter whose name contains ``only``
    (all without it), those whose library is missing listed as skipped.  ``update_from``: a folder
    whose ``thirdparty.json`` keeps the records of the adapters not audited now."""
    from losscheck.impls import adapters as registry

    from .build import build_results
    chosen = [a for a in registry.adapters() if not only or only in a.name]
    results = build_results([], settings=settings, symbolic=False, quantities=sorted({a.quantity for a in chosen}))
    results["kind"] = "thirdparty"
    results["skipped_adapters"] = [{"adapter": ad.name, "quantity": ad.quantity, "missing": registry.missing(ad)}
                                   for ad in chosen if not registry.available(ad)]
    runnable = [a for a in chosen if registry.available(a)]
    if update_from is not None and (Path(update_from) / "thirdparty.json").is_file():
        with open(Path(update_from) / "thirdparty.json", encoding="utf-8") as f:
            previous = json.load(f)
        known, again = _order(), {a.name for a in runnable}
        results["audits"] = [r for r in previous.get("audits", []) if r.get("label") in known and r["label"] not in again]
        results["quantities"] = {**previous.get("quantities", {}), **results.get("quantities", {})}
    return results, runnable


def _order() -> dict:
    from losscheck.impls import adapters as registry
    return {a.name: i for i, a in enumerate(registry.adapters())}


def audit_adapter(name: str, max_examples=None, seed=None, timeout=DEFAULT_TIMEOUT, echo=False) -> dict:
    """The record of adapter ``name``: audited in a child process (:func:`run_isolated`), its
    snippets replayed (:func:`replay`) and its findings annotated from the known-deviations table.
    A top-level function of names and numbers, so that a process pool can run it."""
    from losscheck.impls import adapters as registry
    from losscheck.impls.adapters import deviations
    (ad,) = [a for a in registry.adapters() if a.name == name]
    record = run_isolated(ad, max_examples, seed, timeout, echo)
    replay(record)
    deviations.annotate(record)
    return record


def add(results: dict, record: dict, out_dir) -> None:
    """Put one adapter's record into ``results`` (in the registry's order) and rewrite ``thirdparty.*``."""
    from .render import write_report
    order = _order()
    results["audits"].append(record)
    results["audits"].sort(key=lambda r: order.get(r["label"], len(order)))  # the report lists adapters in a fixed order
    write_report(results, out_dir, stem="thirdparty")


def summary(record: dict, i: int, total: int) -> str:
    """The line printed when an adapter's audit ends."""
    conf = [r for r in record["results"] if r.get("kind") == "conformance"]
    return (f"[{i}/{total}] {record['label']} :: {record['quantity']}: "
            f"{sum(r['verdict'] == 'holds' for r in conf)} hold, "
            f"{sum(r['verdict'] == 'deviates' for r in conf)} deviate, "
            f"{sum(r['verdict'] in ('fails', 'error') for r in conf)} fail or error "
            f"({record['seconds']:.0f} s)")


def audit_all(out_dir, max_examples=None, seed=None, timeout=DEFAULT_TIMEOUT, only=None, settings=None,
              echo=True, jobs=1, update=False) -> dict:
    """Audit every installed adapter (``only``: names containing it), isolated; write
    ``thirdparty.*`` into ``out_dir`` after each; return the results dict.  ``jobs`` > 1 audits
    that many adapters at once (one process each; their progress lines are then not echoed,
    one summary line per finished adapter is printed instead).  ``update``: keep the other adapters'
    records of an existing ``out_dir/thirdparty.json`` and replace only those audited now."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from .progress import AdapterProgress
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    results, runnable = plan(only, settings, out_dir if update else None)

    # a live bar (adapters done, elapsed, ETA, findings) on a terminal; the children's own
    # property lines are echoed only without it, one adapter at a time
    with AdapterProgress(len(runnable), bar=None if echo else False) as bar:
        echo_children = echo and jobs == 1 and not bar.bar
        if jobs == 1:
            for i, ad in enumerate(runnable, 1):
                if echo_children:
                    print(f"[{i}/{len(runnable)}] {ad.name} :: {ad.quantity}", flush=True)
                record = audit_adapter(ad.name, max_examples, seed, timeout, echo_children)
                add(results, record, out_dir)
                bar.adapter_done(summary(record, i, len(runnable)), record)
        else:
            bar.print(f"auditing {len(runnable)} adapters, {jobs} at a time")
            with ThreadPoolExecutor(max_workers=jobs) as pool:  # each a child process: threads only wait
                futures = [pool.submit(audit_adapter, ad.name, max_examples, seed, timeout) for ad in runnable]
                for i, fut in enumerate(as_completed(futures), 1):
                    record = fut.result()
                    add(results, record, out_dir)
                    bar.adapter_done(summary(record, i, len(runnable)), record)
    finish(results, out_dir)
    return results


def finish(results: dict, out_dir) -> None:
    """The stale known-deviations rows (warned about), then ``thirdparty.*`` written once more."""
    from losscheck.impls.adapters import deviations

    from .render import write_report
    results["stale_deviations"] = deviations.stale(results["audits"])
    for row in results["stale_deviations"]:
        print(f"warning: the known-deviations row {row!r} matched nothing (impls/adapters/deviations.py)", flush=True)
    write_report(results, out_dir, stem="thirdparty")


def rewrite(out_dir, replay_snippets: bool = True) -> dict:
    """Read ``out_dir/thirdparty.json`` back, annotate it again with today's known-deviations table
    (and replay its snippets), and rewrite ``thirdparty.*``: the table can be corrected without
    auditing again."""
    from losscheck.impls.adapters import deviations
    with open(Path(out_dir) / "thirdparty.json", encoding="utf-8") as f:
        results = json.load(f)
    cache: dict = {}
    for i, record in enumerate(results.get("audits", []), 1):
        print(f"[{i}/{len(results['audits'])}] {record.get('label')}", flush=True)
        for r in record.get("results", []):
            r.pop("known", None)
        if replay_snippets:
            replay(record, cache=cache)
        deviations.annotate(record)
    finish(results, out_dir)
    return results
