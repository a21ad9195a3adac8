"""The ``losscheck`` command line.

    losscheck list
    losscheck show QUANTITY [--no-prove]
    losscheck --version
    losscheck audit TARGET --quantity NAME [--framework torch|jax] [--device cpu]
                    [--max-examples N] [--seed S] [--report DIR] [--json FILE] [--strict] [--only TEXT]
                    [--gate bug|accuracy|range] [--fail-fast] [--no-shrink] [--shrink-time SECONDS]
                    [--loss] [--fix NAME=VALUE ...] [--no-grad] [--convention NAME ...]
                    [--timeout SECONDS] [--total-timeout SECONDS]
    losscheck report [--out DIR] [--max-examples N] [--seed S] [--jobs N] [--strict] [--third-party seeds|all|none]
    losscheck audit-all [--out DIR] [--max-examples N] [--seed S] [--timeout S] [--only TEXT] [--jobs N] [--update] [--rewrite]

TARGET is ``package.module:callable`` or ``path/to/file.py:callable``.
Exit status of ``audit``: 0 no conformance finding at the gate, 1 one (or the
target crashed, exited or hung in the child process that runs it), 2 usage error.  ``report`` exits 0 once the report is written (its findings
are in it), 1 with ``--strict`` if a conformance property fails.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import os
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


def load_target(target: str):
    """Import ``module:callable`` or ``file.py:callable``; UsageError with a clear message otherwise."""
    mod_name, sep, attr = target.rpartition(":")
    if not sep or not mod_name or not attr:
        raise UsageError(f"TARGET must be 'package.module:callable' or 'path/to/file.py:callable', got {target!r}")
    try:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise UsageError(f"TARGET file {mod_name!r} does not exist")
            spec = importlib.util.spec_from_file_location(f"losscheck_target_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            # the file's imports see its own folder and the current one (as `python file.py` from there would),
            # at import and at call time; nothing of losscheck's lies outside the losscheck namespace to be shadowed
            _on_path(os.getcwd(), str(path.resolve().parent))
            spec.loader.exec_module(module)
        else:
            _on_path(os.getcwd())
            module = importlib.import_module(mod_name)
    except UsageError:
        raise
    except SystemExit as e:  # never the audit's own exit status
        raise UsageError(f"cannot import TARGET {mod_name!r}: importing it called sys.exit({e.code!r})") from None
    except Exception as e:
        raise UsageError(f"cannot import TARGET {mod_name!r}: {type(e).__name__}: {e}") from e
    fn = getattr(module, attr, None)
    if fn is None or not callable(fn):
        raise UsageError(f"TARGET module {mod_name!r} has no callable {attr!r}")
    return fn


def _on_path(*folders):
    for folder in folders:
        if folder not in sys.path:
            sys.path.insert(0, folder)


def _adapter(name):
    """The adapter of impls/adapters/ called ``name`` (e.g. seed001.dice_loss), or None."""
    if ":" in name:
        return None
    from losscheck.impls import adapters
    return {a.name: a for a in adapters.adapters()}.get(name)


def check_signature(fn, q, fixed=()):
    """The callable must accept the catalogue signature (required args positionally, the rest by
    name), less the ``fixed`` arguments it has no parameter for (it hard-codes them)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins without a signature: let the properties speak
    args = [a for a in q.args if not (a.name in fixed and a.name not in sig.parameters)]
    try:
        sig.bind(*[a.name for a in args if a.required], **{a.name: a.default for a in args if not a.required})
    except TypeError as e:
        raise UsageError(f"signature does not fit: {q.name} needs {q.signature}, the target is {fn.__name__}{sig} ({e})") from e


def cmd_list(args):
    from losscheck import spec
    for q in spec.QUANTITIES.values():
        print(f"{q.signature:<40} {q.family:<10} {q.formula}")
    return EXIT_OK


def cmd_show(args):
    from losscheck.reports.catalogue import entry
    try:
        print(entry(args.quantity, prove=not args.no_prove))
    except ValueError as e:
        raise UsageError(str(e)) from e
    return EXIT_OK


def _writable(path: str, what: str, folder: bool) -> None:
    """A UsageError, before any work, unless ``path`` (a file, or with ``folder`` a folder that is
    made if missing) can be written."""
    p = Path(path)
    if folder and p.exists() and not p.is_dir():
        raise UsageError(f"{what} {path!r} is a file, not a folder")
    if not folder and p.is_dir():
        raise UsageError(f"{what} {path!r} is a folder, not a file")
    if not folder and not p.parent.is_dir():
        raise UsageError(f"{what} {path!r}: the folder {str(p.parent)!r} does not exist")
    base = p if folder else p.parent
    while not base.exists():
        base = base.parent
    if not base.is_dir():
        raise UsageError(f"{what} {path!r}: {str(base)!r} is a file, not a folder")
    if not os.access(base, os.W_OK):
        raise UsageError(f"{what} {path!r}: {str(base)!r} is not writable")


def cmd_audit(args):
    if args.json:
        _writable(args.json, "--json", folder=False)
    if args.report:
        _writable(args.report, "--report", folder=True)
    if not args.in_process:
        return _audit_isolated(args)
    return _audit_here(args)


def _audit_isolated(args):
    """The audit in a child process (reports/isolation.py): a target that ends the interpreter, crashes
    or hangs gets an error verdict for the property in progress, and the properties already finished
    are kept; never an exit status of 0 without a verdict."""
    import tempfile

    from losscheck.reports import isolation
    with tempfile.TemporaryDirectory(prefix="losscheck-") as tmp:
        out = isolation.run_child(args.argv, Path(tmp) / "record.json", property_timeout=args.timeout,
                                  total_timeout=args.total_timeout, env=isolation.env_with_root())
    if not out.problem:
        return out.code
    done = out.record.get("results", [])
    message = f"{out.problem} {isolation.where(out)}; {len(done)} properties had finished"
    error = isolation.error_record(message, out.running)
    print(f"  ERROR {error['property']:<26} {message}", flush=True)
    if args.json:
        _write_json(args.json, {**out.record, "results": done + [error], "completed": False, "passed": False,
                                "running": None})
    print(f"verdict: FAIL at gate {args.gate} (the audit did not complete: {out.problem} {isolation.where(out)})")
    return EXIT_FAIL


def _audit_here(args):
    from losscheck import spec
    from losscheck.properties import engine, profiles
    profiles.load(args.profile)
    adapter = _adapter(args.target)
    if adapter and args.quantity not in (None, adapter.quantity):
        raise UsageError(f"adapter {adapter.name} presents quantity {adapter.quantity!r}, not {args.quantity!r}")
    if not adapter and not args.quantity:
        raise UsageError("--quantity is required (except for an adapter's name; see impls/adapters/)")
    try:
        q = spec.get(args.quantity or adapter.quantity)
    except ValueError as e:
        raise UsageError(str(e)) from e
    fn = adapter.fn if adapter else load_target(args.target)
    user = _declared(args, q)
    if adapter and user:
        raise UsageError(f"--loss, --fix, --no-grad and --convention declare a user's callable; adapter {adapter.name} declares its own")
    check_signature(fn, q, user.get("fixed", {}))
    from losscheck.properties import frameworks
    try:
        framework = args.framework or (adapter.framework if adapter else frameworks.infer(fn))
    except ValueError as e:
        raise UsageError(str(e)) from e
    if args.framework and not adapter:  # a torch target audited as jax fails every property: say so first
        try:
            uses = frameworks.infer(fn)
        except ValueError:  # both or neither: the properties will tell
            uses = args.framework
        if uses != args.framework:
            raise UsageError(f"--framework {args.framework}, but the target's module uses {uses} only "
                             f"(drop --framework, or pass --framework {uses})")
    print(f"losscheck audit {args.target} --quantity {q.name} ({framework}, {args.device}, "
          f"{args.max_examples} examples per property{'' if args.seed is None else f', seed {args.seed}'})", flush=True)
    from losscheck.reports.progress import AuditProgress
    try:
        declared = dict(conventions=adapter.conventions, complement=adapter.complement,
                        differentiable=adapter.differentiable, fixed=adapter.fixed) if adapter else user
        done = []
        from losscheck.reports.build import version
        record = {"losscheck_version": version(), "target": args.target, "quantity": q.name, "framework": framework,
                  "device": args.device, "gate": args.gate, "settings": _settings(args), "started": True,
                  "completed": False, "running": None, "running_since": None, "results": done}

        def save(**changes):  # --json and the parent's --record: replaced at once, rewritten as the audit goes
            record.update(changes)
            for path in (args.json, args.record):
                if path:
                    _write_json(path, record)
        save()

        def progress(rec):
            done.append(rec)
            save(running=None, running_since=None)  # a crash later keeps what finished

        class Recording(AuditProgress):
            def property_started(self, name, budget):
                save(running=name, running_since=time.time())
                super().property_started(name, budget)
        with Recording() as observer:
            result = engine.audit(fn, q.name, framework, args.device, label=args.target,
                                  target_spec=adapter.target if adapter else args.target,
                                  max_examples=args.max_examples, seed=args.seed, only=args.only,
                                  progress=progress, observer=observer, native_half=args.half == "native",
                                  shrink=not args.no_shrink, shrink_seconds=args.shrink_time,
                                  stop_at_failure=args.fail_fast, gate=args.gate, **declared)
    except ValueError as e:
        raise UsageError(str(e)) from e
    if adapter:  # an adapter's known deviations (upstream's choices and bugs), as audit-all annotates them
        from losscheck.impls.adapters import deviations
        deviations.annotate(result)
    _print_failures([result])
    from losscheck.properties.severity import GATES
    ok = engine.conformance_ok(result, strict=args.strict, gate=args.gate)
    save(results=result["results"], completed=True, passed=ok)
    conf = [r for r in result["results"] if r["kind"] == "conformance"]
    contract = [r for r in result["results"] if r["kind"] == "contract"]
    print(f"conformance: {sum(r['verdict'] == 'holds' for r in conf)}/{len(conf)} hold; "
          f"contract: {sum(r['verdict'] == 'holds' for r in contract)}/{len(contract)} hold"
          f"{'' if args.strict else ' (informational; --strict makes them count)'}")
    print(f"findings: {severity_summary(conf)}")
    stricter = GATES[GATES.index(args.gate) + 1] if args.gate != GATES[-1] else ""
    print(f"verdict: {'PASS' if ok else 'FAIL'} at gate {args.gate}"
          + (f" (findings below it are reported, not counted; --gate {stricter} counts them)" if stricter else ""))
    if args.report:
        from losscheck.reports.build import build_results
        from losscheck.reports.render import write_report
        paths = write_report(build_results([result], settings=_settings(args), symbolic=False, quantities=[q.name]), args.report)
        print(f"report: {', '.join(str(p) for p in paths.values())}")
    return EXIT_OK if ok else EXIT_FAIL




def severity_summary(records) -> str:
    """"2 bug, 1 accuracy, 0 range, 1 error" for result records (properties.results.findings_text)."""
    from losscheck.properties.results import PropertyResult, findings_text
    return findings_text(PropertyResult.from_record(r) for r in records)


def _write_json(path, data):
    from losscheck.reports.render import _atomic_write, to_json
    _atomic_write(Path(path), to_json(data))


def _declared(args, q) -> dict:
    """What ``--loss``, ``--fix NAME=VALUE`` and ``--no-grad`` declare of a user's callable, as
    engine.audit takes it (an adapter's ``complement``, ``fixed`` and ``differentiable``)."""
    out = {}
    if args.loss:
        out["complement"] = True
    if args.no_grad:
        out["differentiable"] = False
    if args.convention:
        from losscheck.impls.adapters.conventions import named
        try:
            out["conventions"] = tuple(named(name, q) for name in args.convention)
        except ValueError as e:
            raise UsageError(f"--{e}") from None
    fixed = {}
    for item in args.fix or ():
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--fix takes NAME=VALUE (e.g. --fix smooth=1), got {item!r}")
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            value = None
        if not isinstance(value, (bool, int, float)):
            raise UsageError(f"--fix {name}: {text!r} is not a number or True/False")
        from losscheck.spec.quantity import ARRAY_KINDS
        scalar = {a.name: a for a in q.args if a.kind not in ARRAY_KINDS}
        if name not in scalar:
            raise UsageError(f"--fix {name}: not a scalar argument of {q.name} (signature {q.signature})")
        if isinstance(scalar[name].default, float) and not isinstance(value, bool):
            value = float(value)  # smooth=1 means 1.0
        fixed[name] = value
    if fixed:
        out["fixed"] = fixed
    return out


def _settings(args):
    return {"profile": args.profile, "max_examples": args.max_examples, "seed": args.seed}


def _print_failures(results):
    """Each audit's findings by root cause, bugs first (properties.results.group_findings): one
    failure seen at several dtypes and properties is printed once, with where else it shows."""
    from losscheck.properties.results import TIERS, AuditResult, group_findings
    for res in results:
        groups = group_findings(AuditResult.from_record(res).results)
        if not groups:
            continue
        counts = {t: sum(g.tier == t for g in groups) for t in TIERS}
        print(f"\n=== {res['label']}: {len(groups)} finding(s) by root cause, most severe first: "
              + ", ".join(f"{n} {t}" for t, n in counts.items() if n) + " ===")
        for g in groups:
            r, c = g.representative, g.representative.counterexample
            also = [p for p in g.where if p != r.property]
            print(f"\n--- {g.tier.upper()}: {g.cause} — {r.property}" + (f" (also in {', '.join(also)})" if also else "") + " ---")
            print(r.message + (f"\noutside the typical domain: {r.off_domain}" if r.off_domain else ""))
            if c and c.snippet:
                print("reproduce:\n" + "\n".join("    " + line for line in c.snippet.splitlines()))
            if c and c.expected is not None:
                print(f"expected: {c.expected}\ngot:      {c.got}")
            if r.known:  # a row of impls/adapters/deviations.py explains it
                print(f"known: {r.known['reason']}" + (f" ({r.known['upstream']})" if r.known.get("upstream") else ""))


def cmd_report(args):
    from losscheck.properties import profiles
    from losscheck.reports import thirdparty
    from losscheck.reports.build import audit_ours, audit_report, build_results
    from losscheck.reports.render import write_report
    profiles.load(args.profile)
    only = "seed" if args.third_party == "seeds" else None
    skipped = []
    if args.jobs > 1:  # one pool: our audits, the proofs and the adapters' audits side by side
        tp, runnable = thirdparty.plan(only, _settings(args)) if args.third_party != "none" else (None, [])
        print(f"auditing our implementations, proving the symbolic claims and auditing {len(runnable)} adapters, "
              f"{args.jobs} at a time", flush=True)
        audits, proofs, records = audit_report(max_examples=args.max_examples, seed=args.seed, jobs=args.jobs,
                                               profile=args.profile, adapters=[a.name for a in runnable])
        results = build_results(audits, settings=_settings(args), proofs=proofs)
        if tp is not None:
            for record in records:
                thirdparty.add(tp, record, args.out)
            thirdparty.finish(tp, args.out)
            skipped = tp["skipped_adapters"]
            audits += tp["audits"]
            results["audits"], results["skipped_adapters"] = audits, skipped
        paths = write_report(results, args.out)
    else:
        audits = audit_ours(max_examples=args.max_examples, seed=args.seed, verbose=True, profile=args.profile)
        results = build_results(audits, settings=_settings(args), symbolic=True, verbose=True)
        paths = write_report(results, args.out)  # ours first: a failure later keeps it
        if args.third_party != "none":
            print("\nthird-party code (one process per adapter):", flush=True)
            theirs = thirdparty.audit_all(args.out, max_examples=args.max_examples, seed=args.seed, settings=_settings(args),
                                          only=only)
            skipped = theirs["skipped_adapters"]
            audits += theirs["audits"]
            results["audits"], results["skipped_adapters"] = audits, skipped
            paths = write_report(results, args.out)
    _print_failures([a for a in audits if not a.get("third_party")])
    bad = [a for a in audits for r in a["results"]
           if not a.get("third_party") and r["kind"] == "conformance" and r["verdict"] != "holds"]
    tp = [r for a in audits if a.get("third_party") for r in a["results"] if r["kind"] == "conformance"]
    print(f"\nreport written: {', '.join(str(p) for p in paths.values())}")
    print(f"{len(audits)} audits, {sum(len(a['results']) for a in audits)} properties, "
          f"{len(bad)} conformance failures on our implementations")
    if tp or skipped:
        print(f"third-party code: {sum(r['verdict'] in ('fails', 'error') for r in tp)} findings "
              f"({severity_summary(tp)}), "
              f"{sum(r['verdict'] == 'deviates' for r in tp)} deviations by a declared convention"
              + (f"; not audited (library missing): {', '.join(s['adapter'] for s in skipped)}" if skipped else ""))
    if bad:
        print("(findings on our own implementations are shown in the report; --strict makes them the exit status)")
    return EXIT_FAIL if bad and args.strict else EXIT_OK


def cmd_audit_all(args):
    from losscheck.properties import profiles
    from losscheck.reports.thirdparty import audit_all, rewrite
    profiles.load(args.profile)
    if args.rewrite:
        if not (Path(args.out) / "thirdparty.json").is_file():
            raise UsageError(f"--rewrite needs {Path(args.out) / 'thirdparty.json'} from an earlier audit-all")
        results = rewrite(args.out)
    else:
        results = audit_all(args.out, max_examples=args.max_examples, seed=args.seed, timeout=args.timeout,
                            only=args.only, settings=_settings(args), jobs=args.jobs, update=args.update)
    tp = [r for a in results["audits"] for r in a["results"] if r["kind"] == "conformance"]
    print(f"\nthird-party report written: {Path(args.out) / 'thirdparty.md'}, {Path(args.out) / 'thirdparty.html'}")
    print(f"{len(results['audits'])} targets audited; {sum(r['verdict'] in ('fails', 'error') for r in tp)} findings "
          f"({severity_summary(tp)}), {sum(r['verdict'] == 'deviates' for r in tp)} deviations by a declared convention")
    for s in results["skipped_adapters"]:
        print(f"not audited: {s['adapter']} ({', '.join(s['missing'])} not installed)")
    return EXIT_OK


def parser():
    p = argparse.ArgumentParser(prog="losscheck", description="Property-based verification of differentiable metric surrogates.")
    import losscheck
    p.add_argument("--version", action="version", version=f"losscheck {losscheck.__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the quantities and their signatures").set_defaults(func=cmd_list)
    s = sub.add_parser("show", help="a quantity's catalogue entry: formula, signature, conventions, claims and their status")
    s.add_argument("quantity", metavar="QUANTITY", help="a quantity's name (losscheck list)")
    s.add_argument("--no-prove", action="store_true", help="list the symbolic claims without proving them (SymPy)")
    s.set_defaults(func=cmd_show)

    a = sub.add_parser("audit", help="audit one callable against a quantity's spec")
    a.add_argument("target", help="package.module:callable, path/to/file.py:callable, or an adapter's name "
                   "(e.g. seed001.dice_loss, audited with its declared conventions)")
    a.add_argument("--quantity", help="catalogue name, e.g. logsumexp (see `losscheck list`); implied for an adapter")
    a.add_argument("--framework", choices=("torch", "jax"), help="inferred from the target when omitted")
    a.add_argument("--device", default="cpu", help="cpu (default), cuda (torch) or gpu (jax)")
    a.add_argument("--max-examples", type=_positive_int, default=50, help="Hypothesis examples per property (default 50)")
    a.add_argument("--seed", type=int, help="random seed (default: derandomised, reproducible)")
    a.add_argument("--report", metavar="DIR", help="also write index.md, index.html and results.json to DIR")
    a.add_argument("--strict", action="store_true", help="contract checks (ValueError on bad input) also decide the exit status")
    a.add_argument("--gate", choices=("bug", "accuracy", "range"), default="bug",
                   help="the severity that fails the audit (default bug: a wrong value or gradient, NaN, a crash, "
                        "on the typical domain); accuracy also counts digits lost beyond rounding, range also "
                        "failures outside the typical domain. Every finding is reported at any gate")
    a.add_argument("--only", metavar="TEXT", help="run only properties whose name contains TEXT")
    a.add_argument("--json", metavar="FILE", help="write the results to FILE (rewritten after every property)")
    a.add_argument("--fail-fast", action="store_true", help="stop at the first property that does not hold")
    a.add_argument("--no-shrink", action="store_true", help="report each failing example as found, without shrinking it")
    a.add_argument("--shrink-time", type=_positive_float, default=20.0, metavar="SECONDS",
                   help="seconds a failing property may spend shrinking its counterexample (default 20); after "
                        "that the smallest found so far is reported, marked as not fully shrunk")
    a.add_argument("--half", choices=("native", "float32"), default="native",
                   help="bound for float16/bfloat16: computed natively (default; the catalogue allows it) or in "
                        "float32 (the tighter bound, which losscheck's own implementations meet)")
    a.add_argument("--loss", action="store_true",
                   help="the callable returns the loss 1 − q rather than the score q (e.g. a dice_loss audited as dice)")
    a.add_argument("--fix", action="append", metavar="NAME=VALUE",
                   help="a scalar argument the callable pins or hard-codes (e.g. --fix smooth=1, --fix k=1): every "
                        "draw uses VALUE, and the callable is called without NAME if it has no such parameter; repeatable")
    a.add_argument("--no-grad", action="store_true", help="the callable has no gradients (NumPy code): gradient checks are skipped")
    a.add_argument("--convention", action="append", metavar="NAME",
                   help="a named convention the callable follows on purpose (repeatable): pixel+1 (pixel-index boxes, "
                        "width x2 - x1 + 1); a property it explains deviates instead of failing")
    a.add_argument("--timeout", type=_positive_float, default=600.0, metavar="SECONDS",
                   help="seconds one property may run before the target is stopped and the property is an error "
                        "(default 600); the audit runs in a child process, so a crash or an exit is a verdict too")
    a.add_argument("--total-timeout", type=_positive_float, metavar="SECONDS", help="seconds for the whole audit")
    a.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)  # the child (or the test suite)
    a.add_argument("--record", help=argparse.SUPPRESS)  # the child's record for its parent (reports/isolation.py)
    a.add_argument("--profile", default="ci", help=argparse.SUPPRESS)
    a.set_defaults(func=cmd_audit)

    t = sub.add_parser("audit-all", help="audit every adapter whose library is installed, one process each")
    t.add_argument("--out", default="reports/out", help="output folder for thirdparty.{md,html,json} (default reports/out)")
    t.add_argument("--max-examples", type=_positive_int, default=15, help="Hypothesis examples per property (default 15)")
    t.add_argument("--seed", type=int, help="random seed (default: derandomised)")
    t.add_argument("--timeout", type=_positive_int, default=900, help="seconds per adapter before it is stopped (default 900)")
    t.add_argument("--only", metavar="TEXT", help="only adapters whose name contains TEXT")
    t.add_argument("--jobs", type=_positive_int, default=1, help="adapters audited at once (default 1)")
    t.add_argument("--update", action="store_true",
                   help="keep the other adapters' results in OUT/thirdparty.json and replace those audited now "
                        "(with --only: audit one library again)")
    t.add_argument("--rewrite", action="store_true",
                   help="audit nothing: annotate OUT/thirdparty.json again with the known-deviations table, replay "
                        "its snippets and rewrite thirdparty.{md,html,json}")
    t.add_argument("--profile", default="ci", help=argparse.SUPPRESS)
    t.set_defaults(func=cmd_audit_all)

    r = sub.add_parser("report", help="audit every registered implementation and write the report")
    r.add_argument("--out", default="reports/out", help="output folder (default reports/out)")
    r.add_argument("--max-examples", type=_positive_int, default=15,
                   help="Hypothesis examples per property (default 15, the CI budget)")
    r.add_argument("--seed", type=int, help="random seed (default: derandomised)")
    r.add_argument("--jobs", type=_positive_int, default=1,
                   help="our implementations audited at once, one process each (default 1; nox -s report uses every core)")
    r.add_argument("--strict", action="store_true",
                   help="exit 1 if any conformance property fails on our implementations (default: 0 once written)")
    r.add_argument("--third-party", choices=("seeds", "all", "none"), default="seeds",
                   help="adapters to audit beside our implementations: the seed texts' snippets (default), every "
                        "adapter whose library is installed (as audit-all), or none")
    r.add_argument("--profile", default="ci", help=argparse.SUPPRESS)
    r.set_defaults(func=cmd_report)
    return p


def _positive_int(v):
    try:
        i = int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {v!r}") from None
    if i < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {v!r}")
    return i


def _positive_float(v):
    try:
        f = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {v!r}") from None
    if not f > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {v!r}")
    return f


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    args.argv = argv
    try:
        return args.func(args)
    except UsageError as e:
        print(f"losscheck: error: {e}", file=sys.stderr)
        if getattr(args, "record", None):  # the parent reads it: a usage error, not a crash of the target
            _write_json(args.record, {"usage_error": str(e)})
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
