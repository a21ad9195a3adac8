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


def audit_ours(max_examples=None, seed=None, verbose=False, quantities=None, jobs=1, profile=None):
    """Audit every registered implementation on every available device (``verbose``: a
    progress bar on a terminal, one line per property elsewhere).  ``jobs`` > 1 audits that many
    at once, each in a process of its own (``concurrent.futures`` with spawn: a fresh interpreter,
    never a fork of one where jax is initialised; ``profile`` is the Hypothesis profile each loads),
    one line per finished audit instead of the bar; the results keep the plan's order."""
    from losscheck import impls, spec
    from losscheck.properties import frameworks

    from .progress import AuditProgress
    plan = []
    for fw_name in frameworks.NAMES:
        fw = frameworks.get(fw_name)
        if not fw.available():
            print(f"skipping {fw_name}: not installed", file=sys.stderr)
            continue
        ours = impls.implementations(fw_name)
        plan += [(fw_name, device, qname) for device in fw.devices() for qname in spec.QUANTITIES
                 if (not quantities or qname in quantities) and qname in ours]
    if jobs > 1 and len(plan) > 1:
        return _audit_in_processes(plan, max_examples, seed, jobs, profile, verbose)
    audits = []
    with AuditProgress(targets=len(plan)) if verbose else contextlib.nullcontext() as observer:
        for fw_name, device, qname in plan:
            if observer is not None:
                observer.begin_target(f"{_label(fw_name, device)} :: {qname}")
            audits.append(audit_one(fw_name, device, qname, max_examples, seed, observer=observer))
    return audits


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


def _audit_in_processes(plan, max_examples, seed, jobs, profile, verbose):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    out = [None] * len(plan)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(audit_one, fw, device, qname, max_examples, seed, None, profile): i
                   for i, (fw, device, qname) in enumerate(plan)}
        for done, future in enumerate(as_completed(futures), 1):
            res = out[futures[future]] = future.result()
            if verbose:
                failing = sum(r["verdict"] in ("fails", "error") for r in res["results"])
                print(f"[{done}/{len(plan)}] {res['label']} :: {res['quantity']}: {len(res['results'])} properties, "
                      f"{failing} failing, {res['seconds']:.0f} s", flush=True)
    return out


def claim_records(q, audits, symbolic=True, verbose=False):
    """Each claim with its status: proved / proved on instances / refuted (symbolic),
    held / failed with per-implementation verdicts (numerical)."""
    out = []
    for c in q.claims:
        if hasattr(c, "check") and c in q.symbolic_claims:
            if not symbolic:
                continue
            t0 = time.perf_counter()
            r = c.check()
            if verbose:
                print(f"  claim {q.name}.{c.name}: {r.status} ({time.perf_counter() - t0:.1f}s)", flush=True)
            out.append({"name": c.name, "statement": c.statement, "kind": "symbolic", "status": r.status,
                        "detail": r.detail, "counterexample": r.counterexample, "source": c.source})
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


def build_results(audits, settings=None, symbolic=True, verbose=False, quantities=None):
    """The results dict; ``quantities`` limits the sections (default: every registered one)."""
    from losscheck import spec
    names = [n for n in spec.QUANTITIES if quantities is None or n in quantities]
    quantities = {}
    for name in names:
        q = spec.QUANTITIES[name]
        quantities[name] = {
            "family": q.family, "summary": q.summary, "formula": q.formula, "signature": q.signature,
            "conventions": list(q.conventions), "reference": q.reference,
            "claims": claim_records(q, audits, symbolic, verbose),
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
