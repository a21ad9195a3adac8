"""The generic properties: every implementation of every quantity must pass them.

A property draws a case (keyword arguments, dtype, cotangent…) with
Hypothesis and checks one target against the spec.  ``properties_for``
lists the properties that apply to a quantity and framework:

conformance (they decide an audit's exit status)
  value[dtype]      values vs the 60-digit reference, moderate inputs
  gradient[dtype]   vector-Jacobian products vs the reference
  stability[dtype]  values and gradients at extreme magnitudes and sharpness
  masked[dtype]     values and gradients with -inf entries and all-masked rows
  claim:NAME        each numerical claim of the spec (float64)
  jit[dtype]        jax only: jax.jit(target) vs the reference
  unchanged[float32]   torch only: the call and its gradients leave the inputs as they were
  repeatable[float32]  two calls on the same input agree (bitwise on the CPU)
contract (reported beside; they fail an audit only with --strict)
  contract:ARG      out-of-domain ARG raises a ValueError naming ARG
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import math
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
from hypothesis import assume

from losscheck.spec import Reference
from losscheck.spec.quantity import ARRAY_KINDS, Quantity

from . import domain, frameworks, mixed, nonfinite, purity
from .dtypes import DTYPES, as_float, between, compare, compute_bits, mantissa_bits, max_finite, rel_step, row_scale, spacing, tiny
from .severity import classify
from .strategies import EXTRA_KINDS, FEW_SHAPES, arguments, cotangents


@dataclass
class Target:
    """One callable under audit, presenting the catalogue signature."""

    fn: Callable
    quantity: Quantity
    framework: str
    device: str = "cpu"
    label: str = ""
    spec: str = ""  # "module:callable" or "path.py:callable", for snippets
    #: the callable returns 1 − q (the loss form of a score): compared with 1 − reference, whose
    #: sensitivity is the same (an adapter's output form, not a deviation)
    complement: bool = False
    #: False for a metric without gradients (NumPy code): gradient checks are skipped, not failed
    differentiable: bool = True
    #: canonical arguments -> the arguments at which the spec gives what the callable computes; set
    #: by the engine when it re-runs a property under an adapter's declared conventions (a smoothing
    #: constant, the +1 pixel box).  Only substitutions and shifts: the Jacobian on differentiated
    #: arguments stays the identity, so the reference gradient at the mapped arguments is the gradient.
    reference_args: Callable | None = None
    #: float16/bfloat16 may be computed natively (the catalogue allows it, as it allows float32):
    #: the bound then uses the half dtype's own epsilon.  False holds the target to float32 compute
    #: (our implementations, which do); third-party targets are audited with True by default.
    native_half: bool = False
    #: canonical arguments pinned for every draw (an adapter's ``fixed``: the library has no such parameter)
    fixed: dict = field(default_factory=dict)
    #: pinned arguments the callable has no parameter for (it hard-codes them): not passed to it
    omit: tuple = ()


class NotApplicable(Exception):
    """Raised by a claim's ``impl`` or ``impl.grad`` where the claim does not apply to the target (the
    message says why): it needs gradients of a target declared not differentiable, or it varies an
    argument the target has pinned (``Target.fixed``)."""


@dataclass
class Outcome:
    ok: bool
    max_ulps: float = 0.0
    allowed_ulps: float = 0.0
    message: str = ""
    expected: Any = None
    got: Any = None
    snippet: str = ""
    inputs: str = ""
    skipped: bool = False  # the check does not apply to this target (a gradient of a NumPy metric)
    printed: str | None = None  # a claim's snippet: what its calls print, every digit (for the replay)
    #: accepted between the exact and the rounded-steps results, which disagree: the dtype does not
    #: determine the result here (see _outcome_from_compare); counted in the property's record
    undetermined: bool = False
    #: of a failing outcome: "bug", "accuracy" or "range" (see properties.severity)
    severity: str = ""
    #: why the counterexample lies outside the typical domain ("" where it lies inside)
    off_domain: str = ""
    #: a passing outcome's remark (a half-precision input answered in float32)
    note: str = ""
    #: a failing outcome's typed fields (:func:`facts`), copied into the counterexample record
    facts: dict = field(default_factory=dict)


@dataclass
class Property:
    name: str
    kind: str  # "conformance" | "contract"
    draw: Callable | None  # (data, target) -> case; None for deterministic checks
    check: Callable  # (target, case) -> Outcome
    doc: str = ""
    #: checked against the mpmath reference (Quantity.budget scales its examples); claims are not
    uses_reference: bool = True
    #: the dtype the property draws in ("" for claims and contract checks, which fix their own)
    dtype: str = ""


# -- helpers ---------------------------------------------------------------------
def _native_args(target, args, dtype):
    """The drawn NumPy arguments as the target framework's arrays: floating
    kinds in ``dtype``, integer ones (labels, binary) as int64, scalars as given."""
    fw = frameworks.get(target.framework)
    out = {}
    for a in target.quantity.args:
        v = args[a.name]
        if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.integer):
            out[a.name] = fw.int_array(v, target.device)
        elif a.kind in ARRAY_KINDS:
            out[a.name] = fw.array(v, dtype, target.device)
        else:
            out[a.name] = v
    return out


def _call_kwargs(target, args):
    """Positional for required args, keyword for the rest — the catalogue signature, less the
    arguments the callable hard-codes (``Target.omit``)."""
    q = target.quantity
    pos = [args[a.name] for a in q.args if a.required and a.name not in target.omit]
    kw = {a.name: args[a.name] for a in q.args if not a.required and a.name not in target.omit}
    return pos, kw


def call(target, native, fn=None):
    """``fn`` (default the target's callable) on the native arguments, as the catalogue signature calls it."""
    pos, kw = _call_kwargs(target, native)
    return (fn or target.fn)(*pos, **kw)


def _jitted(target):
    """A fresh ``jax.jit`` of the target, its static arguments as the catalogue marks them (None for torch)."""
    return frameworks.get(target.framework).jit(target.fn, [a.name for a in target.quantity.args if a.static])


#: (callable, quantity name) -> the callable under the framework's compiler, or None where there is
#: none (torch) or where it cannot be traced (a Python branch on a value): called as it is from then on
_COMPILED: dict = {}
#: (callable, quantity name, arguments) -> its jitted forward and pullback (frameworks.Jax.jit_vjp)
_COMPILED_VJP: dict = {}
#: the keys of _COMPILED_VJP whose program does not trace where the forward one does: values come
#: from the forward-only program (:func:`value`)
_NO_JOINT: set = set()
#: True while :func:`forward_confirmed` re-runs a failing check: :func:`value` then calls the forward-only program
_FORWARD_ONLY = contextvars.ContextVar("losscheck_forward_only", default=False)


def compiled(target):
    """What the value and gradient properties call: a jax target under ``jax.jit`` (static
    arguments as the catalogue marks them), as jax code runs in practice.  Called eagerly, jax
    compiles every primitive for every new shape and dtype (~47 compilations for a
    cross-entropy's value and gradient, 1.8 s); jitted, one program (0.35 s).  None for torch
    and for a target that does not trace (it is then called eagerly; the ``jit`` property
    reports that it does not trace)."""
    key = (target.fn, target.quantity.name)
    if key not in _COMPILED:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = _jitted(target)
    return _COMPILED[key]


def _vjp_program(target, wrts):
    """The target's forward and pullback w.r.t. ``wrts`` as one jitted program, ``(native,
    cotangent) -> (out, vjps)`` (frameworks.Jax.jit_vjp; None for torch), kept per target."""
    key = (target.fn, target.quantity.name, wrts)
    if key not in _COMPILED_VJP:
        if len(_COMPILED_VJP) > 256:
            _COMPILED_VJP.clear()
        _COMPILED_VJP[key] = frameworks.get(target.framework).jit_vjp(
            lambda **kw: call(target, kw), wrts, [a.name for a in target.quantity.args if a.static])
    return _COMPILED_VJP[key]


def evaluate(target, native, wrt=None, cotangent=None):
    """(output, jitted) of one call of the target — with ``wrt`` (a tuple of argument names), its
    vector-Jacobian products with ``cotangent`` w.r.t. each, as a tuple, from one backward pass —
    under :func:`compiled` where the target traces, else eagerly (then ``jitted`` is False, and the
    snippet of a finding calls it as run)."""
    fw = frameworks.get(target.framework)
    wrts = None if wrt is None else tuple(wrt)

    def run(fn):
        if wrts is None:
            out = call(target, native, fn)
        else:
            out = fw.vjp(lambda **kw: call(target, kw, fn), native, wrts, cotangent)
        fw.synchronize(target.device)
        return out
    fn = compiled(target)
    if fn is not None:
        try:
            if wrts is None:
                return run(fn), True
            out = _vjp_program(target, wrts)(native, cotangent)[1]  # forward and pullback in one program
            fw.synchronize(target.device)
            return out, True
        except Exception:  # does not trace (or fails only under jit, which the jit property reports): eagerly
            _COMPILED[(target.fn, target.quantity.name)] = None
    return run(target.fn), False


def value(target, args, dtype, native=None):
    """(output, jitted): the target's value at ``args`` in ``dtype`` (``native``: those arguments
    as the framework's arrays, made here when omitted), as :func:`evaluate` gives it — except that
    for a jax target that traces and has arguments to differentiate, it is the output of the
    forward-and-pullback program the gradient properties run at the same shape and dtype (a
    cotangent of ones, the pullback dropped).  One XLA program per shape and dtype then serves the
    value and the gradient properties, where a forward-only program beside it doubled the
    compilations, most of a jax audit's time (giou: 45 programs, 23 s compiling of its 37; 27, 16
    of 27 s with it; zlpr: 81, 30 of 43 s → 54, 21 of 33 s).  That output is
    the value ``jax.value_and_grad`` gives in training; the forward-only program is still audited
    by the ``jit`` property, and :func:`forward_confirmed` checks a failing value again with it, so
    that a finding and its snippet are about ``jax.jit(fn)``.  A pullback that does not trace where
    the forward pass does sends the target's values to the forward program from then on (the
    gradient properties report the pullback)."""
    native = _native_args(target, args, dtype) if native is None else native
    wrts = _differentiated(target, args) if target.differentiable else ()
    key = (target.fn, target.quantity.name, wrts)
    if wrts and key not in _NO_JOINT and not _FORWARD_ONLY.get() and compiled(target) is not None:
        fw = frameworks.get(target.framework)
        ones = fw.array(np.ones(Reference(target.quantity).output_shape(args)), dtype, target.device)
        try:
            out = _vjp_program(target, wrts)(native, ones)[0]
            fw.synchronize(target.device)
            return out, True
        except Exception:
            out = evaluate(target, native)  # raises where the value itself does: that is its finding
            _NO_JOINT.add(key)  # the forward pass runs, the pullback does not
            return out
    return evaluate(target, native)


def forward_confirmed(check):
    """``check(target, case, ...)``, whose values come from :func:`value`: where it fails on a jax
    target that traces, it runs again on the forward-only program, and that outcome stands."""
    @functools.wraps(check)
    def run(target, case, **kw):
        out = check(target, case, **kw)
        if out is None or out.ok or kw.get("jit") or compiled(target) is None:  # jit: forward-only already
            return out
        token = _FORWARD_ONLY.set(True)
        try:
            return check(target, case, **kw)
        finally:
            _FORWARD_ONLY.reset(token)
    return run


def _differentiated(target, args) -> tuple:
    """The arguments whose gradients the properties check: the contract's, less integer labels given for a target."""
    return tuple(a.name for a in target.quantity.grad_args
                 if not (isinstance(args[a.name], np.ndarray) and np.issubdtype(args[a.name].dtype, np.integer)))


def _fmt(v):
    a = np.asarray(v, dtype=object)
    with np.errstate(over="ignore"):  # mpf beyond float64 print as inf
        f = np.vectorize(lambda t: float(t), otypes=[np.float64])(a) if a.size else np.zeros(a.shape)
        return np.array2string(f, precision=17, floatmode="unique", separator=", ", threshold=50)


def _import_line(target):
    mod, _, name = target.spec.partition(":")
    if not mod:
        return f"fn = ...  # the audited callable ({target.label})"
    if mod.endswith(".py"):
        return ("import importlib.util\n"
                f"_s = importlib.util.spec_from_file_location('audited', {mod!r})\n"
                "_m = importlib.util.module_from_spec(_s); _s.loader.exec_module(_m)\n"
                f"fn = _m.{name}")
    if mod.startswith("losscheck.impls.adapters."):  # third-party code: its own API, without losscheck
        from losscheck.impls.adapters import standalone_source
        try:
            return f"{standalone_source(getattr(importlib.import_module(mod), name))}\n\nfn = {name}"
        except (ValueError, ImportError, AttributeError):
            pass
    return f"from {mod} import {name} as fn"


def _snippet_header(target):
    """A snippet's first lines: the imports and the audited callable (``fn``)."""
    fw = frameworks.get(target.framework)
    return ["import numpy as np", "np.set_printoptions(precision=17, floatmode='unique')", fw.imports, _import_line(target)]


def snippet(target, args, dtype, *, cotangent=None, wrt=None, together=None, jit=False, body_only=False):
    """A short runnable reproduction (``body_only``: without :func:`_snippet_header`, for the calls
    of a claim's snippet).  A gradient's shows the one w.r.t. ``wrt``, computed as the audit did:
    from one backward pass w.r.t. every argument in ``together`` (default ``wrt`` alone)."""
    fw = frameworks.get(target.framework)
    q = target.quantity
    lines = [] if body_only else _snippet_header(target)
    for a in q.args:
        v = args[a.name]
        if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.integer):
            lines.append(f"{a.name} = {fw.int_literal(v, target.device)}")
        elif a.kind in ARRAY_KINDS:
            lines.append(f"{a.name} = {fw.literal(v, dtype, target.device)}")
        else:
            lines.append(f"{a.name} = {v!r}")
    passed = [a for a in q.args if a.name not in target.omit]
    call_args = ", ".join([a.name for a in passed if a.required] + [f"{a.name}={a.name}" for a in passed if not a.required])
    if jit:
        static = [a.name for a in q.args if a.static]
        lines.append(f"fn = jax.jit(fn, static_argnames={tuple(static)!r})")
    if cotangent is None:  # the values, then the dtype and shape (a finding may be about those)
        lines += [f"out = fn({call_args})", f"print({fw.to_numpy_code})", "print(out.dtype, tuple(out.shape))"]
    else:
        together = tuple(together or (wrt,))
        names, at = ", ".join(together), together.index(wrt)
        if target.framework == "torch":
            lines += [f"{x}.requires_grad_(True)" for x in together]
            lines += [f"out = fn({call_args})", f"w = {fw.literal(cotangent, dtype, target.device)}",
                      f"g = torch.autograd.grad(out, ({names},), grad_outputs=w)[{at}]  # d/d{wrt}",
                      "print(g.double().cpu().numpy())"]
        elif jit:  # as the audit ran it: forward and pullback in one program (frameworks.Jax.jit_vjp)
            dynamic = ", ".join(a.name for a in passed if not a.static)
            lines += [f"w = {fw.literal(cotangent, dtype, target.device)}",
                      f"pull = jax.jit(lambda {dynamic}, w: jax.vjp(lambda {names}: fn({call_args}), {names})[1](w))",
                      f"g = pull({dynamic}, w)[{at}]  # d/d{wrt}", "print(np.asarray(g, dtype=np.float64))"]
        else:
            lines += [f"out, pullback = jax.vjp(lambda {names}: fn({call_args}), {names})",
                      f"w = {fw.literal(cotangent, dtype, target.device)}",
                      f"g = pullback(w)[{at}]  # d/d{wrt}", "print(np.asarray(g, dtype=np.float64))"]
    return "\n".join(lines)


def claim_snippet(target, calls):
    """The reproduction of a claim: every call it made, in order, each printing its output (values, or
    the gradient of sum(output)), so that pasting it shows the numbers the claim compared."""
    blocks = ["\n".join(_snippet_header(target))]
    for i, c in enumerate(calls):
        body = snippet(target, c["args"], "float64", cotangent=c.get("cotangent"), wrt=c.get("wrt"),
                       jit=c.get("jit", False), body_only=True)
        body = "\n".join(line for line in body.splitlines() if line != "print(out.dtype, tuple(out.shape))")
        what = f"gradient of sum(out) w.r.t. {c['wrt']}" if c.get("wrt") else "value"
        blocks.append(f"# call {i + 1} of {len(calls)}: {what}\n{body}")
    return "\n".join(blocks)


def _printed(v) -> str:
    """What the snippet's print shows for ``v``: every digit (arrays over 1000 entries summarised, as print does)."""
    return np.array2string(np.asarray(v, dtype=np.float64), precision=17, floatmode="unique")  # print()'s threshold




def facts(check: str, args: dict, *, index=None, got=None, expected=None, **more) -> dict:
    """A failing outcome's typed fields, as the counterexample record keeps them
    (:class:`properties.results.Counterexample`): ``check`` (what was compared: "value",
    "gradient d/dx", "claim NAME", "nan", ...), ``args`` (every drawn argument, all digits, NaN and
    infinities as floats), the failing ``index`` of the output (or gradient), ``got_value`` and
    ``expected_value`` there, and any of ``exception`` / ``exception_message`` (what the call
    raised), ``output_dtype``, ``structural`` (a wrong shape or type, as said)."""
    out = {"check": check, "args": {k: np.asarray(v).tolist() if isinstance(v, np.ndarray) else v for k, v in args.items()}}
    if index is not None:
        out["index"] = [int(i) for i in index]
    if got is not None:
        out["got_value"] = float(got)
    if expected is not None:
        out["expected_value"] = float(as_float(expected))
    out.update(more)
    return out


def _inputs_text(q, args):
    return "; ".join(f"{a.name} = {_fmt(args[a.name]) if isinstance(args[a.name], np.ndarray) else repr(args[a.name])}" for a in q.args)


def flushed(args, dtype):
    """``args`` with subnormal floating entries (of ``dtype``) replaced by 0, or None if
    there are none: what a platform that treats subnormal inputs as zero computes with
    (XLA on the CPU does, DAZ)."""
    out, changed = dict(args), False
    for k, v in args.items():
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            sub = (v != 0) & (np.abs(v) < tiny(dtype))
            if sub.any():
                out[k], changed = np.where(sub, 0.0, v), True
    return out if changed else None


def _gradient_unit(w, x) -> float:
    """The unit of a vector-Jacobian product w·∂f/∂x for the practical tolerance: a unit-sized result
    (loss, probability, overlap) over inputs of size max(1, |x|), times the cotangent: max|w| / max(1,
    max|x|).  The textbook softmax − onehot gradient of a cross-entropy is known to eps of that unit
    (p − 1 with p ≈ 1 rounded), not of its own tiny entries."""
    w, x = np.abs(np.asarray(w, dtype=np.float64)), np.abs(np.asarray(x, dtype=np.float64))
    x = x[np.isfinite(x)]
    return float(w.max() if w.size else 0.0) / max(1.0, float(x.max()) if x.size else 1.0)


def _row_axis(q):
    """The axis a sample's entries lie along (the normwise scale of the practical tolerance)."""
    return {"last": -1, "first": 0}.get(q.layout, "all")


def _outcome_from_compare(got, ref, sens, dtype, n, what, target, args, reference_at=None, rounded=None,
                          normwise=False, unit=0.0, probed=None, **snip):
    """Compare against the reference.  ``sens`` is the first-order sensitivity; ``probed()`` gives
    the full one, with the finite probes of every input and intermediate step
    (:meth:`spec.Reference.evaluate`), which only widens the tolerance: it is computed only where
    the comparison at ``sens`` fails, and everything after that uses it.  Where the comparison
    still fails, two other results are accepted too:
    where the inputs hold subnormals, that of the flushed inputs (``reference_at(flushed args)``
    → (ref, sens)); where the definition has intermediate steps, that of the definition with
    every step rounded to the dtype (``rounded()`` → ref), within the same tolerance; and where
    that witness and the exact reference disagree beyond the tolerance themselves, any result
    between the two, for a gradient any within the chain-rule scale that bounds both
    (``Outcome.undetermined``, :func:`properties.dtypes.between`).  These run only after a
    failure; NaN fails every comparison."""
    passes = target.quantity.passes_of(args)
    ok, ulps, allowed, worst = compare(got, ref, sens, dtype, n, passes, target.native_half)
    if not ok and probed is not None:
        sens = probed()
        ok, ulps, allowed, worst = compare(got, ref, sens, dtype, n, passes, target.native_half)
    if not ok and reference_at is not None and (fargs := flushed(args, dtype)) is not None:
        fref, fsens = reference_at(fargs)
        fok, fulps, fallowed, fworst = compare(got, fref, fsens, dtype, n, passes, target.native_half)
        if fok:
            return Outcome(True, fulps, fallowed)
    if not ok and rounded is not None and Reference(target.quantity).has_steps(_reference_args(target, args)):
        # The error model lets every intermediate step round in the dtype; the tolerance accounts for
        # that by first-order sensitivity and probes at ±rel_step/2, which miss a result that hinges on
        # differences below the dtype's resolution (entries that one rounding makes equal: a near-tie
        # turned exact, where the gradient spikes).  The definition evaluated with each step rounded
        # to nearest is one such admissible evaluation: a result that matches it (within the bound at
        # its own point, for a gradient: the chain-rule terms there can be far larger) is backward stable.
        witness, bound = rounded(), None
        if isinstance(witness, tuple):  # a gradient: with its running-error scale at the rounded point
            witness, wscale = witness  # terms beyond float64 (inf) go to the undetermined rule below
            bound = np.maximum(np.asarray(sens, dtype=np.float64), wscale)
            wsens = np.maximum(np.asarray(sens, dtype=np.float64), np.minimum(wscale, np.finfo(np.float64).max))
        else:
            wsens = sens
        rok, rulps, rallowed, _ = compare(got, witness, wsens, dtype, n, passes, target.native_half)
        if rok:
            return Outcome(True, rulps, rallowed)
        # Where the exact result and the witness themselves disagree beyond the tolerance, the
        # dtype's precision does not determine the result at this input (the error model is
        # first order; one rounding here moves it by orders of magnitude): a result between
        # the two admissible evaluations is accepted, a gradient anywhere within the scale of
        # the chain-rule terms that bounds both (dtypes.between), never NaN, and counted as
        # undetermined.
        if not compare(as_float(witness), ref, sens, dtype, n, passes, target.native_half)[0] and \
                between(got, ref, witness, sens, dtype, n, passes, target.native_half, bound=bound)[0]:
            return Outcome(True, 0.0, allowed, undetermined=True)
    msg, severity, off, known = "", "", "", {}
    if not ok:
        if isinstance(worst, str):
            msg, severity = f"{what}: {worst}", classify(off_domain="", structural=True)
            known = facts(what, args, structural=worst, output_shape=list(np.shape(got)))
        else:
            g = np.asarray(got)[worst] if worst is not None else got
            r = np.asarray(ref, dtype=object)[worst] if worst is not None else ref
            msg = (f"{what}: got {float(g)!r}, expected {float(r)!r} at index {tuple(int(i) for i in worst or ())}: "
                   f"{ulps:.3g} ULPs of {dtype} > allowed {allowed:.3g}")
            cot = snip.get("cotangent")
            known = facts(what, args, index=worst or (), got=g, expected=r, **({} if cot is None else {"cotangent": np.asarray(cot).tolist()}))
            off = domain.tier(target.quantity, args, dtype, snip.get("cotangent"))
            if not off and domain.huge_output(r, dtype):  # no answer in the dtype is right
                off = f"result {float(as_float(r)):.3g} beyond {dtype}'s largest finite value"
            if not off and math.isfinite(ulps) and domain.degenerate_box(target.quantity, args, worst):
                off = "a degenerate box (zero area): the catalogue asks only for a finite result there"
            if not off and math.isfinite(ulps):
                scale = abs(float(as_float(r))) + float(np.asarray(sens, dtype=np.float64)[worst])
                if domain.tiny_output(max(scale, abs(float(g))), dtype):  # the result and what came back are tiny
                    off = f"result of scale {scale:.3g} < {domain.OUTPUT_FLOOR[dtype]:.3g}, got {float(g):.3g}"
            norm = row_scale(ref, sens, _row_axis(target.quantity) if normwise else None)
            norm = np.maximum(norm, unit)  # the digits of at least the result's unit
            severity = classify(off_domain=off, nonfinite=not math.isfinite(ulps),
                                within_practical=compare(got, ref, sens, dtype, n, passes, target.native_half,
                                                         practical=True, norm=norm)[0])
    return Outcome(ok, ulps, allowed, msg, None if ok else _fmt(ref), None if ok else _fmt(got),
                   "" if ok else snippet(target, args, dtype, **snip), "" if ok else _inputs_text(target.quantity, args),
                   severity=severity, off_domain=off, facts=known)




def _violation_outcome(target, args, dtype, v, **snip):
    """A failed mixed forward–backward criterion (:mod:`properties.mixed`) as an Outcome: on the
    typical domain a bug beyond the practical tolerance, accuracy within it; range outside."""
    off = domain.tier(target.quantity, args, dtype, snip.get("cotangent"))
    if not off and domain.degenerate_box(target.quantity, args, v.index):
        off = "a degenerate box (zero area): the catalogue asks only for a finite result there"
    unit = spacing(max(abs(v.expected), abs(v.got), 1.0), dtype)
    cot = snip.get("cotangent")
    return Outcome(False, v.excess / unit, v.allowed / unit, v.describe(), _fmt(np.float64(v.expected)),
                   _fmt(np.float64(v.got)), snippet(target, args, dtype, **snip), _inputs_text(target.quantity, args),
                   severity=classify(off_domain=off, within_practical=v.within_practical), off_domain=off,
                   facts=facts(v.check, args, index=v.index, got=v.got, expected=v.expected,
                               **({} if cot is None else {"cotangent": np.asarray(cot).tolist()})))


def _raise_outcome(target, args, dtype, exc, what, **snip):
    off = domain.tier(target.quantity, args, dtype, snip.get("cotangent"))
    return Outcome(False, math.inf, 0.0, f"{what}: raised {type(exc).__name__}: {exc}", None, None,
                   snippet(target, args, dtype, **snip), _inputs_text(target.quantity, args),
                   severity=classify(off_domain=off, nonfinite=True), off_domain=off,
                   facts=facts(what, args, exception=type(exc).__name__, exception_message=str(exc)))


# -- the reference, as the target presents the quantity ---------------------------------
def _reference_args(target, args):
    return target.reference_args(args) if target.reference_args is not None else args


def reference_value(target, args, step=None):
    """(values, sensitivities) of the reference for ``target``: at the arguments its declared
    conventions map to, and as 1 − q where it returns the loss form.  The loss form is one more
    step, 1 − q, whose rounding the error model charges at the scale of q: its sensitivity is
    S + |q| (a loss 1 − q near 0 is known only to eps·|q|, as every library forms it)."""
    ref, sens = Reference(target.quantity).evaluate(_reference_args(target, args), step)
    if not target.complement:
        return ref, sens
    with np.errstate(over="ignore"):  # an mpf beyond float64 is inf, as the sensitivity then is
        q = np.vectorize(lambda v: abs(float(v)), otypes=[np.float64])(ref) if np.size(ref) else np.zeros(np.shape(ref))
    return 1 - ref, np.asarray(sens, dtype=np.float64) + q


def reference_vjp(target, args, w, wrt, step=None):
    """The reference vector-Jacobian product for ``target`` (see :func:`reference_value`)."""
    g, sens = Reference(target.quantity).vjp(_reference_args(target, args), w, wrt, step)
    return (-g if target.complement else g), sens


def rounded_value(target, args, dtype):
    """The reference values with every intermediate step rounded to ``dtype``'s compute
    precision (:meth:`spec.Reference.rounded`), as :func:`reference_value` presents them."""
    ref = Reference(target.quantity).rounded(_reference_args(target, args), compute_bits(dtype, target.native_half))
    return 1 - ref if target.complement else ref


def rounded_vjp(target, args, w, wrt, dtype):
    """The vector-Jacobian product of :func:`rounded_value` and its running-error scale at the
    rounded point (:meth:`spec.Reference.rounded_vjp`)."""
    g, scale = Reference(target.quantity).rounded_vjp(_reference_args(target, args), w, wrt,
                                                      compute_bits(dtype, target.native_half))
    return (-g if target.complement else g), scale


# -- value, gradient, stability, masked, jit -------------------------------------------
def _draw_case(regime, dtype, with_cotangent, menu=None):
    """The strategy of a case: ``{"args", "dtype"[, "cotangent"]}``, of a shape from ``menu``
    (:func:`properties.strategies.shapes_of`).  The value, gradient,
    repeatable, nan and inf properties all draw a cotangent, used or not: Hypothesis, derandomised,
    then draws the same arguments for each of them at a dtype, so that the jax programs compiled
    per shape (:func:`value`) serve them all (soft_topk: 85 programs, 82 s → 73, 70 s)."""
    def draw(data, target):
        q = target.quantity
        args = data.draw(arguments(q, regime, dtype, menu), label="args")
        case = {"args": args, "dtype": dtype}
        if with_cotangent and q.grad_args:
            shape = Reference(q).output_shape(args)
            case["cotangent"] = data.draw(cotangents(shape, dtype), label="cotangent")
        return case
    return draw


@forward_confirmed
def check_value(target, case, *, jit=False):
    """Values vs the reference; ``jit``: the jit property (a fresh ``jax.jit`` of the target, which
    must trace; the other properties call :func:`compiled` where the target traces).  The value is
    :func:`value`'s, from the program the gradient properties run where there is one."""
    q, args, dtype = target.quantity, case["args"], case["dtype"]
    fw = frameworks.get(target.framework)
    n = Reference(q).shapes(args)[1]
    step = rel_step(dtype, n, q.passes_of(args), target.native_half)
    ref, sens = reference_value(target, args)  # the first-order sensitivity; the probed one where it fails
    native = _native_args(target, args, dtype)
    jitted = jit
    try:
        if jit:
            out = call(target, native, _jitted(target))
            fw.synchronize(target.device)
        else:
            out, jitted = value(target, args, dtype, native)
    except Exception as e:  # the audited code crashed on valid input: a finding
        return _raise_outcome(target, args, dtype, e, "value", jit=jit)
    problem = fw.output_problem(out, target.device)
    if problem:  # a Python float, a list, None: said as it is, not as a precision error
        return Outcome(False, math.inf, 0.0, f"value: {problem}", None, None, snippet(target, args, dtype, jit=jitted),
                       _inputs_text(q, args), severity=classify(off_domain="", structural=True),
                       facts=facts("value", args, structural=problem))
    note = ""
    if hasattr(out, "dtype") and fw.dtype_name(out) != dtype:
        got_dt = fw.dtype_name(out)
        if got_dt not in DTYPES or mantissa_bits(got_dt) < mantissa_bits(dtype):  # precision lost: a bug anywhere
            return Outcome(False, math.inf, 0.0, f"value: output dtype {got_dt}, expected {dtype}",
                           None, None, snippet(target, args, dtype, jit=jitted), _inputs_text(q, args),
                           severity=classify(off_domain="", structural=True), facts=facts("value", args, output_dtype=got_dt))
        note = f"a {dtype} input is answered in {got_dt} (more precise: a note, judged as {dtype})"
    got = fw.numpy(out)
    out = _outcome_from_compare(got, ref, sens, dtype, n, "jit value" if jit else "value", target, args,
                                probed=lambda: reference_value(target, args, step)[1],
                                reference_at=lambda a: reference_value(target, a, step),
                                rounded=lambda: rounded_value(target, args, dtype), jit=jitted,
                                normwise=q.output != "row", unit=1.0)  # a vector output (softmax): per sample
    if out.ok and (v := mixed.image_violation(q, _reference_args(target, args), got, dtype, n, q.passes_of(args),
                                              target.native_half, target.complement)) is not None:
        return _violation_outcome(target, args, dtype, v, jit=jitted)
    if out.ok and note:
        out.note = note
    if not out.ok and not target.complement:  # a loss 1 − q audited as the score q: say so
        loss = replace(target, complement=True)
        if compare(got, *reference_value(loss, args, step), dtype, n, q.passes_of(args), target.native_half)[0]:
            out.message += " (1 − q matches: if the callable returns the loss 1 − q, audit it with --loss)"
    return out


def check_gradient(target, case):
    """Vector-Jacobian products w.r.t. every argument the contract differentiates."""
    q, args, dtype, w = target.quantity, case["args"], case["dtype"], case["cotangent"]
    if not target.differentiable:
        return Outcome(True, skipped=True, message="the target is declared not differentiable")
    if q.differentiable is not None and not q.differentiable(**_reference_args(target, args)):
        return check_gradient_finite(target, case)
    fw = frameworks.get(target.framework)
    n = Reference(q).shapes(args)[1]
    wrts = _differentiated(target, args)
    if not wrts:
        return Outcome(True)
    step = rel_step(dtype, n, q.passes_of(args), target.native_half)
    try:  # every differentiated argument from one backward pass (one jax program per shape and dtype)
        gs, jit = evaluate(target, _native_args(target, args, dtype), wrts, fw.array(w, dtype, target.device))
    except Exception as e:
        return _raise_outcome(target, args, dtype, e, "gradient", cotangent=w, wrt=wrts[0], together=wrts)
    worst, grads = None, {}
    for wrt, g in zip(wrts, gs):
        ref, sens = reference_vjp(target, args, w, wrt)  # the scale without the probes; with them where it fails
        grads[wrt] = fw.numpy(g)
        out = _outcome_from_compare(grads[wrt], ref, sens, dtype, n, f"gradient d/d{wrt}", target, args,
                                    probed=lambda wrt=wrt: reference_vjp(target, args, w, wrt, step)[1],
                                    reference_at=lambda a, wrt=wrt: reference_vjp(target, a, w, wrt, step),
                                    rounded=lambda wrt=wrt: rounded_vjp(target, args, w, wrt, dtype), cotangent=w, wrt=wrt,
                                    together=wrts, jit=jit, normwise=True, unit=_gradient_unit(w, args[wrt]))
        if not out.ok:
            return _float16_range(target, case, out, grads[wrt])
        worst = out if worst is None or out.max_ulps > worst.max_ulps else worst
    rargs = _reference_args(target, args)
    if (v := mixed.shift_violation(q, rargs, w, grads, dtype, n, q.passes_of(args), target.native_half,
                                   target.complement, lambda a: Reference(q).vjp_terms(rargs, w, a))) is not None:
        return _violation_outcome(target, args, dtype, v, cotangent=w, wrt=v.moved[0], together=wrts, jit=jit)
    return worst


def _float16_range(target, case, out, got):
    """``out``, a failing gradient, as a *range* finding where it is float16's range: a natively
    float16 gradient with NaN or ±inf where the reference is finite, at inputs where the same case in
    float32 holds.  Autodiff forms intermediates that the value does not: 1/y² for a quotient x/y
    (jax's div rule; torch's forms y·y), which leave float16's largest value, 65504, once |y| < 2^-8.
    A textbook jax dice of two sums of 0.002 (probs = targets = [0, 0.00195], stability[float16]) gave
    −inf for a gradient of order 1: no care for float16's range, not a wrong formula, which the
    float32 case would show.  Values keep float16's range as the typical domain states it
    (properties.domain: boxes must upcast, logits stay below 256); bfloat16 has float32's exponent
    range, and a target that computes half precision in float32 (ours) promises that range."""
    if out.severity != "bug" or case["dtype"] != "float16" or not target.native_half or np.isfinite(got).all():
        return out
    if not check_gradient(target, {**case, "dtype": "float32"}).ok:  # float16's exact inputs, in float32
        return out
    out.off_domain = "float16's range, in an intermediate of the derivative (the same case holds in float32)"
    out.severity = classify(off_domain=out.off_domain)
    return out


def check_gradient_finite(target, case):
    """At an input where the quantity is not differentiable (a kink, a tie, a
    degenerate box) no reference gradient exists, but the implementation's
    vector-Jacobian product must still be finite: never NaN, and ±inf only
    where the reference's one-sided gradient (the branch its structure picks),
    or that of the definition with its steps rounded to the dtype (see
    :func:`_outcome_from_compare`), is within the error bound of overflowing
    the dtype with that sign (soft_topk's huge gradients in half precision)."""
    q, args, dtype, w = target.quantity, case["args"], case["dtype"], case["cotangent"]
    fw = frameworks.get(target.framework)
    n = Reference(q).shapes(args)[1]
    top = max_finite(dtype) / (1 + rel_step(dtype, n, q.passes_of(args), target.native_half))
    wrts = _differentiated(target, args)
    if not wrts:
        return Outcome(True)
    try:
        gs, jit = evaluate(target, _native_args(target, args, dtype), wrts, fw.array(w, dtype, target.device))
    except Exception as e:
        return _raise_outcome(target, args, dtype, e, "gradient", cotangent=w, wrt=wrts[0], together=wrts)
    for wrt, g in zip(wrts, gs):
        g = fw.numpy(g)
        bad = np.isnan(g)
        if np.isinf(g).any():
            ref = as_float(reference_vjp(target, args, w, wrt)[0])
            overflows = (np.abs(ref) >= top) & (np.sign(ref) == np.sign(g))
            if (np.isinf(g) & ~overflows).any() and Reference(q).has_steps(_reference_args(target, args)):
                wit = as_float(rounded_vjp(target, args, w, wrt, dtype)[0])
                overflows |= (np.abs(wit) >= top) & (np.sign(wit) == np.sign(g))
            bad |= np.isinf(g) & ~overflows
        if bad.any():
            i = tuple(int(t) for t in np.argwhere(bad)[0])
            off = domain.tier(target.quantity, args, dtype, w)
            return Outcome(False, math.inf, 0.0,
                           f"gradient d/d{wrt} at a non-differentiable input: {float(g[i])!r} at index {i} (must be finite)",
                           "finite", _fmt(g), snippet(target, args, dtype, cotangent=w, wrt=wrt, together=wrts, jit=jit),
                           _inputs_text(q, args),
                           severity=classify(off_domain=off, nonfinite=True), off_domain=off,
                           facts=facts(f"gradient d/d{wrt}", args, index=i, got=g[i], cotangent=np.asarray(w).tolist()))
    return Outcome(True)


def check_value_and_gradient(target, case):
    out = check_value(target, case)
    if not out.ok or not target.quantity.grad_args or not target.differentiable:
        return out
    g = check_gradient(target, case)
    if g.ok:
        g.max_ulps = max(g.max_ulps, out.max_ulps)
    return g


# -- numerical claims -------------------------------------------------------------------
def _as_canonical(target, args, out, cotangent=None, wrt=None):
    """A claim states the canonical quantity: undo the target's output form (1 − q), and under
    declared conventions take away their effect as the reference computes it (60 digits), so
    that a claim fails only for what the conventions do not explain.  ``cotangent``/``wrt``:
    ``out`` is a vector-Jacobian product, not a value."""
    out = -out if (target.complement and wrt is not None) else (1 - out if target.complement else out)
    if target.reference_args is None:
        return out
    plain = replace(target, complement=False, reference_args=None)
    if wrt is None:
        shifted = reference_value(replace(plain, reference_args=target.reference_args), args)[0]
        canonical = reference_value(plain, args)[0]
    else:
        shifted = reference_vjp(replace(plain, reference_args=target.reference_args), args, cotangent, wrt)[0]
        canonical = reference_vjp(plain, args, cotangent, wrt)[0]
    return out - as_float(shifted - canonical)


def _claim_draw(claim):
    def draw(data, target):
        args = data.draw(arguments(target.quantity, "claim", "float64"), label="args")
        extra = {k: data.draw(EXTRA_KINDS[v], label=k) for k, v in claim.extra.items()}
        return {"args": args, "extra": extra, "dtype": "float64"}
    return draw


def _claim_check(claim):
    @forward_confirmed
    def check(target, case):
        q, args = target.quantity, case["args"]
        if claim.precondition is not None:
            assume(claim.precondition(**args))
        fw = frameworks.get(target.framework)

        def pinned(kw):  # a claim that varies an argument the target has pinned does not apply to it
            if any(k in target.fixed and kw[k] != target.fixed[k] for k in kw):
                raise NotApplicable(f"the claim varies {sorted(set(kw) & set(target.fixed))}, pinned for this target")

        calls = []  # every call the claim makes, for its snippet: {"args", "out"[, "wrt", "cotangent"]}

        def impl(**kw):
            pinned(kw)
            full = {**args, **kw}
            out, jit = value(target, full, "float64")  # jitted where it traces
            out = fw.numpy(out)
            calls.append({"args": full, "out": out, "jit": jit})
            return _as_canonical(target, full, out)

        def grad(wrt, **kw):
            """d sum(output) / d wrt, at the drawn arguments updated by kw."""
            if not target.differentiable:
                raise NotApplicable("the claim needs gradients; the target is declared not differentiable")
            pinned(kw)
            full = {**args, **kw}
            native = _native_args(target, full, "float64")
            ones = np.ones(np.shape(_as_canonical(target, full, fw.numpy(value(target, full, "float64", native)[0]))))
            wrts = _differentiated(target, full)  # all of them: the program the gradient properties compiled
            wrts = wrts if wrt in wrts else (wrt,)
            gs, jit = evaluate(target, native, wrts, fw.array(ones, "float64", target.device))
            g = fw.numpy(gs[wrts.index(wrt)])
            calls.append({"args": full, "out": g, "wrt": wrt, "cotangent": ones, "jit": jit})
            return _as_canonical(target, full, g, ones, wrt)
        impl.grad = grad
        try:
            with np.errstate(all="ignore"):  # an overflowing target's inf − inf: the comparison below reports it
                comparisons = claim.check(impl=impl, **args, **case["extra"])
        except NotApplicable as e:
            return Outcome(True, skipped=True, message=str(e))
        except Exception as e:
            return _raise_outcome(target, args, "float64", e, f"claim {claim.name}")
        worst = 0.0
        for c in comparisons:
            got, exp = np.asarray(c.got, dtype=np.float64), np.asarray(c.expected, dtype=np.float64)
            tol = np.broadcast_to(np.asarray(c.tol, dtype=np.float64), got.shape)
            with np.errstate(invalid="ignore"):  # equal infinities agree (inf − inf would be NaN, a failure)
                err = np.where(got == exp, 0.0, np.abs(got - exp))
            # ULPs of float64 at max(|expected|, tol): readable where the expected value is 0
            unit = np.vectorize(lambda e, t: spacing(max(abs(e), t), "float64"))(exp, tol) if err.size else err
            ulps = float(np.nanmax(np.where(np.isnan(err), np.inf, err / unit))) if err.size else 0.0
            worst = max(worst, ulps)
            bad = ~(err <= tol)  # NaN fails
            if bad.any():
                i = tuple(int(t) for t in np.argwhere(bad)[0])
                # within half of float64's digits of the expected value (of at least 1, as a value's unit;
                # never tighter than the claim's own tolerance, which for a statistical claim is its
                # sampling error) the claim holds but digits are lost: an accuracy finding
                off = domain.tier(target.quantity, args, "float64")
                practical = np.maximum(tol, 2.0 ** -26 * np.maximum(np.abs(np.where(np.isfinite(exp), exp, 0.0)), 1.0))
                severity = classify(off_domain=off, nonfinite=not np.isfinite(got[i]),
                                    within_practical=bool(np.all(err <= practical)))
                return Outcome(False, worst, 0.0,
                               f"claim {claim.name} ({c.what}): got {float(got[i])!r}, expected {float(exp[i])!r} ± {tol[i]:.3g} at index {i}"
                               + (f" (with {case['extra']})" if case["extra"] else ""),
                               _fmt(exp), _fmt(got),
                               claim_snippet(target, calls) if calls else snippet(target, args, "float64"),
                               _inputs_text(q, args) + (f"; {case['extra']}" if case["extra"] else ""),
                               printed="\n".join(_printed(c["out"]) for c in calls) if calls else None,
                               severity=severity, off_domain=off,
                               facts=facts(f"claim {claim.name}", args, index=i, got=got[i], expected=exp[i]))
        return Outcome(True, worst)
    return check


# -- contract ---------------------------------------------------------------------------
def _valid_example(q):
    """A small valid input (arrays of shape (2, 3), labels (2,)) for the contract checks: batch 2 and
    n = 3 in layout "last", three columns of 2 in layout "first", one sample of 6 in layout "all"; boxes n = 4."""
    examples = {
        "vector": np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]]),
        "simplex": np.array([[0.25, 0.25, 0.5], [0.5, 0.25, 0.25]]),
        "unit": np.array([[0.0, 0.5, 1.0], [1.0, 0.25, 0.0]]),
        "sign": np.array([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]]),
        "binary": np.array([[1, 0, 1], [0, 1, 0]], dtype=np.int64),
        "label": np.array([0, 2], dtype=np.int64),
        "target": np.array([0, 2], dtype=np.int64),
        "box": np.array([[0.0, 0.0, 2.0, 1.0], [1.0, -1.0, 3.0, 4.0]]),
        "positive": 1.0,
        "nonnegative": 0.5,
        "count": 1,
        "flag": False,
    }
    return {a.name: examples[a.kind] for a in q.args}


def _bad_value(target, arg, bad, args):
    """The native form of an out-of-domain value declared by the spec
    (``Quantity.invalid``): a literal scalar, or one of the named forms below."""
    fw = frameworks.get(target.framework)
    v = args.get(arg)
    n = 3  # _valid_example's n
    if bad == "integer array":
        return fw.int_array(np.round(v).astype(np.int64), target.device), f"{arg} = <int64 array>"
    if bad == "0-d array":
        return fw.array(np.float64(0.5), "float32", target.device), f"{arg} = <0-d float32 array>"
    if bad == "n + 1":
        return n + 1, f"{arg} = {n + 1} (n + 1)"
    if bad == "label n":
        return fw.int_array(np.full(np.shape(v), n, dtype=np.int64), target.device), f"{arg} = {n} (labels in 0..n-1)"
    if bad == "label -1":
        return fw.int_array(np.full(np.shape(v), -1, dtype=np.int64), target.device), f"{arg} = -1"
    if bad == "wrong shape":
        w = np.asarray(v)[..., :-1] if np.ndim(v) else v
        make = fw.int_array(w, target.device) if np.issubdtype(np.asarray(w).dtype, np.integer) else fw.array(w, "float32", target.device)
        return make, f"{arg} with the last axis cut to {np.shape(w)[-1]}"
    if bad == "above 1":
        return fw.array(np.asarray(v) * 0 + 1.5, "float32", target.device), f"{arg} = 1.5 (probabilities lie in [0, 1])"
    if bad == "negative entry":
        return fw.array(np.asarray(v) * 0 - 0.5, "float32", target.device), f"{arg} = -0.5 (probabilities lie in [0, 1])"
    if bad == "value 0":  # a sign label
        return fw.array(np.zeros(np.shape(v)), "float32", target.device), f"{arg} = 0 (labels are -1 or +1)"
    if bad == "value 2":
        return fw.int_array(np.full(np.shape(v), 2, dtype=np.int64), target.device), f"{arg} = 2 (labels are 0 or 1)"
    if bad in ("x2 < x1", "y2 < y1"):  # a box with its corners' coordinates swapped on one axis
        k = 0 if bad == "x2 < x1" else 1
        w = np.array(v, dtype=np.float64)
        w[..., [k, k + 2]] = w[..., [k + 2, k]]
        return fw.array(w, "float32", target.device), f"{arg} with {bad} in every row"
    if bad == "no positive":
        return fw.int_array(np.zeros(np.shape(v), dtype=np.int64), target.device), f"{arg} with no positive in a row"
    if bad == "no negative":
        return fw.int_array(np.ones(np.shape(v), dtype=np.int64), target.device), f"{arg} with no negative in a row"
    return bad, f"{arg} = {bad!r}"


def contract_check(arg, bads):
    def check(target, case):
        q = target.quantity
        if arg in target.fixed:
            return Outcome(True, skipped=True, message=f"{arg} is pinned: the audited function has no such parameter")
        args = _valid_example(q)
        failures = []
        for bad in bads:
            native = _native_args(target, args, "float32")
            native[arg], shown = _bad_value(target, arg, bad, args)
            try:
                call(target, native)
                failures.append(f"{shown}: no exception")
            except ValueError as e:
                if arg not in str(e):
                    failures.append(f"{shown}: ValueError does not name {arg!r}: {e}")
            except Exception as e:
                failures.append(f"{shown}: raised {type(e).__name__} instead of ValueError: {e}")
        if failures:
            return Outcome(False, message="; ".join(failures), inputs=_inputs_text(q, args),
                           expected=f"ValueError naming {arg!r}", got=failures[0])
        return Outcome(True)
    return check


# -- the list ----------------------------------------------------------------------------
def properties_for(q: Quantity, framework: str, dtypes=DTYPES) -> list[Property]:
    props = []
    for dt in dtypes:
        props.append(Property(f"value[{dt}]", "conformance", _draw_case("moderate", dt, True), check_value,
                              "values vs the 60-digit reference", dtype=dt))
    if q.grad_args:
        for dt in dtypes:
            props.append(Property(f"gradient[{dt}]", "conformance", _draw_case("moderate", dt, True), check_gradient,
                                  "vector-Jacobian products vs the reference", dtype=dt))
    for dt in dtypes:
        props.append(Property(f"stability[{dt}]", "conformance", _draw_case("extreme", dt, True), check_value_and_gradient,
                              "values and gradients at extreme magnitudes", dtype=dt))
    if q.masking is not None:
        for dt in dtypes:
            props.append(Property(f"masked[{dt}]", "conformance", _draw_case("masked", dt, True), check_value_and_gradient,
                                  "-inf entries and all-masked rows", dtype=dt))
    for c in q.numerical_claims:
        props.append(Property(f"claim:{c.name}", "conformance", _claim_draw(c), _claim_check(c), c.statement,
                              uses_reference=False))
    if framework == "torch":  # jax arrays are immutable
        props.append(Property("unchanged[float32]", "conformance", _draw_case("moderate", "float32", False),
                              purity.check_unchanged, "the call and its gradients leave the inputs as they were",
                              uses_reference=False, dtype="float32"))
    props.append(Property("repeatable[float32]", "conformance", _draw_case("moderate", "float32", True),
                          forward_confirmed(purity.check_repeatable),
                          "two calls on the same input agree (bitwise on the CPU)",
                          uses_reference=False, dtype="float32"))
    props.append(Property("nan[float64]", "conformance", nonfinite.draw(_draw_case("moderate", "float64", True)),
                          forward_confirmed(nonfinite.check_nan),
                          "a NaN entry gives NaN in every output it affects (or a ValueError); "
                          "a finding is of severity range", dtype="float64"))
    if any(a.kind in nonfinite.INF_KINDS for a in q.args):  # probabilities and labels have no +inf
        props.append(Property("inf[float64]", "conformance",
                              nonfinite.draw(_draw_case("moderate", "float64", True), nonfinite.INF_KINDS),
                              forward_confirmed(nonfinite.check_inf),
                              "a +inf entry gives the formula's value where it has one, else NaN (or a ValueError); "
                              "a finding is of severity range", dtype="float64"))
    if framework == "jax":
        for dt in ("float32", "float64"):
            # the forward-only program at three shapes (FEW_SHAPES): the values at all eight come from the
            # gradient properties' programs (see value), and each shape here was a program of its own
            props.append(Property(f"jit[{dt}]", "conformance", _draw_case("moderate", dt, False, FEW_SHAPES),
                                  lambda t, c: check_value(t, c, jit=True), "jax.jit(target) vs the reference", dtype=dt))
    for arg, bads in q.invalid.items():
        props.append(Property(f"contract:{arg}", "contract", None, contract_check(arg, bads),
                              f"out-of-domain {arg} raises ValueError naming it: {', '.join(map(str, bads))}"))
    return props


def describe_exception(e) -> str:
    return "".join(traceback.format_exception_only(type(e), e)).strip()
