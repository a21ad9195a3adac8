"""The audit engine: one function, :func:`audit`, that runs every applicable
property on a callable and returns structured results.  The CLI, the pytest
entry points and the report all call it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import pickle
import time
import unittest
import warnings
from dataclasses import dataclass, field, replace
from unittest import mock

from hypothesis import HealthCheck, Phase, given
from hypothesis import seed as hseed
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.errors import FailedHealthCheck, FlakyFailure, HypothesisDeprecationWarning, Unsatisfiable, UnsatisfiedAssumption
from hypothesis.reporting import with_reporter

from losscheck import spec
from losscheck.spec.quantity import ARRAY_KINDS

from . import frameworks
from .checks import Outcome, Property, Target, describe_exception, properties_for
from .regressions import cases as regression_cases
from .results import PropertyResult
from .severity import DEFAULT_GATE, at_gate, rank

#: health checks that only say the reference is slow or the arrays are big
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.differing_executors]


#: seconds a failing property may spend shrinking its counterexample (``audit --shrink-time``); after
#: that the smallest failing example found so far is reported, marked as not fully shrunk
SHRINK_SECONDS = 20.0
#: calls to the target a failing property may spend shrinking, per example of its budget: with
#: ``--max-examples 5`` a shrink makes at most 50 calls (Hypothesis alone made 104–493)
SHRINK_CALLS_PER_EXAMPLE = 10
#: the share of both budgets left to a failure whose root cause an earlier property of the audit
#: has shrunk already (see :func:`run_property`)
REPEAT_SHARE = 0.1


def make_settings(max_examples=None, seed=None, derandomize=None, shrink=True):
    """Settings derived from the active profile (see properties.profiles).
    ``shrink=False`` reports the first failing example as found (the
    meta-tests only ask whether a property catches a broken implementation)."""
    base = hsettings.default
    kw = dict(parent=base, deadline=None, database=None, suppress_health_check=_SUPPRESS, print_blob=False,
              report_multiple_bugs=False)  # one shrunk counterexample per property
    if not shrink:
        kw["phases"] = (Phase.explicit, Phase.reuse, Phase.generate)
    if max_examples is not None:
        kw["max_examples"] = int(max_examples)
    if seed is not None:
        kw["derandomize"] = False
    elif derandomize is not None:
        kw["derandomize"] = derandomize
    return hsettings(**kw), seed


class _Failed(Exception):
    def __init__(self, outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


class _Skipped(unittest.SkipTest):
    """The property does not apply to this target (see Outcome.skipped).  A SkipTest, so that
    Hypothesis re-raises it at once (hypothesis.core.skip_exceptions_to_reraise) instead of
    shrinking it as a failure: a skip is the target's declaration, not a function of the case."""

    def __init__(self, outcome):
        super().__init__(outcome.message)
        self.outcome = outcome


@dataclass
class _Run:
    """What one property's run has done so far: the examples checked, the calls made to the
    target, and — once a case fails — the shrink's budget.  When the budget is spent the run
    *freezes*: a case seen failing fails again from its stored outcome (Hypothesis replays the
    smallest one last), any other case passes without calling the target, so Hypothesis's
    shrinker ends at once on the smallest failure found so far."""

    shrink_seconds: float
    shrink_calls: int
    examples: int = 0
    calls: int = 0
    undetermined: int = 0
    max_ulps: float = 0.0
    allowed: float = 0.0
    last: Outcome | None = None
    failed_at: float | None = None  # perf_counter of the first failure
    calls_at_failure: int = 0
    frozen: str = ""  # why shrinking stopped early: "" (it did not), "time" or "calls"
    repeat_of: str = ""  # the property that shrank this failure's root cause first (its budget is cut)
    failures: dict = field(default_factory=dict)  # case key -> its failing Outcome
    #: findings below the search's floor (severity -> the first Outcome of it): kept, not raised, so the
    #: search goes on for a more severe one and the shrinker never leaves the floor's class
    below: dict = field(default_factory=dict)
    notes: set = field(default_factory=set)  # passing outcomes' remarks

    def budget_spent(self) -> str:
        if self.failed_at is None or self.frozen:
            return self.frozen
        if time.perf_counter() - self.failed_at > self.shrink_seconds:
            self.frozen = "time"
        elif self.calls - self.calls_at_failure >= self.shrink_calls:
            self.frozen = "calls"
        return self.frozen


def _case_key(case) -> bytes:
    return pickle.dumps(case, protocol=4)


def run_property(prop: Property, target: Target, settings=None, seed=None, *, observer=None,
                 shrink_seconds: float = SHRINK_SECONDS, shrink_calls: int | None = None,
                 gate: str = DEFAULT_GATE, shrunk_causes: dict | None = None, announce: bool = True) -> dict:
    """Run one property; return its result record (the schema: properties.results.PropertyResult).

    The search raises (stops and shrinks) only for a **bug** (properties.severity): accuracy and
    range findings are kept as found and the search goes on, so a bug is not hidden behind a
    rounding finding, and the shrinker, which sees a lower-severity case as passing, never moves
    a counterexample out of its class.  Without a bug the record reports the most severe finding
    kept; at a stricter ``gate`` ("accuracy", "range") the search is run once more raising at the
    gate, so that finding is shrunk too.  The record's ``severity`` is its finding's; ``others``
    lists the lower-severity findings seen beside it.

    A failing property shrinks its counterexample for at most ``shrink_seconds`` and
    ``shrink_calls`` calls of the target (default ``SHRINK_CALLS_PER_EXAMPLE`` × the example
    budget); the record's ``calls`` counts every call made, ``shrunk`` says whether the
    counterexample is fully shrunk ("full"), cut by a budget ("time", "calls") or not shrunk
    ("off").  ``observer`` (see :class:`Observer`) is told of every example checked, and (unless
    ``announce`` is False: a run whose failure is not yet a finding) of the first failure found,
    before it is shrunk.

    ``shrunk_causes`` ({root cause: property}, :func:`audit` keeps it): a failure whose root cause
    (:attr:`properties.results.PropertyResult.cause`) an earlier property of the audit has already
    shrunk is shrunk for ``REPEAT_SHARE`` of the time only (the record's ``repeat_of`` names that
    property): the report shows one finding per root cause, so the shrinking time goes to the
    causes not yet seen (a soft_topk without its min-shift fails eight properties for two causes)."""
    at_gate("bug", gate)  # a ValueError naming the gate where it is unknown
    causes = {} if shrunk_causes is None else shrunk_causes
    rec = _run_property(prop, target, settings, seed, observer, shrink_seconds, shrink_calls, "bug", causes, announce)
    if (gate != "bug" and rec["verdict"] == "fails" and rec.get("shrunk") == "off" and rec.get("severity") != "bug"
            and at_gate(rec.get("severity", ""), gate) and Phase.shrink in (settings or make_settings()[0]).phases):
        again = _run_property(prop, target, settings, seed, Observer(), shrink_seconds, shrink_calls, gate, causes)
        if again["verdict"] == "fails":
            again["calls"] += rec["calls"]
            rec = again
    return rec


def _run_property(prop, target, settings, seed, observer, shrink_seconds, shrink_calls, floor, causes,
                  announce=True) -> dict:
    """One search of :func:`run_property`, raising at severity ``floor`` and above."""
    settings = settings or make_settings()[0]
    observer = observer or Observer()
    t0 = time.perf_counter()
    if prop.draw is None:
        observer.property_started(prop.name, 1)
        try:
            out = prop.check(target, None)
        except Exception as e:
            out = Outcome(False, math.inf, message=f"raised {describe_exception(e)}")
        rec = _record(prop, "skipped" if out.skipped else "holds" if out.ok else "fails", out, 1, t0)
        rec["calls"] = 1
        return rec

    settings = _property_settings(prop, target, settings)
    shrinking = Phase.shrink in settings.phases
    run = _Run(shrink_seconds, shrink_calls if shrink_calls is not None else SHRINK_CALLS_PER_EXAMPLE * settings.max_examples)
    regressions = list(regression_cases(target.quantity.name, prop.name))
    observer.property_started(prop.name, planned(prop, target, settings))

    def one(case):
        if target.fixed:  # arguments the target has no parameter for: pinned in every case, drawn or known
            case = {**case, "args": {**case["args"], **target.fixed}}
        key = _case_key(case) if shrinking else None
        if run.budget_spent():
            out = run.failures.get(key)
            if out is None:
                return  # the shrink's budget is spent: no further call
        else:
            run.calls += 1
            try:
                out = prop.check(target, case)
            except SystemExit as e:  # the target ended the interpreter: a finding, never the audit's exit status
                out = Outcome(False, math.inf, message=f"the target called sys.exit({e.code!r})", severity="bug")
            if out.skipped:
                raise _Skipped(out)
            run.examples += 1
            run.undetermined += out.undetermined
            if out.note:
                run.notes.add(out.note)
            if out.ok and out.max_ulps >= run.max_ulps:
                run.max_ulps, run.allowed = out.max_ulps, out.allowed_ulps
            observer.example_done(prop.name, run.examples, failing=run.last is not None or not out.ok)
            if not out.ok and out.severity and not at_gate(out.severity, floor):
                run.below.setdefault(out.severity, out)  # kept; the search goes on
                return
        if not out.ok:
            run.last = out
            if run.failed_at is None:
                run.failed_at, run.calls_at_failure = time.perf_counter(), run.calls
                cause = _cause(prop, out)
                if shrinking and cause in causes:
                    run.repeat_of = causes[cause]
                    run.shrink_seconds, run.shrink_calls = run.shrink_seconds * REPEAT_SHARE, max(1, int(run.shrink_calls * REPEAT_SHARE))
                elif shrinking:
                    causes[cause] = prop.name
                if announce:
                    observer.failure_found(prop.name, out, run.shrink_seconds if shrinking else 0.0)
            if key is not None:
                run.failures[key] = out
            raise _Failed(out)  # one raise site: Hypothesis tells failures apart by where they are raised

    @settings
    @given(st.data())
    def test(data):
        one(prop.draw(data, target))

    if seed is not None:
        test = hseed(seed)(test)

    def finish(rec, as_found=False):
        rec["calls"] = run.calls
        if rec["verdict"] == "fails":
            run.budget_spent()  # Hypothesis's deadline (_shrink_deadline) may have ended the shrink first
            rec["shrunk"] = "off" if (as_found or not shrinking) else (run.frozen or "full")
            if run.repeat_of and rec["shrunk"] != "off":
                rec["repeat_of"] = run.repeat_of
        others = [o for sev, o in sorted(run.below.items(), key=lambda kv: -rank(kv[0]))
                  if o is not (run.last if not as_found else _worst_below(run))]
        if others:
            rec["others"] = [_finding(o) for o in others]
        if run.notes:
            rec["notes"] = sorted(run.notes)
        return rec
    try:
        for case in regressions:  # known hard inputs first
            with warnings.catch_warnings():  # a check's assume() outside @given: skip the case if unmet
                warnings.simplefilter("ignore", HypothesisDeprecationWarning)
                try:
                    one(case)
                except UnsatisfiedAssumption:
                    pass
        with _shrink_deadline(shrink_seconds), _constants_of(target.fn):
            test()
    except _Skipped as e:
        return finish(_record(prop, "skipped", e.outcome, 0, t0))
    except _Failed as e:  # Hypothesis re-raises the shrunk example last
        return finish(_record(prop, "fails", run.last or e.outcome, run.examples, t0))
    except FlakyFailure as e:  # a failure that did not fail again when replayed: the target is not a function of its input
        if run.last is None:
            return finish(_record(prop, "error", Outcome(False, message=f"property raised {describe_exception(e)}"),
                                  run.examples, t0))
        out = replace(run.last, message=run.last.message + " (it did not fail again when the same input was replayed: "
                      "the target's output is not a function of its input)")
        return finish(_record(prop, "fails", out, run.examples, t0), as_found=True)
    except (Unsatisfiable, FailedHealthCheck) as e:
        return finish(_record(prop, "error", Outcome(False, message=f"could not draw valid inputs: {e}"), run.examples, t0))
    except Exception as e:
        return finish(_record(prop, "error", Outcome(False, message=f"property raised {describe_exception(e)}"), run.examples, t0))
    if run.below:  # no finding at the floor: the most severe one kept, as found
        return finish(_record(prop, "fails", _worst_below(run), run.examples, t0), as_found=True)
    note = "" if not run.undetermined else (
        f"{run.undetermined} of {run.examples} examples undetermined: the dtype does not determine the "
        "result there (the exact and the rounded-steps results disagree beyond the tolerance); accepted between "
        "them, never NaN, and left out of the ULPs")
    rec = _record(prop, "holds", Outcome(True, run.max_ulps, run.allowed, note), run.examples, t0)
    if run.undetermined:
        rec["undetermined"] = run.undetermined
    return finish(rec)


def _cause(prop, out: Outcome) -> tuple[str, str]:
    """(severity, root cause) of a failing outcome, as :class:`properties.results.PropertyResult`
    states it for the finished record."""
    rec = {"property": prop.name, "kind": prop.kind, "verdict": "fails", "message": out.message,
           "severity": out.severity or "bug", "counterexample": _counterexample(out)}
    r = PropertyResult.from_record(rec)
    return r.tier, r.cause


def _worst_below(run) -> Outcome:
    return max(run.below.values(), key=lambda o: rank(o.severity))


def _finding(out: Outcome) -> dict:
    """A lower-severity finding seen beside a property's reported one (the record's ``others``)."""
    return {"severity": out.severity, "off_domain": out.off_domain, "message": out.message,
            "counterexample": _counterexample(out)}


@contextlib.contextmanager
def _shrink_deadline(seconds: float):
    """Hypothesis's own limit on shrinking (``MAX_SHRINKING_SECONDS``, 300 s, private: checked
    after every call, so the shrinker stops at once) set to ``seconds``, its warning about five
    minutes silenced.  Where a Hypothesis release lacks it, :class:`_Run` still stops calling the
    target after ``seconds`` (the shrinker then spends its remaining passes on cases it skips)."""
    from hypothesis.internal.conjecture import engine as conjecture
    if not hasattr(conjecture, "MAX_SHRINKING_SECONDS"):
        yield
        return
    with mock.patch.object(conjecture, "MAX_SHRINKING_SECONDS", seconds), with_reporter(lambda *a, **k: None):
        yield


@contextlib.contextmanager
def _constants_of(fn):
    """Hypothesis draws, now and then, constants found in the source of the *local* modules loaded at
    the time (``hypothesis.internal.conjecture.providers``): which modules those are depends on how
    losscheck is installed (an editable checkout is local, site-packages is not) and on what was
    imported before, so derandomised draws differed between the two and with the order of a test
    run.  For each property the pool is pinned to the constants of the audited callable's own module
    (its thresholds, such as softplus's 20, are worth drawing), the same whatever else is loaded.
    Where a Hypothesis release lacks that machinery (private), its own pool stays."""
    import inspect as _inspect

    from hypothesis.internal.conjecture import providers
    try:
        from hypothesis.internal.constants_ast import Constants, constants_from_module
    except ImportError:
        yield
        return
    if not hasattr(providers, "_get_local_constants") or not hasattr(providers, "CONSTANTS_CACHE"):
        yield
        return
    module = _inspect.getmodule(fn)
    try:
        pool = constants_from_module(module) if module is not None else Constants()
    except Exception:  # no source (a builtin, a C extension): no constants
        pool = Constants()
    providers.CONSTANTS_CACHE.cache.clear()  # it holds the permitted constants of the previous pool
    try:
        with mock.patch.object(providers, "_get_local_constants", lambda: pool):
            yield
    finally:
        providers.CONSTANTS_CACHE.cache.clear()


def _property_settings(prop, target, settings):
    if target.quantity.budget != 1.0 and prop.uses_reference:  # Quantity.budget scales the examples of costly references
        return hsettings(settings, max_examples=max(3, round(settings.max_examples * target.quantity.budget)))
    return settings


def planned(prop: Property, target: Target, settings) -> int:
    """The examples ``prop`` is planned to check on ``target``: its regression rows and its
    example budget (1 for a deterministic check); shrinking a failure adds calls beyond it."""
    if prop.draw is None:
        return 1
    return _property_settings(prop, target, settings).max_examples + len(list(regression_cases(target.quantity.name, prop.name)))


class Observer:
    """Told of an audit's progress (the CLI's progress bar; the default does nothing).
    ``property_started(name, budget)``: a property begins, ``budget`` examples planned
    (its regression rows and the example budget; shrinking adds calls beyond it);
    ``example_done(name, examples, failing)``: one more example checked, ``failing``
    once the property has a counterexample; ``failure_found(name, outcome, seconds)``: its
    first counterexample, before shrinking; ``property_done(record)``: its result."""

    def audit_started(self, properties: dict[str, int]) -> None:  # name -> planned examples (:func:`planned`)
        pass

    def property_started(self, name: str, budget: int) -> None:
        pass

    def example_done(self, name: str, examples: int, failing: bool) -> None:
        pass

    def failure_found(self, name: str, outcome, shrink_seconds: float) -> None:
        """The first failing example of property ``name`` (an :class:`properties.checks.Outcome`: its
        ``severity`` and ``message``), as found; it is shrunk next for at most ``shrink_seconds``
        (0: not shrunk)."""

    def property_done(self, record: dict) -> None:
        pass


def _finite(v):
    return v if (v is None or math.isfinite(v)) else ("inf" if v > 0 else "-inf")


def _record(prop, verdict, out, examples, t0):
    rec = {
        "property": prop.name, "kind": prop.kind, "verdict": verdict, "examples": examples,
        "max_ulps": _finite(out.max_ulps),
        "allowed_ulps": _finite(out.allowed_ulps), "message": out.message, "doc": prop.doc,
        "seconds": round(time.perf_counter() - t0, 3), "counterexample": None,
    }
    if verdict == "fails":
        rec["counterexample"] = _counterexample(out)
        if prop.kind == "conformance":  # contract checks count with --strict, outside the severities
            rec["severity"] = out.severity or "bug"
            rec["off_domain"] = out.off_domain
    return rec


def _counterexample(out: Outcome) -> dict | None:
    if not (out.snippet or out.inputs):
        return None
    c = {"snippet": out.snippet, "inputs": out.inputs, "expected": out.expected, "got": out.got, **out.facts}
    if out.printed is not None:  # a claim: what its snippet's calls print, for the replay
        c["printed"] = out.printed
    return c


def audit(fn, quantity: str, framework: str | None = None, device: str = "cpu", *, label: str = "",
          target_spec: str = "", max_examples=None, seed=None, only=None, progress=None,
          shrink=True, stop_at_failure=False, conventions=(), complement=False, differentiable=True,
          native_half=True, fixed=None, observer=None, shrink_seconds=SHRINK_SECONDS,
          gate: str = DEFAULT_GATE, names=None, derandomize=None) -> dict:
    """Run every applicable property of ``quantity`` on ``fn``.

    Returns {"label", "target", "framework", "device", "quantity", "results": [...]}.
    ``only`` filters properties by a substring of their name, ``names`` by exact
    names (:func:`property_names` lists them); ``progress`` is
    called with each result as it completes (the CLI prints one line each).
    ``shrink=False`` keeps failing examples as found; ``shrink_seconds`` bounds
    the time a failing property spends shrinking (see :func:`run_property`);
    ``stop_at_failure`` ends the audit at the first property that does not
    hold.  ``observer`` (an :class:`Observer`) is told of every example, for a
    progress bar.

    Adapters (``impls.adapters``) pass what they declare: ``conventions``
    (objects with ``name``, ``text`` and ``args``, a map from canonical
    arguments to those at which the spec gives what the library computes),
    ``complement`` (the callable returns 1 − q) and ``differentiable``.  A
    conformance property that fails is run again with the conventions
    applied to the reference: if it holds then, the verdict is
    ``deviates`` (the deviation's counterexample is kept); if not, it is
    ``fails`` with the counterexample the conventions do not explain.

    ``fixed``: canonical scalar arguments pinned for every draw (an adapter's
    arguments the library has no parameter for; a user's ``--fix smooth=1``):
    the reference is evaluated at the pinned value, claims that vary the
    argument do not apply, and where ``fn`` has no parameter of that name it
    is called without it (it hard-codes the value).

    ``native_half``: float16/bfloat16 are judged with their own epsilon, as
    computed natively (the catalogue allows that, and float32); False holds
    the target to float32 compute, the tighter bound our implementations meet.

    ``derandomize``: overrides the active Hypothesis profile's (the API and the pytest plugin
    pass True: the same examples on every run, unless a ``seed`` is given).

    ``gate`` ("bug", "accuracy" or "range"; see properties.severity): the severity at which
    :func:`conformance_ok` fails the result.  Every finding is reported at any gate; a stricter
    one also shrinks the findings it counts (see :func:`run_property`).
    """
    at_gate("bug", gate)
    q = spec.get(quantity)
    framework = framework or frameworks.infer(fn)
    fw = frameworks.get(framework)
    if not fw.available():
        raise ValueError(f"framework {framework!r} is not installed")
    if device not in fw.devices():
        raise ValueError(f"device {device!r} is not available for {framework} (available: {fw.devices()})")
    fixed = dict(fixed or {})
    target = Target(fn, q, framework, device, label or target_spec or getattr(fn, "__qualname__", "target"), target_spec,
                    complement=complement, differentiable=differentiable, native_half=native_half,
                    fixed=fixed, omit=_hard_coded(fn, q, fixed))
    settings, seed = make_settings(max_examples, seed, derandomize=derandomize, shrink=shrink)
    props = [p for p in properties_for(q, framework) if (not only or only in p.name) and (names is None or p.name in names)]
    if names is not None and (unknown := set(names) - {p.name for p in properties_for(q, framework)}):
        raise ValueError(f"names: {', '.join(sorted(unknown))} not properties of {quantity} in {framework}")
    if not props:
        raise ValueError(f"only={only!r} matches no property of {quantity} "
                         f"(its properties: {', '.join(p.name for p in properties_for(q, framework))})")
    observer = observer or Observer()
    observer.audit_started({p.name: planned(p, target, settings) for p in props})
    results, causes = [], {}  # root causes shrunk so far -> the property that shrank them
    for prop in props:
        run = functools.partial(run_property, observer=observer, shrink_seconds=shrink_seconds, gate=gate,
                                shrunk_causes=causes)
        # with declared conventions a failure is run again under them before it is a finding: only the
        # second run announces what it finds (Observer.failure_found)
        rec = run(prop, target, settings, seed, announce=not conventions)  # (gradients skipped where not differentiable)
        if rec["verdict"] == "fails" and conventions and prop.kind == "conformance":
            # shrunk afresh: the conventions may explain the cause this property registered
            rerun = functools.partial(run, announce=True, shrunk_causes={c: p for c, p in causes.items() if p != prop.name})
            rec = _under_conventions(rerun, prop, target, settings, seed, conventions, rec)
        results.append(rec)
        observer.property_done(rec)
        if progress:
            progress(rec)
        if stop_at_failure and not _passes(rec, gate, strict=False):
            break
    return {"label": target.label, "target": target_spec, "framework": framework, "device": device,
            "quantity": quantity, "half": "native" if native_half else "float32", "gate": gate, "results": results}


def property_names(quantity: str, framework: str) -> list[str]:
    """The names of the properties :func:`audit` runs for ``quantity`` in ``framework``."""
    return [p.name for p in properties_for(spec.get(quantity), framework)]


def _hard_coded(fn, q, fixed: dict) -> tuple:
    """The ``fixed`` arguments ``fn`` has no parameter for (it hard-codes them; not passed to it).
    A ValueError naming the argument where one is not a scalar argument of ``q``."""
    scalars = [a.name for a in q.args if a.kind not in ARRAY_KINDS]
    for name in fixed:
        if name not in scalars:
            raise ValueError(f"fixed: {name!r} is not a scalar argument of {q.name} "
                             f"(its scalar arguments: {', '.join(scalars) or 'none'}; signature {q.signature})")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # no signature (a builtin): pass every argument
        return ()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return ()
    return tuple(name for name in fixed if name not in params)


def _under_conventions(run_property, prop, target, settings, seed, conventions, failed):
    """Re-run a failed property with the declared conventions applied to the reference."""
    def mapped(args):
        for c in conventions:
            args = c.args(args)
        return args
    names = ", ".join(c.name for c in conventions)
    again = run_property(prop, replace(target, reference_args=mapped), settings, seed)
    again["conventions"] = names
    if again["verdict"] == "holds":
        return {**again, "verdict": "deviates", "counterexample": failed["counterexample"],
                "max_ulps": failed["max_ulps"], "allowed_ulps": failed["allowed_ulps"],
                "message": f"holds under the declared convention(s) ({names}); against the spec: {failed['message']}"}
    if again["verdict"] == "fails":
        again["message"] = f"fails even with the declared convention(s) applied ({names}): {again['message']}"
    return again


def _passes(rec: dict, gate: str, strict: bool) -> bool:
    """Whether one record passes at ``gate`` (:meth:`properties.results.PropertyResult.passes`)."""
    return PropertyResult.from_record(rec).passes(gate, strict)


def conformance_ok(audit_result: dict, strict: bool = False, gate: str | None = None) -> bool:
    """Whether an audit passes: no conformance finding at ``gate`` (default: the audit's own, else
    "bug"), no error, and with ``strict`` no failing contract check."""
    gate = gate or audit_result.get("gate") or DEFAULT_GATE
    return all(_passes(r, gate, strict) for r in audit_result["results"])
