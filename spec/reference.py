"""High-precision reference values and gradients, derived from the SymPy
definitions (never a second hand-written formula).

Each (quantity, n, structure) definition is differentiated with ``sympy.diff``
(holding stop-gradient symbols constant) and lambdified to mpmath once; the
compiled functions are then evaluated row by row at ``DPS`` significant
digits *beyond the decimal span of the row's inputs* (x = [1, −2.6e60] needs
61 digits before x − min(x) keeps the 1), plus the digits a cancellation
inside the definition costs, measured per row by a second evaluation with
more digits (:meth:`Reference.dps`), so every reference value and Jacobian
carries at least DPS − 10 correct digits whatever the magnitudes.  Masked entries (-inf) are passed to mpmath as -inf, where
exp(-inf) = 0; an all-masked row takes the quantity's ``Masking.empty`` value
with a zero gradient.

Besides values and gradients the reference returns *sensitivities*
S = sum_v |d out / d v| * |v| over every real input v (vector entries and
positive scalars).  S / |out| is the relative condition number of the
output; the properties turn it into a tolerance (a backward-stable
implementation commits errors of order eps * (|out| + S)).
"""

from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from . import cache
from .quantity import ARRAY_KINDS, MASKED_STANDIN, SCALAR_KINDS, Quantity, structural_value

DPS = 60  # significant digits of every reference evaluation, beyond the inputs' span
# Forward differences for gradient sensitivities use a relative step of
# 10^(−DPS/2) at the working precision: ~30 correct digits, far more than the
# 2-3 a tolerance needs.
_MASKED = mpmath.mpf(MASKED_STANDIN)


def absolute(expr):
    """``expr`` with every sum replaced by the sum of the absolute values of its terms
    (and every product/power by that of absolute values): the first-order
    running-error scale of evaluating ``expr`` in floating point.  Rounding an
    intermediate sum s = a + b commits an error ~eps·(|a| + |b|), not eps·|s|,
    which is what a gradient like softmax's p·(w − Σ w p) suffers when it cancels."""
    if expr.is_Add:
        return sp.Add(*[absolute(a) for a in expr.args])
    if expr.is_Mul:
        return sp.Mul(*[absolute(a) for a in expr.args])
    if expr.is_Pow:
        return sp.Pow(absolute(expr.base), expr.exp)
    return sp.Abs(expr) if (expr.is_Function or expr.is_Symbol or expr.is_Number) else expr


@dataclass(frozen=True)
class _Step:
    symbol: Any
    args: tuple  # the symbols the step reads
    value: Any  # mpf args -> mpf
    partials: Any  # mpf args -> [d/d arg for each arg]
    partials_abs: Any  # mpf args -> [|d/d arg|_abs for each arg]
    frozen: bool  # stop-gradient: derivatives do not flow through it
    value_only: Any = None  # a cheaper value when no derivative is needed (integrals)


@dataclass(frozen=True)
class Compiled:
    """A definition as a chain of small steps, each differentiated by
    ``sympy.diff``; derivatives are chained forward at evaluation time."""

    inputs: tuple  # flat inputs: (argname, entry index or None for a scalar)
    symbols: tuple  # the flat input symbols, same order
    steps: tuple
    outputs: tuple  # output symbols (the last len(outputs) steps)

    @property
    def inner(self) -> int:
        return len(self.steps) - len(self.outputs)

    def values_only(self, xs, factors=None):
        """Outputs only; ``factors`` ({t: factor}, see :meth:`rounding_factors`) multiplies
        intermediate steps by constant factors."""
        factors = factors or {}
        env = dict(zip(self.symbols, xs))
        for t, st in enumerate(self.steps):
            env[st.symbol] = (st.value_only or st.value)([env[a] for a in st.args]) * factors.get(t, 1)
        return [env[o] for o in self.outputs]

    def environment(self, xs) -> dict:
        """Every symbol's value (inputs, steps, outputs) at the flat inputs ``xs``: the base that
        :meth:`moved` recomputes from."""
        env = dict(zip(self.symbols, xs))
        for st in self.steps:
            env[st.symbol] = (st.value_only or st.value)([env[a] for a in st.args])
        return env

    def moved(self, base: dict, symbol, factor):
        """Outputs with ``symbol`` (an input or a step) multiplied by ``factor``, from ``base``
        (:meth:`environment`): only the steps that depend on it are evaluated again, the same
        operations on the same values as a full evaluation (a soft_topk row's probes of its ~40
        intermediates cost half the evaluations or less)."""
        env = dict(base)
        env[symbol] = base[symbol] * factor
        changed = {symbol}
        start = next((t + 1 for t, st in enumerate(self.steps) if st.symbol == symbol), 0)
        for st in self.steps[start:]:
            if not changed.isdisjoint(st.args):
                env[st.symbol] = (st.value_only or st.value)([env[a] for a in st.args])
                changed.add(st.symbol)
        return [env[o] for o in self.outputs]

    def rounding_factors(self, xs, bits: int) -> dict:
        """{t: round(step_t) / step_t} for the intermediate steps when each one's output
        is rounded to nearest (ties to even) at ``bits`` significand bits, the exponent
        unbounded: the definition evaluated step by step in a binary format of that
        precision, each step exact from the rounded earlier ones.  Every factor is
        within 2^-bits of 1 (exact steps, zeros among them, get none): the per-step
        relative perturbations the error model allows an implementation."""
        factors, env = {}, dict(zip(self.symbols, xs))
        for t, st in enumerate(self.steps[: self.inner]):
            v = (st.value_only or st.value)([env[a] for a in st.args])
            with mpmath.workprec(bits):
                r = +v  # unary plus rounds to the working precision
            if r != v and v and mpmath.isfinite(v):
                factors[t] = r / v
            env[st.symbol] = v * factors.get(t, 1)
        return factors

    def run(self, xs, with_steps=True, factors=None):
        """(values, jacobian, absolute jacobian, step scale, all derivatives) at the flat mpf inputs ``xs``.

        ``factors`` ({t: factor}) multiplies
        each step t by a constant factor held fixed: values and derivatives are those of
        the definition with those steps scaled (see :meth:`rounding_factors`).

        Derivatives are chained forward.  Each intermediate step also gets a
        column of its own, so that ``step scale``_j = Σ_steps |∂out_j/∂step|·|step|
        measures how a relative rounding of every intermediate (a pass of a
        recursion) reaches output j; it adds to the sensitivity to inputs.
        """
        m, inner = len(xs), len(self.steps) - len(self.outputs)
        width = m + inner if with_steps else m
        factors = factors or {}
        env = dict(zip(self.symbols, xs))
        zero = [mpmath.mpf(0)] * width
        D = {s: [mpmath.mpf(int(i == j)) for j in range(width)] for i, s in enumerate(self.symbols)}
        A = dict(D)
        for t, st in enumerate(self.steps):
            vals = [env[a] for a in st.args]
            env[st.symbol] = st.value(vals)
            f = factors.get(t, 1)
            env[st.symbol] *= f
            d, da = list(zero), list(zero)
            if not st.frozen:
                for a, pa, pabs in zip(st.args, st.partials(vals), st.partials_abs(vals)):
                    pa, pabs = pa * f, pabs * f
                    Da, Aa = D[a], A[a]
                    for j in range(width):
                        if Da[j]:
                            d[j] += pa * Da[j]
                        if Aa[j]:
                            da[j] += abs(pabs) * Aa[j]
            if with_steps and t < inner:
                d[m + t] = mpmath.mpf(1)  # seed: this step's own rounding
            D[st.symbol], A[st.symbol] = d, da
        inner_vals = [abs(env[st.symbol]) for st in self.steps[:inner]]
        return ([env[o] for o in self.outputs], [D[o][:m] for o in self.outputs], [A[o][:m] for o in self.outputs],
                [sum((abs(c) * v for c, v in zip(D[o][m:], inner_vals)), mpmath.mpf(0)) for o in self.outputs], D)

    def _chained(self, st, vals, D, width):
        """∂step/∂inputs by the chain rule: Σ_a ∂step/∂a · D[a] (zero for a stop-gradient step)."""
        d = [mpmath.mpf(0)] * width
        if not st.frozen:
            for a, pa in zip(st.args, st.partials(vals)):
                Da = D[a]
                for j in range(width):
                    if Da[j]:
                        d[j] += pa * Da[j]
        return d

    def jacobian(self, xs):
        """(every symbol's value, every symbol's derivatives w.r.t. the inputs) at the flat inputs
        ``xs``: the outputs' Jacobian is ``[D[o] for o in outputs]``; the base of :meth:`moved_jacobian`."""
        m = len(xs)
        env = dict(zip(self.symbols, xs))
        D = {s: [mpmath.mpf(int(i == j)) for j in range(m)] for i, s in enumerate(self.symbols)}
        for st in self.steps:
            vals = [env[a] for a in st.args]
            env[st.symbol] = st.value(vals)
            D[st.symbol] = self._chained(st, vals, D, m)
        return env, D

    def moved_jacobian(self, env, D, t, factor):
        """The outputs' Jacobian rows with intermediate step ``t``'s value multiplied by ``factor``
        (its own derivatives not scaled), from :meth:`jacobian`'s ``env`` and ``D``: only the steps
        that depend on step ``t`` are evaluated again (the same operations on the same values as a
        whole evaluation with that step moved: about half the work)."""
        env, D = dict(env), dict(D)
        sym = self.steps[t].symbol
        env[sym] = env[sym] * factor
        changed = {sym}
        for st in self.steps[t + 1:]:
            if changed.isdisjoint(st.args):
                continue
            vals = [env[a] for a in st.args]
            env[st.symbol] = st.value(vals)
            D[st.symbol] = self._chained(st, vals, D, len(self.symbols))
            changed.add(st.symbol)
        return [D[o] for o in self.outputs]

    def adjoint_scale(self, xs, w):
        """Σ_t |a_t|·|∂step_t/∂x| with a_t = Σ_j w_j ∂out_j/∂step_t, the adjoint that
        reverse mode forms for every intermediate step: a relative rounding of
        each adjoint moves the gradient by that much (first order)."""
        D, m = self.run(xs, with_steps=True)[4], len(xs)
        out = [mpmath.mpf(0)] * m
        for t, st in enumerate(self.steps[: self.inner]):
            a = abs(sum(_mp(wj) * D[o][m + t] for wj, o in zip(w, self.outputs)))
            if a:
                out = [acc + a * abs(d) for acc, d in zip(out, D[st.symbol][:m])]
        return out


def _flat_symbols(q: Quantity, d):
    flat, names = [], []
    for a in q.args:
        if a.structural:
            continue
        s = d.symbols[a.name]
        if isinstance(s, (tuple, list)):
            flat.extend(s)
            names.extend((a.name, i) for i in range(len(s)))
        else:
            flat.append(s)
            names.append((a.name, None))
    return flat, tuple(names)


def _exp(x):
    """mpmath.exp with the argument reduced by hand: for an integer-valued
    argument above 600 bits of precision (every huge float is an integer),
    mpmath computes e**n by repeated squaring, which is 100× slower than
    exp(r)·2**n with r = x − n·ln 2, computed here at |x|'s extra bits."""
    x = mpmath.mpf(x) if not isinstance(x, mpmath.mpf) else x
    if not mpmath.isfinite(x) or abs(x) < 2:
        return mpmath.exp(x)
    extra = int(mpmath.mag(x)) + 20
    with mpmath.extraprec(extra):
        n = mpmath.floor(x / mpmath.ln2)
        r = x - n * mpmath.ln2
    return mpmath.ldexp(mpmath.exp(r), int(n))


def _erfc(x):
    """mpmath.erfc, with the asymptotic series for |x| ≥ 1e4 (mpmath takes
    ~0.1 s at |x| ~ 1e300): erfc(x) = e^{−x²}/(x√π) Σ_k (−1)^k (2k−1)!!/(2x²)^k,
    whose error is below the first omitted term (< 10^-(dps+5) here)."""
    x = mpmath.mpf(x) if not isinstance(x, mpmath.mpf) else x
    if not mpmath.isfinite(x) or abs(x) < 10 ** 4:
        return mpmath.erfc(x)
    if x < 0:
        return 2 - _erfc(-x)
    u, term, total, k = 1 / (2 * x * x), mpmath.mpf(1), mpmath.mpf(1), 0
    tiny = mpmath.mpf(10) ** (-(mpmath.mp.dps + 5))
    while abs(term) > tiny:
        k += 1
        term *= -(2 * k - 1) * u
        total += term
    return _exp(-x * x) / (x * mpmath.sqrt(mpmath.pi)) * total


_MODULES = [{"exp": _exp, "erfc": _erfc}, "mpmath"]


def _lambdify(args, expr):
    """``expr`` as an mpmath function of the list ``args`` (see :func:`_step_function`)."""
    return _step_function(_sources(args, expr))


def _sources(args, expr) -> dict:
    """The Python source of ``expr`` as a function of the list ``args``, with common
    subexpressions evaluated once (``fast``: a softmax's partials share every e^x; without
    CSE a row of n entries costs O(n²) exps), and, where ``expr`` holds a Piecewise, the plain
    form too (``lazy``): CSE hoists subexpressions out of the branches, which then run eagerly,
    and where one raises (a 0/0 in the branch an empty set does not take) the lazy form is used.
    Sources, not functions, so that :mod:`spec.cache` can keep them on disk."""
    out = {"fast": inspect.getsource(sp.lambdify([list(args)], expr, modules=_MODULES, cse=True)), "lazy": None}
    exprs = expr if isinstance(expr, (list, tuple)) else [expr]
    if any(isinstance(e, sp.Basic) and e.has(sp.Piecewise) for e in exprs):
        out["lazy"] = inspect.getsource(sp.lambdify([list(args)], expr, modules=_MODULES))
    return out


@functools.cache
def _namespace() -> dict:
    """The globals lambdify gives generated code for ``_MODULES`` (mpmath, and ``_exp``/``_erfc``)."""
    return sp.lambdify([], 0, modules=_MODULES).__globals__


def _function(source: str):
    local: dict = {}
    exec(compile(source, "<losscheck-definition>", "exec"), _namespace(), local)  # noqa: S102 (our own generated code)
    (fn,) = local.values()
    return fn


def _step_function(sources: dict):
    fast = _function(sources["fast"])
    if sources["lazy"] is None:
        return fast
    lazy = _function(sources["lazy"])

    def f(xs):
        try:
            return fast(xs)
        except (ZeroDivisionError, ValueError):
            return lazy(xs)
    return f


#: Integrals over the real line (EXACT) are integrated on [-_Z, _Z] in panels of
#: _PANEL: their integrands are bounded by the standard normal density times a
#: polynomial, and φ(45) < 1e-439, far below DPS digits of any value float64
#: can hold (≥ 1e-330).  Gauss–Legendre with 48 nodes per panel of width 3
#: integrates such entire integrands to ~1e-67 relative (measured against
#: mpmath.quad at 110 digits and the two-class closed form, test_spec).
_Z, _PANEL, _GL_DEGREE = 45, 3, 5
_MAX_INTEGRAL_DPS = 75


def _integral_step(sym, expr, frozen):
    """A step that is one Integral over z ∈ (−∞, ∞): its value and all its
    partial derivatives (sympy.diff under the integral sign) are integrated in
    one pass over shared nodes, with common subexpressions evaluated once.
    Panels where every integrand is below 10^-(dps+20) of its largest sampled
    value are skipped (the integrands are unimodal on the scale of a panel)."""
    from mpmath.calculus.quadrature import GaussLegendre

    ((z, lo, hi),) = expr.limits
    if lo != -sp.oo or hi != sp.oo:
        raise ValueError(f"only integrals over the whole real line are supported, got ({lo}, {hi})")
    f = expr.function
    args = tuple(sorted(expr.free_symbols, key=lambda t: t.name))
    alone = sp.lambdify([z, list(args)], [f], modules=_MODULES, cse=True)
    memo = {}

    @functools.lru_cache(maxsize=1)
    def full():  # built on first use: value-only callers (large n) never pay for n partials
        return sp.lambdify([z, list(args)], [f] + [sp.diff(f, a) for a in args], modules=_MODULES, cse=True)

    def integrate(xs, value_only=False):
        key = (tuple(xs), mpmath.mp.prec)
        if key in memo:
            return memo[key]
        g = alone if value_only else full()
        if mpmath.mp.dps > _MAX_INTEGRAL_DPS:
            raise ValueError(f"integral steps are accurate to {_MAX_INTEGRAL_DPS} digits; the quantity must set span_digits=False")
        edges = [mpmath.mpf(-_Z + _PANEL * i) for i in range(int(2 * _Z / _PANEL) + 1)]
        samples = {e: [abs(v) for v in g(e, xs)] for e in edges}
        mids = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
        samples.update({m: [abs(v) for v in g(m, xs)] for m in mids})
        scale = [max(col) for col in zip(*samples.values())]
        cut = [sc * mpmath.mpf(10) ** (-(mpmath.mp.dps + 20)) for sc in scale]
        keep = [any(any(v > c for v, c in zip(samples[p], cut)) for p in (a, m, b)) for a, m, b in zip(edges, mids, edges[1:])]
        keep = [k or (i > 0 and keep[i - 1]) or (i + 1 < len(keep) and keep[i + 1]) for i, k in enumerate(keep)]
        nodes = GaussLegendre(mpmath.mp).get_nodes(-1, 1, _GL_DEGREE, mpmath.mp.prec)
        total = [mpmath.mpf(0)] * len(scale)
        for (a, b), k in zip(zip(edges, edges[1:]), keep):
            if not k:
                continue
            c, h = (a + b) / 2, (b - a) / 2
            for x, w in nodes:
                total = [t + h * w * v for t, v in zip(total, g(c + h * x, xs))]
        if value_only:
            return total
        if len(memo) > 64:
            memo.clear()
        memo[key] = total
        return total

    return _Step(sym, tuple(a.name for a in args), lambda xs: integrate(xs)[0], lambda xs: integrate(xs)[1:],
                 lambda xs: [abs(v) for v in integrate(xs)[1:]], frozen, lambda xs: integrate(xs, value_only=True)[0])


@functools.lru_cache(maxsize=1024)
def compile_definition(q: Quantity, n: int, structure: tuple) -> Compiled:
    """Build the definition for rows of n entries and differentiate every step.

    The SymPy work (building, ``sympy.diff``, CSE and code generation: 0.1–1 s a definition)
    is kept on disk by :mod:`spec.cache`, keyed by the spec's source, so a process loads what
    an earlier one derived.  Definitions with integral steps (EXACT) are built in each process."""
    key = (q.name, n, structure)
    plan = cache.load(key)
    if plan is None:
        plan = _plan(q, n, structure)
        if plan is not None:
            cache.store(key, plan)
    if plan is None:  # integral steps: closures over their SymPy integrands
        return _compile_with_integrals(q, n, structure)
    steps = tuple(_Step(s["symbol"], tuple(s["args"]), _step_function(s["value"]), _step_function(s["partials"]),
                        _step_function(s["partials_abs"]), s["frozen"]) for s in plan["steps"])
    return Compiled(tuple(tuple(i) for i in plan["inputs"]), tuple(plan["symbols"]), steps, tuple(plan["outputs"]))


def _chain(q: Quantity, n: int, structure: tuple):
    d = q.build(n, **dict(structure))
    flat, names = _flat_symbols(q, d)
    outs = [sp.Symbol(f"_out{j}") for j in range(len(d.outputs))]
    chain = ([(s, e, False) for s, e in d.steps] + [(s, e, True) for s, e in d.stop_gradient.items()]
             + [(s, sp.sympify(e), False) for s, e in zip(outs, d.outputs)])
    return flat, names, outs, chain


def _plan(q: Quantity, n: int, structure: tuple) -> dict | None:
    """The compiled definition as plain data (symbol names and generated sources), or None
    where a step is an integral or two distinct symbols share a name (names are the keys)."""
    flat, names, outs, chain = _chain(q, n, structure)
    steps = []
    for sym, expr, frozen in chain:
        if isinstance(expr, sp.Integral):
            return None
        args = tuple(sorted(expr.free_symbols, key=lambda t: t.name))
        partials = [sp.diff(expr, a) for a in args]
        steps.append({"symbol": sym.name, "args": [a.name for a in args], "frozen": frozen,
                      "value": _sources(args, expr), "partials": _sources(args, partials),
                      "partials_abs": _sources(args, [absolute(p) for p in partials])})
    symbols = {s for s in flat} | {s for s, _, _ in chain} | {a for _, e, _ in chain for a in e.free_symbols}
    if len({s.name for s in symbols}) != len(symbols):
        return None
    return {"inputs": [list(i) for i in names], "symbols": [s.name for s in flat], "steps": steps,
            "outputs": [o.name for o in outs]}


def _compile_with_integrals(q: Quantity, n: int, structure: tuple) -> Compiled:
    flat, names, outs, chain = _chain(q, n, structure)
    steps = []
    for sym, expr, frozen in chain:
        if isinstance(expr, sp.Integral):
            steps.append(_integral_step(sym.name, expr, frozen))
            continue
        args = tuple(sorted(expr.free_symbols, key=lambda t: t.name))
        partials = [sp.diff(expr, a) for a in args]
        steps.append(_Step(sym.name, tuple(a.name for a in args), _lambdify(args, expr), _lambdify(args, partials),
                           _lambdify(args, [absolute(p) for p in partials]), frozen))
    return Compiled(names, tuple(s.name for s in flat), tuple(steps), tuple(o.name for o in outs))


def _mp(v) -> mpmath.mpf:
    v = float(v)
    if math.isnan(v):
        raise ValueError("NaN is not a valid reference input")
    return mpmath.mpf(v)


def _key(*parts):
    """A hashable key for NumPy arrays, scalars and strings (exact bytes of arrays)."""
    out = []
    for p in parts:
        if isinstance(p, dict):
            out.append(_key(*sorted(p.items(), key=lambda kv: kv[0])))
        elif isinstance(p, tuple):
            out.append(_key(*p))
        elif isinstance(p, np.ndarray) or isinstance(p, np.generic):
            a = np.asarray(p)
            out.append((a.dtype.str, a.shape, a.tobytes()))
        else:
            out.append(p)
    return tuple(out)


def _memoised(method):
    """Memoise Reference.evaluate / vjp on the exact input bytes: derandomised
    properties draw the same inputs for torch and for jax, so each reference is
    computed once per run (bounded, least recently used first out)."""
    cache: dict = {}

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        key = _key(self.q.name, args, kwargs)
        if key in cache:
            cache[key] = cache.pop(key)  # most recently used last
            return cache[key]
        out = method(self, *args, **kwargs)
        cache[key] = out
        if len(cache) > _CACHE_SIZE:
            cache.pop(next(iter(cache)))
        return out
    return wrapper


_CACHE_SIZE = 4096
_DPS_CACHE: dict = {}
_VERIFY = 30  # extra digits of the evaluation that checks a row's working precision
_FLOOR = mpmath.mpf("1e-340")  # below every float64: differences there are invisible
# An entry that is exactly 0 at both check precisions may be a cancellation that absorbed
# everything, e.g. log(1 + e^-217) at 93 digits.  Such zeros are re-evaluated with this many
# more digits: 1 + t keeps every t above _FLOOR relative to the row's scale.
_ABSORB = 400


class Canonical(dict):
    """Arguments already in the "last" layout (so :func:`canonical` is idempotent)."""


def _is_labels(a, args) -> bool:
    """A ``label`` arg, or a ``target`` given as integer class labels."""
    return a.kind == "label" or (a.kind == "target" and np.issubdtype(np.asarray(args[a.name]).dtype, np.integer))


def full_shape(q: Quantity, args) -> tuple:
    """The broadcast shape of the array arguments given with a full (non-label)
    shape, in the caller's layout."""
    return np.broadcast_shapes(*(np.shape(args[a.name]) for a in q.array_args if not _is_labels(a, args)))


def canonical(q: Quantity, args) -> Canonical:
    """``args`` in the "last" layout: for "first" every full array argument has
    axis 0 moved last; for "all" the full array arguments are broadcast
    together and flattened to one row (integer ``target`` labels first become
    one-hot rows in the original shape) and ``label`` arguments become a 0-d
    object array holding the tuple of the sample's labels (C order)."""
    if isinstance(args, Canonical) or q.layout == "last":
        return Canonical(args)
    out = Canonical(args)
    if q.layout == "first":
        for a in q.array_args:
            out[a.name] = np.moveaxis(np.asarray(args[a.name]), 0, -1)
        return out
    shape = full_shape(q, args)  # layout "all"
    for a in q.args:
        v = args[a.name]
        if a.kind == "label":
            out[a.name] = np.empty((), dtype=object)
            out[a.name][()] = tuple(int(t) for t in np.ravel(v))  # a 0-d label array is one row's: a 1-tuple
        elif a.kind == "target" and _is_labels(a, args):
            out[a.name] = np.broadcast_to(np.eye(shape[-1])[np.asarray(v)], shape).reshape(-1)
        elif a.kind in ARRAY_KINDS:
            out[a.name] = np.broadcast_to(np.asarray(v), shape).reshape(-1)
    return out


def restore(q: Quantity, args, grad):
    """A gradient of shape canonical batch + (n,) back in the layout of ``args``."""
    if q.layout == "first":
        return np.moveaxis(grad, -1, 0)
    if q.layout == "all":
        return grad.reshape(full_shape(q, args))
    return grad


class Reference:
    """Reference evaluation of one Quantity on concrete NumPy inputs.

    Inputs hold the *exact* values the implementation sees (already cast to
    its dtype).  Results are object arrays of mpmath numbers in the output
    shape, plus float64 sensitivities.
    """

    def __init__(self, quantity: Quantity):
        self.q = quantity

    # -- plumbing -----------------------------------------------------------
    def _is_labels(self, a, args) -> bool:
        return _is_labels(a, args)

    def _full(self, args):
        """The array args given with shape batch + (n,)."""
        return [a for a in self.q.array_args if not self._is_labels(a, args)]

    def shapes(self, args):
        """(batch shape, n) of the samples (in the "last" layout: see :func:`canonical`)."""
        args = canonical(self.q, args)
        full = self._full(args)
        labels = [np.shape(args[a.name]) for a in self.q.args if a.kind in ("label", "target") and self._is_labels(a, args)]
        return np.broadcast_shapes(*(np.shape(args[a.name])[:-1] for a in full), *labels), np.shape(args[full[0].name])[-1]

    def output_shape(self, args):
        """The shape of the quantity's output (and of a cotangent) for ``args``."""
        batch, n = self.shapes(args)
        return batch if self.q.output == "row" else batch + (n,)

    def rows(self, args):
        """(batch index, row) pairs; a row holds float64 rows of the array args
        (integer labels of a ``target`` as one-hot rows), Python ints for
        ``label`` args (a tuple of ints for a layout-"all" sample), and the
        scalars as given (``flag`` as 0/1)."""
        args = canonical(self.q, args)
        batch, n = self.shapes(args)
        arrays, ints = {}, {}
        for a in self.q.args:
            if a.kind == "label":
                ints[a.name] = np.broadcast_to(np.asarray(args[a.name]), batch)
            elif a.kind == "target" and self._is_labels(a, args):
                arrays[a.name] = np.eye(n)[np.broadcast_to(np.asarray(args[a.name]), batch)]
            elif a.kind in ARRAY_KINDS:
                arrays[a.name] = np.broadcast_to(np.asarray(args[a.name], dtype=np.float64), batch + (n,))
        scalars = {a.name: (int(bool(args[a.name])) if a.kind == "flag" else args[a.name])
                   for a in self.q.args if a.kind in SCALAR_KINDS}
        for idx in np.ndindex(*batch):
            yield idx, {**scalars, **{k: v[idx] for k, v in arrays.items()},
                        **{k: structural_value(v[idx]) for k, v in ints.items()}}

    def _compiled(self, row) -> Compiled:
        n = len(row[self.q.array_args[0].name])
        return compile_definition(self.q, n, tuple(sorted(self.q.structure_of(row).items())))

    def _empty(self, row) -> bool:
        m = self.q.masking
        return m is not None and bool(np.all(np.asarray(row[m.arg], dtype=np.float64) == m.value))

    def _flat(self, c: Compiled, row):
        masked = self.q.masking.arg if self.q.masking is not None else None
        out = []
        for name, i in c.inputs:
            v = _mp(row[name][i] if i is not None else row[name])
            if name == masked and v == mpmath.ninf:
                # The limit x_i → −inf, evaluated at −10^400: e^{k·x_i} vanishes far beyond DPS
                # digits, while terms such as x_i·e^{k·x_i} (∂/∂k) stay 0 instead of NaN.
                v = _MASKED
            out.append(v)
        return out

    # -- per row --------------------------------------------------------------
    def dps(self, row) -> int:
        """Working digits for ``row``: DPS plus the decimal span of its finite
        nonzero inputs, plus the digits a cancellation inside the definition
        costs.  The latter is measured, not guessed: the row's values and
        Jacobian are evaluated once more with more digits (``_VERIFY``, or the span), and
        where the two disagree beyond 10^-(DPS-10) (relative; absolute below
        1e-340, where float64 holds nothing) the digits lost are added and the
        check repeats (CE = log(1 + e^-115) at logits [61, -54] keeps only
        ~14 of 64 digits: log of 1 + 1e-50); entries that are 0 at both precisions
        are checked once more far deeper, since log(1 + e^-217) is 0 at both 63 and 93
        digits but 6e-95 exactly (see :meth:`_digits_lost`).  Definitions with integral steps
        (``span_digits=False``) are computed to their quadrature's fixed
        accuracy instead (see :func:`_integral_step`)."""
        key = _key(self.q.name, row)
        if key in _DPS_CACHE:
            return _DPS_CACHE[key]
        vals = [abs(float(v)) for a in self.q.args if not a.structural
                for v in np.ravel(np.asarray(row[a.name], dtype=np.float64))]
        logs = [math.log10(v) for v in vals if v and math.isfinite(v)]
        span = int(max(logs) - min(logs)) + 1 if logs and self.q.span_digits else 0
        dps = DPS + span
        if self.q.span_digits and not self._empty(row):  # integral steps have a fixed accuracy: not re-checked
            c = self._compiled(row)
            for _ in range(3):
                lost = self._digits_lost(c, row, dps, max(_VERIFY, span))
                if lost <= 10:
                    break
                dps += lost if lost == _ABSORB else lost + 10
        if len(_DPS_CACHE) > _CACHE_SIZE:
            _DPS_CACHE.pop(next(iter(_DPS_CACHE)))
        _DPS_CACHE[key] = dps
        return dps

    def _entries(self, c, row, digits) -> list:
        """The row's values and Jacobian entries evaluated at ``digits`` digits."""
        with mpmath.workdps(digits):
            vals, jac = c.run(self._flat(c, row), with_steps=False)[:2]
            return list(vals) + [v for r in jac for v in r]

    def _digits_lost(self, c, row, dps, verify=_VERIFY) -> int:
        """DPS minus the correct digits of the row's values and Jacobian at ``dps`` digits,
        measured against an evaluation with ``verify`` more digits: at least the row's span, since
        a cancellation of second order needs twice the span (CE at logits [−inf, 1.3e-140] is
        x − log(e^x) = 0, but x²/2 = 8.6e-281 at any precision below 281 digits: 1 + x + x²/2
        rounds to 1 + x).

        Entries that are exactly 0 at both ``dps`` and ``dps + verify`` digits are checked
        once more at ``dps + _ABSORB``: a cancellation such as log(1 + e^-217) gives 0 at
        any precision below ~95 digits, and where the deep evaluation is not 0 every digit
        was lost (``_ABSORB`` is returned, so the caller moves to that precision)."""
        got = [self._entries(c, row, d) for d in (dps, dps + verify)]
        if any(a == 0 and b == 0 for a, b in zip(*got)):
            deep = self._entries(c, row, dps + _ABSORB)
            if any(a == 0 and b == 0 and abs(d) > _FLOOR for a, b, d in zip(*got, deep)):
                return _ABSORB
        with mpmath.workdps(dps + verify):
            worst = mpmath.mpf(0)
            for a, b in zip(*got):
                worst = max(worst, abs(a - b) / max(abs(b), _FLOOR))
            return 0 if worst == 0 else max(0, DPS + int(mpmath.ceil(mpmath.log10(worst))))

    def row_value(self, row):
        """(outputs, jacobian, step scale) of one row, as mpf (see Compiled.run)."""
        c = self._compiled(row)
        with mpmath.workdps(self.dps(row)):
            if self._empty(row):
                nout = 1 if self.q.output == "row" else len(row[self.q.array_args[0].name])
                zero = [mpmath.mpf(0)] * len(c.inputs)
                return [mpmath.mpf(self.q.masking.empty)] * nout, [zero] * nout, [mpmath.mpf(0)] * nout
            xs = self._flat(c, row)
            vals, jac, _, steps, _ = c.run(xs)
            return vals, jac, steps

    def _vjp_at(self, c, xs, w, wrt):
        """Σ_j w_j·J_ji for each entry i of ``wrt`` (:meth:`Compiled.jacobian`: no absolute Jacobian)."""
        D = c.jacobian(xs)[1]
        cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
        return [sum(_mp(wj) * D[o][col] for wj, o in zip(w, c.outputs)) for col in cols]

    def _vjp_and_scale_at(self, c, xs, w, wrt, factors=None):
        """Σ_j w_j·J_ji and the running-error scale Σ_j |w_j|·|J_ji|_abs, for each entry i of ``wrt``."""
        jac, jabs = c.run(xs, with_steps=False, factors=factors)[1:3]
        cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
        return ([sum(_mp(wj) * jac[j][col] for j, wj in enumerate(w)) for col in cols],
                [sum(abs(_mp(wj)) * jabs[j][col] for j, wj in enumerate(w)) for col in cols])

    # -- public -------------------------------------------------------------
    @_memoised
    def evaluate(self, args, rel_step=None):
        """Values (object array of mpf) and sensitivities (float64) in the output shape.

        Without ``rel_step`` the sensitivity is the first-order one, S = Σ_v |∂f/∂v|·|v| plus the
        reach of every intermediate step's own rounding (:meth:`Compiled.run`).  With ``rel_step``
        (C·eps of the dtype under test) it is at least its finite analogue Σ_v max_± |f(v ± h·v) −
        f(v)| / h probed at h = rel_step/2 (:meth:`probed_sensitivity`): where an output saturates
        (a softmax of huge arguments) the derivative is ~0 but a perturbation within the allowed
        backward error flips it, and first-order sensitivity would understate what the dtype can
        resolve.  Probing at half the allowed perturbation and dividing by it covers such a flip
        with a margin of 2 (a saturated output is a step: larger perturbations move it no further).

        The probes cost several evaluations per input and per intermediate step; the tolerance
        only grows with them, so a comparison that holds at the first-order sensitivity holds at
        this one too, and properties.checks asks for it only where that comparison fails."""
        val, first = self._first_order(args)
        if not rel_step or self.q.discrete:
            return val, first
        return val, np.maximum(first, self.probed_sensitivity(args, rel_step))

    @_memoised
    def _first_order(self, args):
        args = canonical(self.q, args)
        shape = self.output_shape(args)
        val = np.empty(shape, dtype=object)
        sens = np.zeros(shape, dtype=np.float64)
        for idx, row in self.rows(args):
            outs, jac, steps = self.row_value(row)
            c = self._compiled(row)
            absin = [mpmath.mpf(0) if v == _MASKED else abs(v) for v in self._flat(c, row)]
            for j, vj in enumerate(outs):
                key = idx if self.q.output == "row" else idx + (j,)
                val[key] = vj
                with mpmath.workdps(self.dps(row)):
                    sens[key] = float(sum(abs(d) * a for d, a in zip(jac[j], absin) if a != 0) + steps[j])
        return val, sens

    @_memoised
    def probed_sensitivity(self, args, rel_step):
        """The finite sensitivity of :meth:`evaluate` alone (float64, the output shape): each input v
        moved to v(1 ± h), then each intermediate step's value, h = rel_step/2."""
        args = canonical(self.q, args)
        out = np.zeros(self.output_shape(args), dtype=np.float64)
        for idx, row in self.rows(args):
            if self._empty(row):
                continue
            for j, t in enumerate(self._finite_sensitivity(self._compiled(row), row, rel_step)):
                out[idx if self.q.output == "row" else idx + (j,)] = t
        return out

    def _finite_sensitivity(self, c, row, rel_step):
        with mpmath.workdps(self.dps(row)):
            xs = self._flat(c, row)
            h = mpmath.mpf(rel_step) / 2
            # each input v moved to v(1 ± h), then each intermediate's own rounding
            base = c.environment(xs)
            outs = [base[o] for o in c.outputs]
            probes = [lambda f, sym=sym: c.moved(base, sym, f)
                      for sym, v in zip(c.symbols, xs) if v != _MASKED and v != 0]
            probes += [lambda f, t=t: c.moved(base, c.steps[t].symbol, f) for t in range(c.inner)]
            total = [mpmath.mpf(0)] * len(outs)
            for probe in probes:
                moved = []
                for sign in (1, -1):
                    try:
                        moved.append(probe(1 + sign * h))
                    except (ZeroDivisionError, ValueError):
                        # the moved input leaves the region this row's definition was compiled for
                        # (a half-precision step of 19 % turns a box's corner into the other one: a
                        # zero-width box, a union of 0): that side is not probed, the other one is
                        pass
                if moved:
                    total = [t + max(abs(m[j] - outs[j]) for m in moved) / h for j, t in enumerate(total)]
            return [float(t) for t in total]

    @_memoised
    def vjp(self, args, cotangent, wrt: str, rel_step=None):
        """Gradient of sum(cotangent * output) w.r.t. the vector arg ``wrt``
        (object array of mpf, shape of that arg) and its error scale: the
        sensitivity S_i = Σ_v |∂g_i/∂v|·|v| (by forward differences at DPS
        digits) plus the running-error scale Σ_j |w_j|·|J_ji|_abs (see
        :func:`absolute`) of the chain-rule sum itself, and — with
        ``rel_step`` — the finite effect of rounding each intermediate step
        (:meth:`probed_vjp_sensitivity`, as in :meth:`evaluate`: it only adds
        to the scale, so properties.checks asks for it only where the
        comparison at the scale without it fails)."""
        grad, scale = self._vjp_first_order(args, cotangent, wrt)
        if not rel_step:
            return grad, scale
        return grad, scale + self.probed_vjp_sensitivity(args, cotangent, wrt, rel_step)

    @_memoised
    def _vjp_first_order(self, args, cotangent, wrt: str):
        original, args = args, canonical(self.q, args)
        batch, n = self.shapes(args)
        w = np.broadcast_to(np.asarray(cotangent, dtype=np.float64), self.output_shape(args))
        grad = np.empty(batch + (n,), dtype=object)
        sens = np.zeros(batch + (n,), dtype=np.float64)
        for idx, row in self.rows(args):
            wrow = [w[idx]] if self.q.output == "row" else list(w[idx])
            if self._empty(row):
                grad[idx] = [mpmath.mpf(0)] * n
                continue
            c = self._compiled(row)
            dps = self.dps(row)
            with mpmath.workdps(dps):
                step = mpmath.mpf(10) ** (-(dps // 2))
                xs = self._flat(c, row)
                g0, total = self._vjp_and_scale_at(c, xs, wrow, wrt)
                cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
                for k, v in enumerate(xs):
                    if v == _MASKED or v == 0:
                        continue
                    h = v * step
                    g1 = self._vjp_at(c, xs[:k] + [v + h] + xs[k + 1:], wrow, wrt)
                    for i in range(n):
                        total[i] += abs((g1[i] - g0[i]) / h) * abs(v)
                if c.inner:
                    adj = c.adjoint_scale(xs, wrow)
                    for i, col in enumerate(cols):
                        total[i] += adj[col]
            for i in range(n):
                grad[idx + (i,)] = g0[i]
                sens[idx + (i,)] = float(total[i])
        return restore(self.q, original, grad), restore(self.q, original, sens)

    @_memoised
    def probed_vjp_sensitivity(self, args, cotangent, wrt: str, rel_step):
        """The finite effect on the gradient of rounding each intermediate step by ±rel_step/2
        (float64, the shape of ``wrt``): :meth:`vjp`'s scale with ``rel_step`` less its scale without."""
        original, args = args, canonical(self.q, args)
        batch, n = self.shapes(args)
        w = np.broadcast_to(np.asarray(cotangent, dtype=np.float64), self.output_shape(args))
        out = np.zeros(batch + (n,), dtype=np.float64)
        for idx, row in self.rows(args):
            if self._empty(row):
                continue
            c = self._compiled(row)
            if not c.inner:
                continue
            wrow = [w[idx]] if self.q.output == "row" else list(w[idx])
            cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
            ws = [_mp(wj) for wj in wrow]

            def vjp_of(rows):
                return [sum(wj * r[col] for wj, r in zip(ws, rows)) for col in cols]
            with mpmath.workdps(self.dps(row)):
                xs = self._flat(c, row)
                env, D = c.jacobian(xs)
                g0 = vjp_of([D[o] for o in c.outputs])
                hs = mpmath.mpf(rel_step) / 2
                total = [mpmath.mpf(0)] * n
                for t in range(c.inner):
                    moved = [vjp_of(c.moved_jacobian(env, D, t, 1 + sg * hs)) for sg in (1, -1)]
                    for i in range(n):
                        total[i] += max(abs(m[i] - g0[i]) for m in moved) / hs
            out[idx] = [float(t) for t in total]
        return restore(self.q, original, out)

    @_memoised
    def vjp_terms(self, args, cotangent, wrt: str):
        """The running-error scale of the gradient alone, Σ_j |w_j|·|J_ji|_abs per entry of ``wrt``
        (float64, that arg's shape; see :func:`absolute`): the size of the chain-rule terms a
        vector-Jacobian product is formed from, which its rounding is proportional to — without
        the input sensitivity S that :meth:`vjp` adds (properties.mixed holds an exact identity
        of the gradient to this, whatever the condition number)."""
        original, args = args, canonical(self.q, args)
        batch, n = self.shapes(args)
        w = np.broadcast_to(np.asarray(cotangent, dtype=np.float64), self.output_shape(args))
        out = np.zeros(batch + (n,), dtype=np.float64)
        for idx, row in self.rows(args):
            if self._empty(row):
                continue
            c = self._compiled(row)
            wrow = [w[idx]] if self.q.output == "row" else list(w[idx])
            with mpmath.workdps(self.dps(row)):
                xs = self._flat(c, row)
                terms = self._vjp_and_scale_at(c, xs, wrow, wrt)[1]
                if c.inner:
                    adj = c.adjoint_scale(xs, wrow)
                    cols = [k for k, (name, _) in enumerate(c.inputs) if name == wrt]
                    terms = [t + adj[col] for t, col in zip(terms, cols)]
            out[idx] = [float(t) for t in terms]
        return restore(self.q, original, out)

    # -- the definition with every intermediate step rounded ----------------------------
    def has_steps(self, args) -> bool:
        """Whether some row's definition has intermediate steps (``Compiled.inner``)."""
        return any(self._compiled(row).inner for _, row in self.rows(canonical(self.q, args)))

    def _rounded_rows(self, args, bits):
        """(batch index, row, compiled, flat inputs, rounding factors) per row; compiled,
        inputs and factors are None for an all-masked row."""
        for idx, row in self.rows(args):
            if self._empty(row):
                yield idx, row, None, None, None
                continue
            c = self._compiled(row)
            with mpmath.workdps(self.dps(row)):
                xs = self._flat(c, row)
                factors = c.rounding_factors(xs, bits)
            yield idx, row, c, xs, factors

    @_memoised
    def rounded(self, args, bits: int):
        """Values (object array of mpf) of the definition evaluated with every intermediate
        step's output rounded to ``bits`` significand bits (:meth:`Compiled.rounding_factors`).

        The error model charges each step a relative rounding; where an output hinges on
        differences below that resolution (two entries that one rounding makes equal) the
        first-order sensitivity and the probes at ±rel_step/2 of :meth:`evaluate` can miss
        what those roundings do.  This is one such evaluation, exactly: a witness that an
        implementation's result is that of the definition with admissible step roundings."""
        args = canonical(self.q, args)
        val = np.empty(self.output_shape(args), dtype=object)
        for idx, row, c, xs, factors in self._rounded_rows(args, bits):
            if c is None:
                outs = self.row_value(row)[0]
            else:
                with mpmath.workdps(self.dps(row)):
                    outs = c.values_only(xs, factors=factors)
            for j, vj in enumerate(outs):
                val[idx if self.q.output == "row" else idx + (j,)] = vj
        return val

    @_memoised
    def rounded_vjp(self, args, cotangent, wrt: str, bits: int):
        """The vector-Jacobian product of the definition with every intermediate step rounded
        to ``bits`` bits, the rounding factors held fixed: the exact gradient of the function
        that :meth:`rounded` evaluates, and its running-error scale there, Σ_j |w_j|·|J_ji|_abs
        (as in :meth:`vjp`): where a near-tie turned exact makes the chain-rule terms huge, an
        entry formed by their cancellation (soft_topk's argmin) is known only at that scale."""
        original, args = args, canonical(self.q, args)
        batch, n = self.shapes(args)
        w = np.broadcast_to(np.asarray(cotangent, dtype=np.float64), self.output_shape(args))
        grad = np.empty(batch + (n,), dtype=object)
        scale = np.zeros(batch + (n,), dtype=np.float64)
        for idx, row, c, xs, factors in self._rounded_rows(args, bits):
            wrow = [w[idx]] if self.q.output == "row" else list(w[idx])
            if c is None:
                grad[idx] = [mpmath.mpf(0)] * n
                continue
            with mpmath.workdps(self.dps(row)):
                g, total = self._vjp_and_scale_at(c, xs, wrow, wrt, factors=factors)
            for i in range(n):
                grad[idx + (i,)] = g[i]
                with np.errstate(over="ignore"):  # a scale beyond float64 is inf
                    scale[idx + (i,)] = float(total[i])
        return restore(self.q, original, grad), restore(self.q, original, scale)

    def value(self, **args):
        """Convenience: float64 values (for claims and reports)."""
        val, _ = self.evaluate(args)
        return np.vectorize(float, otypes=[np.float64])(val) if val.shape else np.float64(float(val[()]))
