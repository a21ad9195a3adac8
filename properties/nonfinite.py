"""Non-finite inputs: NaN in, NaN out; +inf as the catalogue's formula takes it, or rejected.

``nan[float64]``: a NaN in an input entry gives NaN in every output that entry affects (or a
ValueError), never a finite answer.  A finite answer to a NaN input is how a corrupted batch passes
unnoticed through a training run: a comparison with NaN is False, so ``where(den == 0, 1, num / den)``
survives it, but ``x > t`` in a sort, a count or a clamp written as a comparison turns the NaN into a
plausible number.

``inf[float64]``: a ``+inf`` in an entry of a real-valued argument (logits, scores, box coordinates)
gives, at each output that entry affects, what the spec's formula gives there (evaluated by the
reference in mpmath's extended reals: ``max(0, 1 - inf) = 0``, ``logsumexp([inf, 1]) = inf``, the IoU
of an infinitely wide box and a unit box 0), or NaN, or a ValueError — a rejection is always allowed.
Where the formula itself is undetermined there (``inf / inf`` in a softmax), the catalogue does not
define the result, and only NaN or a ValueError is right: never a finite number.

Which outputs an entry *affects* comes from the spec, not from a rule per quantity: the reference is
evaluated with that entry moved to two other values of its kind, and the outputs that change are
the affected ones (an entry of a Kullback–Leibler q where p is 0 affects nothing; an entry of a
softmax row affects the whole row).  Outputs that do not depend on it are left unconstrained.

A non-finite input lies outside the typical domain, so a finding is of severity *range*
(:mod:`properties.severity`): reported at every gate, counted with ``--gate range``; our own
implementations are held to both in the test suite.
"""

from __future__ import annotations

import mpmath
import numpy as np
from hypothesis import strategies as st

from . import frameworks
from .severity import classify

#: array kinds whose entries are real numbers (labels, binary targets and signs are integers or ±1)
NAN_KINDS = ("vector", "simplex", "unit", "target", "box")
#: those whose range is unbounded above, where +inf is a limit of valid inputs ([0, 1] kinds are not)
INF_KINDS = ("vector", "box")
#: relative change of a reference value that counts as an effect of the moved entry: far above the
#: reference's working precision (60 digits or more), far below any dependence a float64 result shows
MOVED = 1e-25
#: a finite result at a +inf input matches the formula's value within half of float64's digits (the
#: practical tolerance of properties.dtypes): a limit has no condition number to scale a bound by
INF_TOLERANCE = 2.0 ** -26


def _eligible(target, args, kinds) -> list[str]:
    return [a.name for a in target.quantity.args
            if a.kind in kinds and isinstance(args.get(a.name), np.ndarray)
            and np.issubdtype(args[a.name].dtype, np.floating) and args[a.name].size]


def draw(draw_case, kinds=NAN_KINDS):
    """A case of ``draw_case`` with one entry of one argument of ``kinds`` chosen (``case["entry"]``)."""
    def entry_draw(data, target):
        case = draw_case(data, target)
        names = _eligible(target, case["args"], kinds)
        if not names:
            return {**case, "entry": None}
        name = data.draw(st.sampled_from(names), label="argument")
        index = data.draw(st.integers(0, case["args"][name].size - 1), label="entry")
        return {**case, "entry": (name, np.unravel_index(index, case["args"][name].shape))}
    return entry_draw


def _alternatives(kind, v):
    """Two other values of the entry, in its kind's range."""
    if kind in ("vector", "box"):
        return v + (1 + abs(v)), v - (1 + abs(v))
    return v / 2, (1 + v) / 2  # simplex, unit, target: in [0, 1]


def _moved(a, b) -> bool:
    """Whether two reference values differ beyond the reference's own digits: a row is evaluated at
    the precision its span needs, so an output of another row may differ far below 1e-25 relative."""
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
        return not (a == b)  # NaN differs from everything; inf from everything but itself
    return abs(a - b) > MOVED * (abs(a) + abs(b))


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


def _poisoned(target, case, value):
    """(args with the chosen entry set to ``value``, the mask of outputs it affects, its name and
    place as text), or None where nothing is asked (no such argument, an entry that affects nothing)."""
    if case.get("entry") is None:
        return None
    name, index = case["entry"]
    args = dict(case["args"])
    mask = affected(target, args, name, index)
    if not mask.any():
        return None
    poisoned = np.array(args[name], copy=True)
    poisoned[index] = value
    return {**args, name: poisoned}, mask, f"{name}{list(int(i) for i in index)}"


def _call(target, args, dtype):
    """The target's output as float64, or the exception it raised."""
    from .checks import value
    fw = frameworks.get(target.framework)
    try:
        return np.asarray(fw.numpy(value(target, args, dtype)[0]), dtype=np.float64)
    except Exception as e:
        return e


def _finding(target, args, dtype, check, off_domain, message, got_text, expected_text="nan", **known):
    """A range finding (the input lies outside the typical domain) with its typed fields ``known``."""
    from .checks import Outcome, _inputs_text, facts, snippet
    return Outcome(False, np.inf, 0.0, message, expected_text, got_text, snippet(target, args, dtype),
                   _inputs_text(target.quantity, args), severity=classify(off_domain=off_domain, nonfinite=True),
                   off_domain=off_domain, facts=facts(check, args, **known))


def check_nan(target, case):
    """A NaN entry gives NaN in every output it affects, or a ValueError."""
    from .checks import Outcome
    dtype = case["dtype"]
    setup = _poisoned(target, case, np.nan)
    if setup is None:
        return Outcome(True, skipped=case.get("entry") is None, message="no argument with real entries to set to NaN")
    args, mask, where = setup
    out = _call(target, args, dtype)
    off = "a NaN input"
    if isinstance(out, ValueError):
        return Outcome(True)  # rejected: as good as NaN
    if isinstance(out, Exception):
        return _finding(target, args, dtype, "nan", off, f"NaN at {where} raised {type(out).__name__} (not a ValueError): {out}",
                        type(out).__name__, exception=type(out).__name__, exception_message=str(out))
    if out.shape != mask.shape:
        return Outcome(True)  # a wrong shape is the value property's finding
    finite = mask & ~np.isnan(out)
    if not finite.any():
        return Outcome(True)
    at = tuple(int(i) for i in np.argwhere(finite)[0]) if finite.ndim else ()
    got = repr(float(out[at]))
    return _finding(target, args, dtype, "nan", off,
                    f"NaN at {where} gave {got} at output index {at} (NaN expected: that output depends on the entry; "
                    f"{int(finite.sum())} of {int(mask.sum())} affected outputs are not NaN)", got,
                    index=at, got=out[at], expected=float("nan"))


def check_inf(target, case):
    """A +inf entry gives the formula's value at each output it affects, NaN where the formula is
    undetermined there, or a ValueError; NaN is always allowed (a rejection)."""
    from .checks import Outcome
    dtype = case["dtype"]
    setup = _poisoned(target, case, np.inf)
    if setup is None:
        return Outcome(True, skipped=case.get("entry") is None, message="no unbounded real argument to set to +inf")
    args, mask, where = setup
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf in the reference's float64 views: NaN, as meant
        return _check_inf(target, case["args"], args, dtype, mask, where, *case["entry"])


def _limit(target, args, name, index) -> np.ndarray:
    """The formula's value as the entry grows without bound, per output: its value at +inf where
    that is determined, else the limit of its values at 1e100 and 1e200 (the same value within
    INF_TOLERANCE; ±inf where it grows 1e50-fold), else NaN (undetermined).  mpmath evaluates a
    weight 0 times e^inf, or inf − inf, as NaN where the formula's limit exists (ZLPR's (1 − t)·e^s
    at t = 1, a cross-entropy's logsumexp − x_j on the label's class): the finite values decide."""
    from .checks import reference_value

    def at(v):
        moved = np.array(args[name], copy=True)
        moved[index] = v
        try:
            return np.asarray(reference_value(target, {**args, name: moved})[0], dtype=object)
        except (ValueError, ArithmeticError, OverflowError):
            return None
    exact = at(np.inf)
    if exact is not None and not any(mpmath.isnan(mpmath.mpf(v)) for v in exact.flat):
        return exact
    big, bigger = at(1e100), at(1e200)
    shape = next((r.shape for r in (exact, big, bigger) if r is not None), ())
    out = np.full(shape, mpmath.mpf("nan"), dtype=object)
    for i in np.ndindex(*shape):
        e = mpmath.mpf(exact[i]) if exact is not None else mpmath.mpf("nan")
        if not mpmath.isnan(e):
            out[i] = e
            continue
        if big is None or bigger is None:
            continue
        a, b = mpmath.mpf(big[i]), mpmath.mpf(bigger[i])
        if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
            out[i] = b if a == b else mpmath.mpf("nan")
        elif abs(a - b) <= INF_TOLERANCE * max(1, abs(a), abs(b)):
            out[i] = b
        elif a != 0 and mpmath.sign(a) == mpmath.sign(b) and abs(b) >= 1e50 * abs(a):
            out[i] = mpmath.inf * mpmath.sign(b)
    return out


def _check_inf(target, clean, args, dtype, mask, where, name, index):
    from .checks import Outcome
    ref = _limit(target, clean, name, index)
    out = _call(target, args, dtype)
    off = "a +inf input"
    if isinstance(out, ValueError):
        return Outcome(True)
    if isinstance(out, Exception):
        return _finding(target, args, dtype, "inf", off, f"+inf at {where} raised {type(out).__name__} (not a ValueError): {out}",
                        type(out).__name__, exception=type(out).__name__, exception_message=str(out))
    if out.shape != mask.shape or ref.shape != mask.shape:
        return Outcome(True)  # a wrong shape is the value property's finding

    def wrong(g, r):
        if g != g:  # NaN: a rejection, always allowed
            return False
        r = mpmath.mpf(r)
        if mpmath.isnan(r):  # undetermined: only NaN is right
            return True
        if mpmath.isinf(r) or g in (np.inf, -np.inf):
            return g != float(r)
        return abs(g - float(r)) > INF_TOLERANCE * max(1.0, abs(float(r)))
    bad = mask & np.vectorize(wrong, otypes=[bool])(out, ref) if out.size else mask & False
    if not bad.any():
        return Outcome(True)
    at = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    g, r = float(out[at]), mpmath.mpf(ref[at])
    expected = "NaN (the formula is undetermined there)" if mpmath.isnan(r) else f"{float(r)!r} (the formula's value or limit)"
    return _finding(target, args, dtype, "inf", off,
                    f"+inf at {where} gave {g!r} at output index {at}, expected {expected} or NaN; "
                    f"{int(bad.sum())} of {int(mask.sum())} affected outputs", repr(g),
                    index=at, got=g, expected=float(r), expected_text=str(r))
