"""The audit engine: one function, :func:`audit`, that runs every applicable
property on a callable and returns structured results.  The CLI, the pytest
entry points and the report all call it.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import replace

from hypothesis import HealthCheck, Phase, given
from hypothesis import seed as hseed
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.errors import FailedHealthCheck, HypothesisDeprecationWarning, Unsatisfiable, UnsatisfiedAssumption

import spec

from . import frameworks
from .checks import Outcome, Property, Target, describe_exception, properties_for
from .regressions import cases as regression_cases

#: health checks that only say the reference is slow or the arrays are big
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.differing_executors]


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


class _Skipped(_Failed):
    """The property does not apply to this target (see Outcome.skipped)."""


def run_property(prop: Property, target: Target, settings=None, seed=None) -> dict:
    """Run one property; return its result record (see reports.render for the schema)."""
    settings = settings or make_settings()[0]
    t0 = time.perf_counter()
    if prop.draw is None:
        try:
            out = prop.check(target, None)
        except Exception as e:
            out = Outcome(False, math.inf, message=f"raised {describe_exception(e)}")
        return _record(prop, "skipped" if out.skipped else "holds" if out.ok else "fails", out, 1, t0)

    state = {"examples": 0, "max_ulps": 0.0, "allowed": 0.0, "last": None, "undetermined": 0}
    if target.quantity.budget != 1.0 and prop.uses_reference:
        settings = hsettings(settings, max_examples=max(3, round(settings.max_examples * target.quantity.budget)))

    def one(case):
        if target.fixed:  # arguments the target has no parameter for: pinned in every case, drawn or known
            case = {**case, "args": {**case["args"], **target.fixed}}
        out = prop.check(target, case)
        if out.skipped:
            raise _Skipped(out)
        state["examples"] += 1
        state["undetermined"] += out.undetermined
        if out.max_ulps >= state["max_ulps"]:
            state["max_ulps"], state["allowed"] = out.max_ulps, out.allowed_ulps
        if not out.ok:
            state["last"] = out
            raise _Failed(out)

    @settings
    @given(st.data())
    def test(data):
        one(prop.draw(data, target))

    if seed is not None:
        test = hseed(seed)(test)
    try:
        for case in regression_cases(target.quantity.name, prop.name):  # known hard inputs first
            with warnings.catch_warnings():  # a check's assume() outside @given: skip the case if unmet
                warnings.simplefilter("ignore", HypothesisDeprecationWarning)
                try:
                    one(case)
                except UnsatisfiedAssumption:
                    pass
        test()
    except _Skipped as e:
        return _record(prop, "skipped", e.outcome, 0, t0)
    except _Failed as e:  # Hypothesis re-raises the shrunk example last
        return _record(prop, "fails", state["last"] or e.outcome, state["examples"], t0, state)
    except (Unsatisfiable, FailedHealthCheck) as e:
        return _record(prop, "error", Outcome(False, message=f"could not draw valid inputs: {e}"), state["examples"], t0)
    except Exception as e:
        return _record(prop, "error", Outcome(False, message=f"property raised {describe_exception(e)}"), state["examples"], t0)
    note = "" if not state["undetermined"] else (
        f"{state['undetermined']} of {state['examples']} examples undetermined: the dtype does not determine the "
        "result there (the exact and the rounded-steps results disagree beyond the tolerance); accepted between "
        "them, never NaN, and left out of the ULPs")
    rec = _record(prop, "holds", Outcome(True, state["max_ulps"], state["allowed"], note), state["examples"], t0)
    if state["undetermined"]:
        rec["undetermined"] = state["undetermined"]
    return rec


def _finite(v):
    return v if (v is None or math.isfinite(v)) else ("inf" if v > 0 else "-inf")


def _record(prop, verdict, out, examples, t0, state=None):
    rec = {
        "property": prop.name, "kind": prop.kind, "verdict": verdict, "examples": examples,
        "max_ulps": _finite(out.max_ulps if verdict != "holds" or state is None else out.max_ulps),
        "allowed_ulps": _finite(out.allowed_ulps), "message": out.message, "doc": prop.doc,
        "seconds": round(time.perf_counter() - t0, 3), "counterexample": None,
    }
    if verdict == "fails" and (out.snippet or out.inputs):
        rec["counterexample"] = {"snippet": out.snippet, "inputs": out.inputs, "expected": out.expected, "got": out.got}
        if out.printed is not None:  # a claim: what its snippet's calls print, for the replay
            rec["counterexample"]["printed"] = out.printed
    return rec


def audit(fn, quantity: str, framework: str | None = None, device: str = "cpu", *, label: str = "",
          target_spec: str = "", max_examples=None, seed=None, only=None, progress=None,
          shrink=True, stop_at_failure=False, conventions=(), complement=False, differentiable=True,
          native_half=True, fixed=None) -> dict:
    """Run every applicable property of ``quantity`` on ``fn``.

    Returns {"label", "target", "framework", "device", "quantity", "results": [...]}.
    ``only`` filters properties by a substring of their name; ``progress`` is
    called with each result as it completes (the CLI prints one line each).
    ``shrink=False`` keeps failing examples as found; ``stop_at_failure``
    ends the audit at the first property that does not hold.

    Adapters (``impls.adapters``) pass what they declare: ``conventions``
    (objects with ``name``, ``text`` and ``args``, a map from canonical
    arguments to those at which the spec gives what the library computes),
    ``complement`` (the callable returns 1 − q) and ``differentiable``.  A
    conformance property that fails is run again with the conventions
    applied to the reference: if it holds then, the verdict is
    ``deviates`` (the deviation's counterexample is kept); if not, it is
    ``fails`` with the counterexample the conventions do not explain.

    ``fixed``: canonical arguments pinned for every draw (an adapter's
    arguments the library has no parameter for).

    ``native_half``: float16/bfloat16 are judged with their own epsilon, as
    computed natively (the catalogue allows that, and float32); False holds
    the target to float32 compute, the tighter bound our implementations meet.
    """
    q = spec.get(quantity)
    framework = framework or frameworks.infer(fn)
    fw = frameworks.get(framework)
    if not fw.available():
        raise ValueError(f"framework {framework!r} is not installed")
    if device not in fw.devices():
        raise ValueError(f"device {device!r} is not available for {framework} (available: {fw.devices()})")
    target = Target(fn, q, framework, device, label or target_spec or getattr(fn, "__qualname__", "target"), target_spec,
                    complement=complement, differentiable=differentiable, native_half=native_half,
                    fixed=dict(fixed or {}))
    settings, seed = make_settings(max_examples, seed, shrink=shrink)
    results = []
    for prop in properties_for(q, framework):
        if only and only not in prop.name:
            continue
        rec = run_property(prop, target, settings, seed)  # the checks skip gradients of a non-differentiable target
        if rec["verdict"] == "fails" and conventions and prop.kind == "conformance":
            rec = _under_conventions(prop, target, settings, seed, conventions, rec)
        results.append(rec)
        if progress:
            progress(rec)
        if stop_at_failure and rec["verdict"] != "holds":
            break
    return {"label": target.label, "target": target_spec, "framework": framework, "device": device,
            "quantity": quantity, "half": "native" if native_half else "float32", "results": results}


def _under_conventions(prop, target, settings, seed, conventions, failed):
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


#: verdicts that pass an audit: a deviation by a declared convention is not a failure
PASSING = ("holds", "deviates", "skipped")


def conformance_ok(audit_result: dict, strict: bool = False) -> bool:
    kinds = ("conformance", "contract") if strict else ("conformance",)
    return all(r["verdict"] in PASSING for r in audit_result["results"] if r["kind"] in kinds)


def progress_printer(stream=None):
    stream = stream or sys.stdout

    def show(rec):
        mark = {"holds": "PASS", "fails": "FAIL", "error": "ERROR", "skipped": "SKIP", "deviates": "CONV"}[rec["verdict"]]
        ulps = rec.get("max_ulps")
        extra = f"  max {ulps:.3g} ulp" if isinstance(ulps, (int, float)) and ulps else ""
        kind = "" if rec["kind"] == "conformance" else f"  ({rec['kind']})"
        undetermined = f"  ({rec['undetermined']} undetermined)" if rec.get("undetermined") else ""
        print(f"  {mark:5} {rec['property']:<24} {rec['examples']:>4} ex{extra}{undetermined}{kind}", file=stream, flush=True)
        if rec["verdict"] != "holds" and rec["message"]:
            print(f"        {rec['message']}", file=stream, flush=True)
    return show
