"""Properties of the call itself, not of its numbers: it leaves its inputs as they were, and the same
input gives the same output.  Neither needs the reference, so they are cheap; a failure is a bug at
any input (an in-place ``x -= x.max()`` corrupts the caller's tensor whatever the values; an output
that changes between two calls is not a function of its input).

  unchanged   torch only (jax arrays are immutable): the value call and each vector-Jacobian
              product leave every array argument bit for bit as it was
  repeatable  two calls on the same input agree bit for bit on the CPU; on a GPU, where atomic
              reductions may sum in any order, within the rounding bound C(n)·eps·max|out|
"""

from __future__ import annotations

import numpy as np

from losscheck.spec import Reference

from . import frameworks
from .dtypes import error_bound
from .severity import classify


def _snapshot(fw, native, names) -> dict:
    return {k: np.array(fw.numpy(native[k]), copy=True) for k in names}


def _same(a, b) -> np.ndarray:
    """Entrywise equality, NaN equal to NaN (bit-for-bit up to the NaN payload)."""
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _changed(before: dict, fw, native) -> tuple[str, tuple, float, float] | None:
    """(argument, index, before, after) of the first entry a call changed, or None."""
    for name, old in before.items():
        new = fw.numpy(native[name])
        if old.shape != new.shape:
            return name, (), float("nan"), float("nan")
        same = _same(old, new)
        if not same.all():
            idx = tuple(int(i) for i in np.argwhere(~same)[0])
            return name, idx, float(old[idx]), float(new[idx])
    return None


def check_unchanged(target, case):
    """The value call and every vector-Jacobian product leave their array arguments as they were."""
    from .checks import Outcome, _inputs_text, _native_args, call, facts, snippet
    q, args, dtype = target.quantity, case["args"], case["dtype"]
    fw = frameworks.get(target.framework)
    native = _native_args(target, args, dtype)
    arrays = [a.name for a in q.args if a.name in native and hasattr(native[a.name], "shape")]
    before = _snapshot(fw, native, arrays)
    calls = [("value", None)]
    if target.differentiable:
        calls += [("gradient", a.name) for a in q.grad_args
                  if not (isinstance(args[a.name], np.ndarray) and np.issubdtype(args[a.name].dtype, np.integer))]
    for what, wrt in calls:
        try:
            if wrt is None:
                call(target, native)
            else:
                w = fw.array(np.ones(Reference(q).output_shape(args)), dtype, target.device)
                fw.vjp(lambda **kw: call(target, kw), native, (wrt,), w)
            fw.synchronize(target.device)
        except Exception:  # a crash is the value and gradient properties' finding; here only what it changed
            pass
        hit = _changed(before, fw, native)
        if hit is not None:
            name, idx, old, new = hit
            return Outcome(False, np.inf, 0.0,
                           f"the {what} call{'' if wrt is None else f' (d/d{wrt})'} changed its input {name}: "
                           f"entry {idx} was {old!r}, is {new!r} after the call",
                           repr(old), repr(new), snippet(target, args, dtype), _inputs_text(q, args),
                           severity=classify(off_domain="", structural=True),
                           facts=facts(what if wrt is None else f"gradient d/d{wrt}", args, changed=name, index=idx,
                                       got=new, expected=old))
    return Outcome(True)


def check_repeatable(target, case):
    """Two calls on the same input give the same output (bitwise on the CPU)."""
    from .checks import Outcome, _inputs_text, _native_args, _raise_outcome, facts, snippet, value
    q, args, dtype = target.quantity, case["args"], case["dtype"]
    fw = frameworks.get(target.framework)
    native = _native_args(target, args, dtype)
    try:
        first = np.array(fw.numpy(value(target, args, dtype, native)[0]), copy=True)
    except Exception:  # a crash is the value property's finding
        return Outcome(True)
    try:
        second = fw.numpy(value(target, args, dtype, native)[0])
    except Exception as e:  # the first call went through: the second one's crash is this property's
        return _raise_outcome(target, args, dtype, e, "second value call")
    if first.shape != second.shape:
        differ = np.ones((), dtype=bool)
    elif target.device == "cpu":
        differ = ~_same(first, second)
    else:  # atomics: the order of a reduction may change between calls
        n = Reference(q).shapes(args)[1]
        bound = np.vectorize(lambda v: error_bound(v, 0.0, dtype, n, native=target.native_half))(np.maximum(np.abs(first), np.abs(second)))
        differ = ~(_same(first, second) | (np.abs(first - second) <= bound))
    if not differ.any():
        return Outcome(True)
    idx = tuple(int(i) for i in np.argwhere(differ)[0]) if differ.ndim else ()
    a, b = (first[idx], second[idx]) if first.shape == second.shape else (first.shape, second.shape)
    how = "bit for bit" if target.device == "cpu" else "within the rounding bound"
    return Outcome(False, np.inf, 0.0, f"two calls on the same input differ {how}: {a!r} then {b!r} at index {idx}",
                   repr(a), repr(b), snippet(target, args, dtype), _inputs_text(q, args),
                   severity=classify(off_domain="", structural=True),
                   facts=facts("value", args, index=idx, **({"got": b, "expected": a} if first.shape == second.shape else
                                                             {"structural": f"shape {a} then {b}"})))
