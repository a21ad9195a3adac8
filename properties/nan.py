"""NaN in, NaN out: a NaN in an input entry gives NaN in every output that entry affects (or a
ValueError), never a finite answer.

A finite answer to a NaN input is how a corrupted batch passes unnoticed through a training run: a
comparison with NaN is False, so ``where(den == 0, 1, num / den)`` survives it, but ``x > t`` in a
sort, a count or a clamp written as a comparison turns the NaN into a plausible number.

Which outputs an entry *affects* comes from the spec, not from a rule per quantity: the reference is
evaluated with that entry moved to two other values of its kind, and the outputs that change are
the affected ones (an entry of a Kullback–Leibler q where p is 0 affects nothing; an entry of a
softmax row affects the whole row).  Outputs that do not depend on it are left unconstrained.

A NaN input lies outside the typical domain, so a finding is of severity *range*
(:mod:`properties.severity`): reported at every gate, counted with ``--gate range``; our own
implementations are held to it in the test suite.
"""

from __future__ import annotations

import mpmath
import numpy as np
from hypothesis import strategies as st

from . import frameworks
from .severity import classify

#: array kinds whose entries are real numbers (labels, binary targets and signs are integers or ±1)
NAN_KINDS = ("vector", "simplex", "unit", "target", "box")
OFF_DOMAIN = "a NaN input"
#: relative change of a reference value that counts as an effect of the moved entry: far above the
#: reference's working precision (60 digits or more), far below any dependence a float64 result shows
MOVED = 1e-25


def _eligible(target, args) -> list[str]:
    return [a.name for a in target.quantity.args
            if a.kind in NAN_KINDS and isinstance(args.get(a.name), np.ndarray)
            and np.issubdtype(args[a.name].dtype, np.floating) and args[a.name].size]


def draw(draw_case):
    """A case of ``draw_case`` with one entry of one real array argument chosen to be NaN."""
    def nan_draw(data, target):
        case = draw_case(data, target)
        names = _eligible(target, case["args"])
        if not names:
            return {**case, "nan": None}
        name = data.draw(st.sampled_from(names), label="NaN argument")
        index = data.draw(st.integers(0, case["args"][name].size - 1), label="NaN entry")
        return {**case, "nan": (name, np.unravel_index(index, case["args"][name].shape))}
    return nan_draw


def _alternatives(kind, v):
    """Two other values of the entry, in its kind's range."""
    if kind in ("vector", "box"):
        return v + (1 + abs(v)), v - (1 + abs(v))
    return v / 2, (1 + v) / 2  # simplex, unit, target: in [0, 1]


def affected(target, args, name, index) -> np.ndarray:
    """Boolean mask over the output: where the reference changes when entry ``index`` of ``name`` moves."""
    from .checks import reference_value
    kind = next(a.kind for a in target.quantity.args if a.name == name)
    base = np.asarray(reference_value(target, args)[0], dtype=object)
    hit = np.zeros(base.shape, dtype=bool)
    for v in _alternatives(kind, float(args[name][index])):
        moved = np.array(args[name], copy=True)
        moved[index] = v
        other = np.asarray(reference_value(target, {**args, name: moved})[0], dtype=object)
        hit |= np.vectorize(_moved, otypes=[bool])(base, other) if base.size else hit
    return hit


def _moved(a, b) -> bool:
    """Whether two reference values differ beyond the reference's own digits: a row is evaluated at
    the precision its span needs, so an output of another row may differ far below 1e-25 relative."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
        return not (a == b)  # NaN differs from everything; inf from everything but itself
    return abs(a - b) > MOVED * (abs(a) + abs(b))


def check_nan(target, case):
    """A NaN entry gives NaN in every output it affects, or a ValueError."""
    from .checks import Outcome, _inputs_text, _native_args, evaluate, facts, snippet
    if case.get("nan") is None:
        return Outcome(True, skipped=True, message="no argument with real entries to set to NaN")
    q, dtype = target.quantity, case["dtype"]
    name, index = case["nan"]
    args = dict(case["args"])
    mask = affected(target, args, name, index)
    if not mask.any():
        return Outcome(True)  # that entry affects no output here: nothing is asked of it
    poisoned = np.array(args[name], copy=True)
    poisoned[index] = np.nan
    args[name] = poisoned
    fw = frameworks.get(target.framework)
    where = f"{name}{list(int(i) for i in index)}"

    def finding(message, got, **known):
        return Outcome(False, np.inf, 0.0, message, "nan", got, snippet(target, args, dtype), _inputs_text(q, args),
                       severity=classify(off_domain=OFF_DOMAIN, nonfinite=True), off_domain=OFF_DOMAIN,
                       facts=facts("nan", args, **known))
    try:
        out = np.asarray(fw.numpy(evaluate(target, _native_args(target, args, dtype))[0]), dtype=np.float64)
    except ValueError:
        return Outcome(True)  # rejected: as good as NaN
    except Exception as e:
        return finding(f"NaN at {where} raised {type(e).__name__} (not a ValueError): {e}", type(e).__name__,
                       exception=type(e).__name__, exception_message=str(e))
    if out.shape != mask.shape:
        return Outcome(True)  # a wrong shape is the value property's finding
    finite = mask & ~np.isnan(out)
    if not finite.any():
        return Outcome(True)
    at = tuple(int(i) for i in np.argwhere(finite)[0]) if finite.ndim else ()
    got = repr(float(out[at]))
    return finding(f"NaN at {where} gave {got} at output index {at} (NaN expected: that output depends on the entry; "
                   f"{int(finite.sum())} of {int(mask.sum())} affected outputs are not NaN)", got,
                   index=at, got=out[at], expected=float("nan"))
