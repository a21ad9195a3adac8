"""Audit our implementations and assemble the results dict that
reports.render turns into index.md / index.html / results.json."""

from __future__ import annotations

import contextlib
import datetime
import platform
import sys
import time


def environment():
    from losscheck.properties import frameworks
    env = {"python": platform.python_version(), "devices": [], "skipped_devices": []}
    for name in frameworks.NAMES:
        fw = frameworks.get(name)
        if not fw.available():
            env["skipped_devices"].append(f"{name}: not installed")
            continue
        env[name] = fw.module().__version__
        have = fw.devices()
        env["devices"] += [f"{name}:{d}" for d in have]
        env["skipped_devices"] += [f"{name}:{d}: not available on this machine" for d in fw.all_devices() if d not in have]
    return env


def audit_ours(max_examples=None, seed=None, verbose=False, quantities=None, profile=None):
    """Audit every registered implementation on every available device, one after another, in this
    process (``verbose``: a progress bar on a terminal, one line per property elsewhere);
    :func:`audit_report` runs them in a pool of processes."""
    from .progress import AuditProgress
    plan = plan_ours(quantities)
    audits = []
    with AuditProgress(targets=len(plan)) if verbose else contextlib.nullcontext() as observer:
        for fw_name, device, qname in plan:
            if observer is not None:
                observer.begin_target(f"{_label(fw_name, device)} :: {qname}")
            audits.append(audit_one(fw_name, device, qname, max_examples, seed, observer=observer))
    return audits


def plan_ours(quantities=None) -> list[tuple[str, str, str]]:
    """(framework, device, quantity) of every registered implementation on every available device."""
    from losscheck import impls, spec
    from losscheck.properties import frameworks
    plan = []
    for fw_name in frameworks.NAMES:
        fw = frameworks.get(fw_name)
        if not fw.available():
            print(f"skipping {fw_name}: not installed", file=sys.stderr)
            continue
        ours = impls.implementations(fw_name)
        plan += [(fw_name, device, qname) for device in fw.devices() for qname in spec.QUANTITIES
                 if (not quantities or qname in quantities) and qname in ours]
    return plan


#: The longest audits of ours, seconds of jax's in ``losscheck report`` at 66dd1c9 (two workers; every
#: other quantity's ≤ 23 s): they start first, so that the last task to finish is a short one rather
#: than soft_topk's, begun when the other worker was nearly done (it started 43rd of 75 and ended last).
_SLOWEST = {"soft_topk": 88, "exact_accuracy": 62, "ciou": 58, "zlpr": 42, "diou": 39, "giou": 38, "box_iou": 32}
#: The longest proofs (:func:`prove`), seconds in one process at d863711 (every other quantity's ≤ 2.3 s):
#: the first proofs to start, so that short ones fill the end (soft_topk's, submitted last, had ended
#: the report 9 s after every other task)
_SLOWEST_PROOFS = {"soft_topk": 10, "giou": 4.3, "ciou": 3.5}


def audit_quantity(items, max_examples=None, seed=None, profile=None):
    """:func:`audit_one` for each ``(framework, device, quantity)`` of ``items`` (one quantity),
    in one process and in that order: the properties draw the same cases in every framework, so
    the reference values the first computes (spec.reference, memoised per process) serve the rest."""
    return [audit_one(fw, device, qname, max_examples, seed, None, profile) for fw, device, qname in items]


def audit_report(max_examples=None, seed=None, jobs=2, profile=None, adapters=(), timeout=None, quantities=None):
    """What ``losscheck report`` computes, in one pool of ``jobs`` processes (spawned: fresh
    interpreters, never a fork of one where jax is initialised; ``profile`` is the Hypothesis
    profile each loads): the audits of our implementations, the symbolic claims of every quantity,
    and the audits of ``adapters`` (names; each in a child process of its own, which holds the
    worker's place while it runs).  Our audits of a quantity are one task (:func:`audit_quantity`:
    jax's, then torch's, which reuses its reference values), the slowest quantities first, then
    the adapters' audits and the proofs (the slowest first), so that no core idles at the end.  One line per finished
    audit.  Returns (our audits in the plan's order, {quantity: proofs}, the adapters' records in
    the order given)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from losscheck import spec

    from . import thirdparty
    plan = plan_ours(quantities)
    names = [q for q in spec.QUANTITIES if not quantities or q in quantities]
    ours, proofs, theirs = [None] * len(plan), {}, [None] * len(adapters)
    total = len(plan) + len(adapters) + len(names)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures, groups = {}, {}
        for i, item in enumerate(plan):
            groups.setdefault(item[2], []).append(i)
        for qname, idx in sorted(groups.items(), key=lambda g: -_SLOWEST.get(g[0], 0)):
            idx.sort(key=lambda i: plan[i][0] != "jax")  # jax first: the longer, its references then reused
            futures[pool.submit(audit_quantity, [plan[i] for i in idx], max_examples, seed, profile)] = ("ours", idx)
        for i, name in enumerate(adapters):
            kw = {} if timeout is None else {"timeout": timeout}
            futures[pool.submit(thirdparty.audit_adapter, name, max_examples, seed, **kw)] = ("adapter", i)
        for qname in sorted(names, key=lambda q: -_SLOWEST_PROOFS.get(q, 0)):
            futures[pool.submit(prove, qname)] = ("claims", qname)
        done = 0
        for future in as_completed(futures):
            kind, key = futures[future]
            res = future.result()
            if kind == "ours":  # one line per audit of the task
                lines = []
                for i, rec in zip(key, res):
                    ours[i] = rec
                    failing = sum(r["verdict"] in ("fails", "error") for r in rec["results"])
                    lines.append(f"{rec['label']} :: {rec['quantity']}: {len(rec['results'])} properties, "
                                 f"{failing} failing, {rec['seconds']:.0f} s")
            elif kind == "adapter":
                theirs[key] = res
                lines = [thirdparty.summary(res, key + 1, len(adapters)).split("] ", 1)[1]]
            else:
                proofs[key] = res
                statuses = [r["status"] for r in res.values()]
                lines = [f"claims of {key}: " + ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
                         if statuses else f"claims of {key}: no symbolic claim"]
            for line in lines:
                done += 1
                print(f"[{done}/{total}] {line}", flush=True)
    return ours, proofs, theirs


def _label(fw_name, device):
    return f"{fw_name} (ours)" + ("" if device == "cpu" else f" [{device}]")


def audit_one(fw_name, device, qname, max_examples=None, seed=None, observer=None, profile=None):
    """The audit of our implementation of ``qname`` in ``fw_name`` on ``device`` (a record)."""
    from losscheck import impls
    from losscheck.properties import engine, profiles
    if profile:  # a process of its own: the parent's Hypothesis profile
        profiles.load(profile)
    t0 = time.perf_counter()
    res = engine.audit(impls.get(qname, fw_name), qname, fw_name, device, label=_label(fw_name, device),
                       target_spec=impls.target(qname, fw_name), max_examples=max_examples, seed=seed,
                       native_half=False,  # ours compute half precision in float32: the tighter bound
                       observer=observer)
    res["third_party"] = False
    res["seconds"] = round(time.perf_counter() - t0, 2)
    return res


def prove(qname: str, verbose=False) -> dict:
    """{claim name: record} of the symbolic claims of quantity ``qname``, each checked with SymPy
    now: proved / proved on instances / refuted (a top-level function: a process pool runs it)."""
    from losscheck import spec
    q = spec.QUANTITIES[qname]
    out = {}
    for c in q.claims:
        if hasattr(c, "check") and c in q.symbolic_claims:
            t0 = time.perf_counter()
            r = c.check()
            if verbose:
                print(f"  claim {q.name}.{c.name}: {r.status} ({time.perf_counter() - t0:.1f}s)", flush=True)
            out[c.name] = {"name": c.name, "statement": c.statement, "kind": "symbolic", "status": r.status,
                           "detail": r.detail, "counterexample": r.counterexample, "source": c.source}
    return out


def claim_records(q, audits, symbolic=True, verbose=False, proofs=None):
    """Each claim with its status: proved / proved on instances / refuted (symbolic; ``proofs``:
    :func:`prove`'s records where already computed), held / failed with per-implementation
    verdicts (numerical)."""
    out = []
    if symbolic and proofs is None:
        proofs = prove(q.name, verbose)
    for c in q.claims:
        if hasattr(c, "check") and c in q.symbolic_claims:
            if symbolic:
                out.append(proofs[c.name])
            continue
        per, examples = {}, 0
        for a in audits:  # a catalogue claim's status comes from our implementations; third-party
            if a["quantity"] != q.name or a.get("third_party"):  # results are in their own section
                continue
            for r in a["results"]:
                if r["property"] == f"claim:{c.name}":
                    per[a["label"]] = "held" if r["verdict"] == "holds" else r["verdict"]
                    examples = max(examples, r["examples"])
        if not per:
            status, detail = "not run", "no implementation audited"
        elif all(v == "held" for v in per.values()):
            status, detail = "held", f"held on {examples} examples on each of {len(per)} implementations (tolerance: {c.tolerance})"
        else:
            status = "failed"
            detail = "broken by " + ", ".join(k for k, v in per.items() if v != "held") + f" (tolerance: {c.tolerance})"
        out.append({"name": c.name, "statement": c.statement, "kind": "numerical", "status": status,
                    "examples": examples, "detail": detail, "counterexample": None,
                    "per_implementation": per, "source": c.source})
    return out


def build_results(audits, settings=None, symbolic=True, verbose=False, quantities=None, proofs=None):
    """The results dict; ``quantities`` limits the sections (default: every registered one);
    ``proofs``: {quantity: :func:`prove`'s records} already computed."""
    from losscheck import spec
    names = [n for n in spec.QUANTITIES if quantities is None or n in quantities]
    quantities = {}
    for name in names:
        q = spec.QUANTITIES[name]
        quantities[name] = {
            "family": q.family, "summary": q.summary, "formula": q.formula, "signature": q.signature,
            "conventions": list(q.conventions), "reference": q.reference,
            "claims": claim_records(q, audits, symbolic, verbose, (proofs or {}).get(name)),
        }
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "losscheck_version": version(),
        "settings": settings or {},
        "environment": environment(),
        "quantities": quantities,
        "audits": audits,
    }


def version() -> str:
    """losscheck's installed version ("0+unknown" from a checkout that is not installed)."""
    from importlib import metadata
    try:
        return metadata.version("losscheck")
    except metadata.PackageNotFoundError:
        return "0+unknown"
