"""Catalogue §1, smoothing primitives (seed 004: Su Jianlin, "On Function
Smoothing", 2019): logsumexp, softmax, soft_argmax, soft_topk.

Each definition is built for rows of n entries; claims are proved with SymPy
where SymPy can, on named symbolic instances where it cannot in general, and
otherwise stated as numerical claims that run on every implementation.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, Masking, NumericalClaim, Quantity, Shift, SymbolicClaim, exponent_size

SOURCE = "seed 004 (Su, 'On Function Smoothing', 2019); catalogue §1"
K = sp.Symbol("k", positive=True)
EPS64 = float(np.finfo(np.float64).eps)


def xs(n):
    return sp.symbols(f"x0:{n}", real=True)


# -- definitions ---------------------------------------------------------------
def lse_expr(x, k=K):
    return sp.log(sum(sp.exp(k * xi) for xi in x)) / k


def softmax_expr(x, k=K):
    e = [sp.exp(k * xi) for xi in x]
    s = sum(e)
    return [t / s for t in e]


def soft_argmax_expr(x, k=K):
    return sum(i * p for i, p in enumerate(softmax_expr(x, k)))


def soft_topk_expr(x, topk, argmin, k=K, step=None):
    """Seed 004's recursion. ``argmin`` resolves min(x) for the concrete
    input (the expression is smooth away from ties of the minimum);
    ``step`` replaces softmax (the hard variant uses onehot∘argmax)."""
    step = step or (lambda y: softmax_expr(y, k))
    z = [xi - x[argmin] for xi in x]
    p = [sp.Integer(0)] * len(x)
    for _ in range(topk):
        y = [(1 - pi) * zi for pi, zi in zip(p, z)]
        p = [pi + si for pi, si in zip(p, step(y))]
    return p


def _build_lse(n):
    x = xs(n)
    return Definition({"x": x, "k": K}, [lse_expr(x)])


def _build_softmax(n):
    x = xs(n)
    return Definition({"x": x, "k": K}, softmax_expr(x))


def _build_soft_argmax(n):
    x = xs(n)
    return Definition({"x": x, "k": K}, [soft_argmax_expr(x)])


def _build_soft_topk(n, topk, argmin):
    """The same recursion as :func:`soft_topk_expr`, one Definition step per
    line of the seed's algorithm (z = x − min x, each pass's denominator and
    p^(t)), so the reference differentiates small expressions and charges
    each intermediate its own rounding (see spec.reference.Compiled.run)."""
    x = xs(n)
    z = sp.symbols(f"z0:{n}")
    steps = list(zip(z, [xi - x[argmin] for xi in x]))
    p = [sp.Integer(0)] * n
    for t in range(1, topk + 1):
        new = sp.symbols(f"p{t}_0:{n}")
        y = [(1 - pi) * zi for pi, zi in zip(p, z)]
        s = sp.Symbol(f"s{t}")  # the pass's softmax denominator, one shared step
        steps.append((s, sum(sp.exp(K * yi) for yi in y)))
        steps += list(zip(new, [pi + sp.exp(K * yi) / s for pi, yi in zip(p, y)]))
        p = list(new)
    return Definition({"x": x, "k": K}, p, steps=steps)


def _topk_structure(x, topk, k=None):
    return {"topk": int(topk), "argmin": int(np.argmin(np.asarray(x, dtype=np.float64)))}


def _unique_min(x, topk=None, k=None):
    x = np.asarray(x, dtype=np.float64)
    m = x.min(axis=-1, keepdims=True)
    return bool(np.all((x == m).sum(axis=-1) == 1))


# -- symbolic claims -------------------------------------------------------------
def _ordered(n, anchored=False):
    """x_0 > x_1 > ... > x_{n-1} written as x_0 - (a_1 + ... + a_i), a_i > 0.

    ``anchored`` puts x_0 = 0: enough for the shift-invariant softmax,
    soft_argmax and soft_topk (claim shift_symbolic; soft_topk subtracts its min).
    """
    a = sp.symbols(f"a1:{n}", positive=True)
    x0 = sp.Integer(0) if anchored else sp.Symbol("x0", real=True)
    return [x0 - sum(a[:i]) for i in range(n)], x0


def claim_lse_limit():
    for n in (2, 3):
        x, x0 = _ordered(n)
        # Step 1 (identity): logsumexp(x) = x0 + logsumexp(x − x0), compared under exp.
        rest = lse_expr([sp.expand(xi - x0) for xi in x])
        identity = sp.simplify(sp.powsimp(sp.expand(sp.exp(sp.expand(K * (lse_expr(x) - x0))) - sp.exp(K * rest))))
        # Step 2 (squeeze): the argument of the log in `rest` is 1 + terms e^{−k·a} with
        # a > 0, each in (0, 1], so 0 ≤ rest ≤ log(n)/k → 0.
        terms = sp.Add.make_args(sp.exp(K * rest))
        in_unit = all(t == 1 or (sp.expand_log(sp.log(t), force=True).is_nonpositive and t.is_positive) for t in terms)
        if identity != 0 or not in_unit or sp.limit(sp.log(n) / K, K, sp.oo) != 0:
            return ClaimResult("refuted", f"n={n}: identity residue {identity}, terms in (0, 1]: {in_unit}", str(x))
    return ClaimResult("proved on instances",
                       "for n = 2 and n = 3 with symbolic x0 > x1 (> x2), written as x0 − a1 (− a2), a_i > 0: "
                       "logsumexp(x) = x0 + logsumexp(x − x0) (sympy, under exp), and logsumexp(x − x0) = "
                       "log(1 + Σ e^{−k·a})/k lies in [0, log(n)/k] because every e^{−k·a} is in (0, 1] (sympy "
                       "sign assumptions), so the limit k→∞ is x0 = max(x)")


def claim_lse_bounds():
    # For n = 2 with x0 ≥ x1: lse − max = log(1 + e^{k d})/k, d = x1 − x0 ≤ 0.
    d = sp.Symbol("d", nonpositive=True)
    g = sp.log(1 + sp.exp(K * d)) / K
    lower = sp.limit(g, d, -sp.oo)
    upper = g.subs(d, 0)
    increasing = sp.diff(g, d)
    ok = (lower == 0 and sp.simplify(upper - sp.log(2) / K) == 0 and increasing.is_positive)
    if not ok:
        return ClaimResult("refuted", f"n=2: lower {lower}, upper {upper}, derivative {increasing}")
    return ClaimResult("proved on instances",
                       "n = 2: lse − max = log(1 + e^{k d})/k with d = min − max ≤ 0 is increasing in d "
                       "(derivative e^{kd}/(1+e^{kd}) > 0), tends to 0 as d → −∞ and equals log(2)/k at d = 0; "
                       "general n is a numerical claim run on every implementation")


def claim_lse_gradient():
    for n in range(1, 5):
        x = xs(n)
        for i in range(n):
            if sp.simplify(sp.diff(lse_expr(x), x[i]) - softmax_expr(x)[i]) != 0:
                return ClaimResult("refuted", f"n={n}, i={i}")
    return ClaimResult("proved on instances", "sympy.diff(logsumexp, x_i) − softmax_i simplifies to 0 for n = 1..4")


def claim_shift():
    c = sp.Symbol("c", real=True)
    for n in range(1, 5):
        x = xs(n)
        shifted = [xi + c for xi in x]
        if sp.simplify(sp.expand_log(sp.simplify(lse_expr(shifted) - lse_expr(x) - c), force=True)) != 0:
            return ClaimResult("refuted", f"logsumexp shift, n={n}")
        if any(sp.simplify(a - b) != 0 for a, b in zip(softmax_expr(shifted), softmax_expr(x))):
            return ClaimResult("refuted", f"softmax shift, n={n}")
    return ClaimResult("proved on instances",
                       "logsumexp(x + c) − logsumexp(x) − c and softmax(x + c) − softmax(x) simplify to 0, n = 1..4")


def claim_softmax_sum():
    for n in range(1, 6):
        if sp.simplify(sum(softmax_expr(xs(n)))) != 1:
            return ClaimResult("refuted", f"n={n}")
    return ClaimResult("proved on instances", "sum of softmax simplifies to 1 for n = 1..5")


def claim_softmax_limit():
    for n in (2, 3):
        x, _ = _ordered(n, anchored=True)
        lims = [sp.limit(p, K, sp.oo) for p in softmax_expr(x)]
        if lims != [1] + [0] * (n - 1):
            return ClaimResult("refuted", f"n={n}: limits {lims}")
    return ClaimResult("proved on instances",
                       "limit k→∞ of softmax(x, k) is onehot(argmax) for n = 2, 3 with 0 = x0 > x1 (> x2) symbolic (x0 = 0 by shift invariance)")


def claim_soft_argmax_limit():
    for n in (2, 3):
        x, _ = _ordered(n, anchored=True)
        for perm in itertools.permutations(range(n)):
            y = [x[p] for p in perm]  # the maximum sits at index perm.index(0)
            lim = sp.limit(soft_argmax_expr(y), K, sp.oo)
            if lim != perm.index(0):
                return ClaimResult("refuted", f"n={n}, order {perm}: limit {lim}")
    return ClaimResult("proved on instances",
                       "limit k→∞ of soft_argmax is the (0-based) argmax for n = 2, 3, every position of the maximum (x0 = 0 by shift invariance)")


def claim_topk_sum():
    # Σ p^(t) = Σ p^(t−1) + Σ softmax(y^(t)), so it suffices (induction on the passes)
    # that every pass's softmax, at its own symbolic y^(t), sums to exactly 1.
    for n in range(1, 6):
        x = xs(n)
        for am in range(n):
            z = [xi - x[am] for xi in x]
            p = [sp.Integer(0)] * n
            for t in range(n):
                y = [(1 - pi) * zi for pi, zi in zip(p, z)]
                step = softmax_expr(y)
                if sp.cancel(sp.together(sum(step))) != 1:
                    return ClaimResult("refuted", f"n={n}, argmin={am}, pass {t + 1}")
                p = [pi + si for pi, si in zip(p, step)]
    return ClaimResult("proved on instances",
                       "by induction on the passes: at every pass t ≤ n the softmax of the symbolic y^(t) "
                       "sums to 1 (sympy.cancel), so Σ p = topk; n = 1..5, every argmin, every topk ≤ n")


def hard_topk(values, topk):
    """Seed 004's recursion with onehot(argmax) (first index on ties) in place of softmax."""
    def onehot_argmax(y):
        i = max(range(len(y)), key=lambda j: (y[j], -j))
        return [sp.Integer(int(j == i)) for j in range(len(y))]
    v = [sp.Integer(t) for t in values]
    return [int(p) for p in soft_topk_expr(v, topk, values.index(min(values)), step=onehot_argmax)]


def claim_topk_hard():
    """Exhaustive over orderings: the hard recursion depends only on the order of x."""
    failures = []
    for n in range(1, 6):
        for perm in itertools.permutations(range(n)):
            for topk in range(1, n + 1):
                got = hard_topk(list(perm), topk)
                want = [int(v >= n - topk) for v in perm]
                if got != want:
                    failures.append((list(perm), topk, got, want))
    inside = [f for f in failures if f[1] < len(f[0])]
    if inside:
        return ClaimResult("refuted", "fails even with topk < n", str(inside[0]))
    ex = failures[0] if failures else None
    return ClaimResult(
        "refuted" if failures else "proved on instances",
        "exhaustive over all orderings of n = 1..5 distinct values: the hard recursion is the exact "
        "top-k indicator for every topk < n, but not for topk = n: once every other entry is chosen "
        "the remaining y is all zeros (x − min(x) is 0 at the minimum, (1 − p) is 0 elsewhere) and "
        f"argmax picks an already chosen index ({len(failures)} of the topk = n cases fail)",
        None if ex is None else f"x = {ex[0]}, topk = {ex[1]}: recursion gives {ex[2]}, top-k indicator is {ex[3]}")


def claim_topk_le_one():
    from .reference import Reference  # local: reference imports nothing from here
    x, topk, k = np.array([10.0, 0.0]), 2, 1.0
    p = Reference(SOFT_TOPK).value(x=x, topk=topk, k=k)
    if p.max() > 1:
        return ClaimResult("refuted", "soft_topk entries can exceed 1: the second pass rewards the first "
                           "winner again because (1 − p)·x is small but not below the zero of the minimum",
                           f"soft_topk(x={x.tolist()}, topk={topk}, k={k}) = {p.tolist()}")
    return ClaimResult("proved on instances", "no counterexample at x=[10, 0]")


def claim_topk_limit():
    """k → ∞ on concrete instances (symbolic k): gruntz cannot order nested
    exponentials of symbolic gaps, so the entries are fixed integers."""
    cases = [((2, 1, 0), 1), ((2, 1, 0), 2), ((0, 3, 1), 1), ((0, 3, 1), 2), ((2, 1, 0), 3)]
    for values, topk in cases:  # every topk < n first, then topk = n
        x = [sp.Integer(v) for v in values]
        lim = [sp.limit(p, K, sp.oo) for p in soft_topk_expr(x, topk, values.index(min(values)))]
        want = [int(v >= sorted(values)[-topk]) for v in values]
        if lim != want:
            inside = topk < len(values)
            return ClaimResult(
                "refuted",
                ("fails even for topk < n" if inside else
                 "sympy.limit(k→∞) with symbolic k on x = (2, 1, 0) and (0, 3, 1): the top-k indicator for "
                 "every topk < n; for topk = n the last pass is a softmax of all zeros (x − min x is 0 at the "
                 "minimum, 1 − p → 0 elsewhere), which spreads 1/n over every entry"),
                f"x = {list(values)}, topk = {topk}: limit {lim}, top-k indicator {want}")
    return ClaimResult("proved on instances", "sympy.limit(k→∞) on x = (2, 1, 0) and (0, 3, 1), topk = 1..3")


# -- numerical claims (run on every implementation) -----------------------------------
# Tolerances: the claims are checked in float64, on inputs drawn from a
# dyadic grid (multiples of 2^-10, |x| ≤ 2^10) so that shifts are exact;
# each side carries at most ~(n + 8) roundings of quantities of size ≤ scale.
def _tol(n, scale):
    return 4.0 * (n + 8) * EPS64 * scale


def _max_and_gap(x):
    s = np.sort(x, axis=-1)
    return s[..., -1], (s[..., -1] - s[..., -2]) if x.shape[-1] > 1 else np.full(x.shape[:-1], np.inf)


def _check_lse_bounds(impl, x, k):
    n = x.shape[-1]
    v, m = impl(x=x, k=k), x.max(axis=-1)
    scale = np.abs(x).max(axis=-1) + np.log(n) / k
    return [Comparison(np.minimum(v - m, 0), 0 * v, _tol(n, scale), "logsumexp − max ≥ 0"),
            Comparison(np.maximum(v - m - np.log(n) / k, 0), 0 * v, _tol(n, scale), "logsumexp ≤ max + log(n)/k")]


def _check_lse_shift(impl, x, k, shift):
    n = x.shape[-1]
    scale = np.abs(x).max(axis=-1) + abs(shift) + np.log(n) / k
    return [Comparison(impl(x=x + shift, k=k) - shift, impl(x=x, k=k), 2 * _tol(n, scale), "logsumexp(x + c) − c = logsumexp(x)")]


def _check_softmax_sum(impl, x, k):
    n = x.shape[-1]
    return [Comparison(impl(x=x, k=k).sum(axis=-1), np.ones(x.shape[:-1]), _tol(n, 1.0), "Σ softmax = 1")]


def _check_softmax_shift(impl, x, k, shift):
    n = x.shape[-1]
    # softmax is relatively conditioned by k·|x|: a shift changes the rounding of x − max by ≤ eps·|x|
    scale = 1.0 + k * (np.abs(x).max(axis=-1, keepdims=True) + abs(shift))
    return [Comparison(impl(x=x + shift, k=k), impl(x=x, k=k), 2 * _tol(n, scale), "softmax(x + c) = softmax(x)")]


def _sharp_k(x):
    _, gap = _max_and_gap(x)
    return float(60.0 / np.min(gap))  # k·gap ≥ 60: the limit is reached up to (n−1)e^{−60} ≈ 1e-26·n


def _check_softmax_limit(impl, x, **_):
    n = x.shape[-1]
    k = _sharp_k(x)
    onehot = (x == x.max(axis=-1, keepdims=True)).astype(float)
    return [Comparison(impl(x=x, k=k), onehot, (n - 1) * np.exp(-60.0) + _tol(n, 1.0), f"softmax(x, k={k:.3g}) ≈ onehot(argmax x)")]


def _check_soft_argmax_limit(impl, x, **_):
    n = x.shape[-1]
    k = _sharp_k(x)
    return [Comparison(impl(x=x, k=k), x.argmax(axis=-1).astype(float), (n - 1) ** 2 * np.exp(-60.0) + _tol(n, n),
                       f"soft_argmax(x, k={k:.3g}) ≈ argmax x")]


def _check_soft_argmax_range(impl, x, k):
    n = x.shape[-1]
    v = impl(x=x, k=k)
    return [Comparison(np.clip(v, 0, n - 1), v, _tol(n, n), "0 ≤ soft_argmax ≤ n − 1")]


def _check_topk_sum(impl, x, topk, k):
    n = x.shape[-1]
    return [Comparison(impl(x=x, topk=topk, k=k).sum(axis=-1), np.full(x.shape[:-1], float(topk)),
                       topk * _tol(n, 1.0 * n), "Σ soft_topk = topk")]


def _check_topk_limit(impl, x, topk, **_):
    s = np.sort(x, axis=-1)
    gap = np.min(np.diff(s, axis=-1))
    span = float(np.max(s[..., -1] - s[..., 0]))
    # k·gap = 200 makes every pass one-hot up to n·e^{−200·(gap − p-leak)}; the
    # leak (1 − p)·x of an already chosen entry is ≤ n·e^{−200}·span, far below gap.
    k = 200.0 / gap
    cutoff = np.sort(x, axis=-1)[..., -topk][..., None]
    want = (x >= cutoff).astype(float)
    return [Comparison(impl(x=x, topk=topk, k=k), want, 1e-9 * (1 + span),
                       f"soft_topk(x, topk, k={k:.3g}) ≈ top-k indicator")]


def _distinct(x, **_):
    x = np.asarray(x)
    if x.shape[-1] < 2:
        return False
    s = np.sort(x, axis=-1)
    return bool(np.all(np.diff(s, axis=-1) > 0))


def _distinct_topk_lt_n(x, topk, **_):
    return _distinct(x) and topk < x.shape[-1]


# -- images and invariances (the mixed forward–backward criterion: spec.quantity.Image, Shift) --
def _lse_lo(x, **_):
    return np.max(np.asarray(x, dtype=np.float64), axis=-1)


def _lse_hi(x, k=1.0, **_):
    return _lse_lo(x) + np.log(np.shape(x)[-1]) / k


def _softmax_total(x, **_):  # an all-masked row is 0 everywhere (the masking convention)
    return np.where(np.isneginf(np.asarray(x, dtype=np.float64)).all(axis=-1), 0.0, 1.0)


def _k_exponent(x, k=1.0, **_):
    return exponent_size(x, k)


def _topk_exponent(x, topk=1, k=1.0, **_):  # y = (1 − p)·(x − min x) with 0 ≤ p ≤ topk
    x = np.asarray(x, dtype=np.float64)
    return k * max(int(topk), 1) * (x.max(axis=-1) - x.min(axis=-1))


_ROW_SHIFT = {"x": None}
_LSE_SHIFT = Shift("logsumexp(x + c) = logsumexp(x) + c, so Σ_i ∂/∂x_i = 1 (the gradient is a softmax)",
                   _ROW_SHIFT, 1.0, _k_exponent)
_SOFTMAX_SHIFT = Shift("softmax(x + c) = softmax(x), so Σ_i ∂/∂x_i = 0", _ROW_SHIFT, 0.0, _k_exponent)

_X = Arg("x", "vector", doc="values; the last axis is reduced")
_K = Arg("k", "positive", 1.0, doc="sharpness k > 0 (1/temperature)")
_TOPK = Arg("topk", "count", doc="number of entries to select, 1 ≤ topk ≤ n")
_INVALID = {
    "k": (0.0, -1.0, float("nan"), float("inf")),
    "x": ("integer array", "0-d array"),
}
_MASK_NOTE = ("x_i = −inf is masked: it contributes nothing; an all −inf row gives the empty value "
              "with a zero (never NaN) gradient — stricter than torch.logsumexp and jax.nn.logsumexp")

LOGSUMEXP = Quantity(
    name="logsumexp", family="smoothing",
    summary="smooth maximum",
    formula="(1/k) · log Σ_i exp(k·x_i)",
    args=(_X, _K), output="row", build=_build_lse,
    masking=Masking("x", float("-inf")),
    conventions=(_MASK_NOTE + "; empty value −inf",),
    reference=SOURCE, invalid=_INVALID,
    image=Image("max x ≤ logsumexp(x, k) ≤ max x + log(n)/k", _lse_lo, _lse_hi),
    shifts=(_LSE_SHIFT,),
    claims=(
        SymbolicClaim("limit_max", "lim_{k→∞} logsumexp(x, k) = max(x)", claim_lse_limit, SOURCE),
        SymbolicClaim("bounds_symbolic", "max(x) ≤ logsumexp(x, k) ≤ max(x) + log(n)/k", claim_lse_bounds, SOURCE),
        SymbolicClaim("gradient_is_softmax", "∂ logsumexp/∂x = softmax(x, k)", claim_lse_gradient, SOURCE),
        SymbolicClaim("shift_symbolic", "logsumexp(x + c) = logsumexp(x) + c; softmax(x + c) = softmax(x)", claim_shift, SOURCE),
        NumericalClaim("bounds", "max(x) ≤ logsumexp(x, k) ≤ max(x) + log(n)/k", _check_lse_bounds,
                       "4(n+8) float64 eps × (max|x| + log(n)/k): the roundings of x − max, exp, sum and log", source=SOURCE),
        NumericalClaim("shift", "logsumexp(x + c, k) = logsumexp(x, k) + c", _check_lse_shift,
                       "twice the bounds tolerance (two evaluations); grid inputs make x + c exact",
                       extra={"shift": "shift"}, source=SOURCE),
    ),
)

SOFTMAX = Quantity(
    name="softmax", family="smoothing",
    summary="smooth onehot(argmax)",
    formula="exp(k·x_i) / Σ_j exp(k·x_j)",
    args=(_X, _K), output="vector", build=_build_softmax,
    masking=Masking("x", 0.0),
    conventions=(_MASK_NOTE + "; empty value 0 everywhere",),
    reference=SOURCE, invalid=_INVALID,
    image=Image("a probability vector: entries in [0, 1] summing to 1 (0 on an all-masked row)", 0.0, 1.0,
                row_sum=_softmax_total, exponent=_k_exponent),
    shifts=(_SOFTMAX_SHIFT,),
    claims=(
        SymbolicClaim("sum_one", "Σ_i softmax(x, k)_i = 1", claim_softmax_sum, SOURCE),
        SymbolicClaim("limit_onehot", "lim_{k→∞} softmax(x, k) = onehot(argmax x), unique maximum", claim_softmax_limit, SOURCE),
        NumericalClaim("sum", "Σ_i softmax(x, k)_i = 1", _check_softmax_sum,
                       "4(n+8) float64 eps: n terms ≤ 1 summed, each with O(1) roundings", source=SOURCE),
        NumericalClaim("shift", "softmax(x + c, k) = softmax(x, k)", _check_softmax_shift,
                       "2·4(n+8) eps × (1 + k·max|x + c|): exp amplifies the absolute rounding of k(x − max)",
                       extra={"shift": "shift"}, source=SOURCE),
        NumericalClaim("onehot_limit", "softmax(x, k) → onehot(argmax x) as k → ∞ (distinct values)",
                       _check_softmax_limit, "the limit is reached up to (n−1)e^{−60} at k = 60/gap, plus rounding",
                       precondition=_distinct, source=SOURCE),
    ),
)

SOFT_ARGMAX = Quantity(
    name="soft_argmax", family="smoothing",
    summary="smooth argmax (0-based)",
    formula="Σ_i i · softmax(x, k)_i",
    args=(_X, _K), output="row", build=_build_soft_argmax,
    masking=Masking("x", 0.0),
    conventions=(_MASK_NOTE + "; empty value 0", "indices are 0-based (seed 004 counts from 1)"),
    reference=SOURCE, invalid=_INVALID,
    image=Image("a convex combination of the indices 0..n−1", 0.0, lambda x, **_: np.shape(x)[-1] - 1.0),
    shifts=(_SOFTMAX_SHIFT,),
    claims=(
        SymbolicClaim("limit_argmax", "lim_{k→∞} soft_argmax(x, k) = argmax x, unique maximum", claim_soft_argmax_limit, SOURCE),
        NumericalClaim("range", "0 ≤ soft_argmax(x, k) ≤ n − 1", _check_soft_argmax_range,
                       "4(n+8) eps × n: a convex combination of 0..n−1", source=SOURCE),
        NumericalClaim("argmax_limit", "soft_argmax(x, k) → argmax x as k → ∞ (distinct values)",
                       _check_soft_argmax_limit, "(n−1)² e^{−60} at k = 60/gap, plus rounding",
                       precondition=_distinct, source=SOURCE),
    ),
)

SOFT_TOPK = Quantity(
    name="soft_topk", family="smoothing",
    summary="smooth top-k indicator (seed 004's recursion)",
    formula="x ← x − min x; p ← 0; repeat topk times: y = (1 − p)·x, p ← p + softmax(y, k)",
    args=(_X, _TOPK, _K), output="vector", build=_build_soft_topk,
    structure=_topk_structure, differentiable=_unique_min, passes=lambda topk, **_: topk,
    conventions=("finite inputs only (no masking)",
                 "not differentiable where the minimum of x is tied: the gradient property skips such rows",
                 "entries can exceed 1 (see claim entries_le_one)"),
    reference=SOURCE,
    invalid={**_INVALID, "topk": (0, "n + 1", 1.5)},
    image=Image("topk passes of a softmax: entries in [0, topk] summing to topk", 0.0,
                lambda topk, **_: float(topk), row_sum=lambda topk, **_: float(topk),
                exponent=_topk_exponent),
    shifts=(Shift("soft_topk(x + c) = soft_topk(x): the recursion starts from x − min x", _ROW_SHIFT, 0.0, _topk_exponent),),
    claims=(
        SymbolicClaim("sum_topk", "Σ_i soft_topk(x, topk, k)_i = topk", claim_topk_sum, SOURCE),
        SymbolicClaim("hard_is_topk", "with onehot(argmax) in place of softmax the recursion is the top-k indicator",
                      claim_topk_hard, SOURCE),
        SymbolicClaim("limit_topk", "soft_topk → top-k indicator as k → ∞ (distinct values)", claim_topk_limit, SOURCE),
        SymbolicClaim("entries_le_one", "every soft_topk entry is ≤ 1", claim_topk_le_one, "catalogue §1 (open question)"),
        NumericalClaim("sum", "Σ_i soft_topk(x, topk, k)_i = topk", _check_topk_sum,
                       "topk passes, each a softmax summing to 1 within 4(n+8) eps·n", source=SOURCE),
        NumericalClaim("topk_limit", "soft_topk(x, topk, k) → top-k indicator as k → ∞ (distinct values, topk < n)",
                       _check_topk_limit, "1e-9·(1 + span): the limit error is below n·e^{−100}; rounding of (1 − p)·x is ≤ eps·span",
                       precondition=_distinct_topk_lt_n, source=SOURCE),
    ),
)

QUANTITIES = (LOGSUMEXP, SOFTMAX, SOFT_ARGMAX, SOFT_TOPK)
