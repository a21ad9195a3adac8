"""Catalogue §6, ranking (seed 001, "optimizing directly for the metric"):
auc (Wilcoxon–Mann–Whitney, ties count ½) and its sigmoid surrogate soft_auc.

Both are written per row of n scores with binary labels (at least one
positive and one negative per row): a mean over the (positive i, negative j)
pairs, weighted by l_i·(1 − l_j).
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, NumericalClaim, Quantity, Shift, SymbolicClaim, exponent_size

SOURCE = "seed 001 ('optimizing directly for the metric', AUC); catalogue §6"
TAU = sp.Symbol("tau", positive=True)
EPS64 = float(np.finfo(np.float64).eps)


def ss(n):
    return sp.symbols(f"s0:{n}", real=True)


def ls(n):
    return sp.symbols(f"l0:{n}", real=True)


# -- definitions ---------------------------------------------------------------
def heaviside(d):
    """H(d) = 1 for d > 0, ½ at d = 0, 0 for d < 0 (ties count ½)."""
    return sp.Piecewise((1, d > 0), (sp.Rational(1, 2), sp.Eq(d, 0)), (0, True))


def sigmoid(x):
    return 1 / (1 + sp.exp(-x))


def pair_mean(s, y, kernel):
    """Σ_{i≠j} l_i (1 − l_j) kernel(s_i − s_j) / (Σ l · Σ (1 − l)); i = j has weight l_i(1 − l_i) = 0 for 0/1 labels."""
    n = len(s)
    num = sum((y[i] * (1 - y[j]) * kernel(s[i] - s[j]) for i in range(n) for j in range(n) if i != j), sp.Integer(0))
    return num / (sum(y) * sum(1 - yi for yi in y))


def auc_expr(s, y):
    return pair_mean(s, y, heaviside)


def soft_auc_expr(s, y, tau=TAU):
    return pair_mean(s, y, lambda d: sigmoid(d / tau))


def _build_auc(n):
    s, y = ss(n), ls(n)
    return Definition({"scores": s, "labels": y}, [auc_expr(s, y)])


def _build_soft_auc(n):
    s, y = ss(n), ls(n)
    return Definition({"scores": s, "labels": y, "tau": TAU}, [soft_auc_expr(s, y)])


# -- symbolic claims -------------------------------------------------------------
def labellings(n):
    """Every 0/1 labelling of n entries with at least one of each."""
    return [lab for lab in itertools.product((0, 1), repeat=n) if 0 < sum(lab) < n]


def weak_orders(n):
    """Every arrangement of n scores up to ties: s_i = x0 + a_1 + … + a_{level(i)}, a > 0 symbolic."""
    a = sp.symbols(f"a1:{n}", positive=True)
    x0 = sp.Symbol("x0", real=True)
    levels = [x0 + sum(a[:k]) for k in range(n)]
    for f in itertools.product(range(n), repeat=n):
        if set(f) == set(range(max(f) + 1)):
            yield f, [levels[v] for v in f]


def _limit_lemma():
    """lim_{τ→0⁺} σ(d/τ) for d > 0, d < 0 and d = 0, by sympy.limit on a symbol of that sign."""
    d_pos, d_neg = sp.Symbol("d", positive=True), sp.Symbol("d", negative=True)
    return {1: sp.limit(sigmoid(d_pos / TAU), TAU, 0, "+"), -1: sp.limit(sigmoid(d_neg / TAU), TAU, 0, "+"),
            0: sp.limit(sigmoid(sp.Integer(0) / TAU), TAU, 0, "+")}


def _sign(d):
    """The sign of d as sympy's assumptions decide it (ValueError when they cannot)."""
    if d == 0:
        return 0
    if d.is_positive:
        return 1
    if d.is_negative:
        return -1
    raise ValueError(f"sign of {d} unknown")


def claim_limit():
    lemma = _limit_lemma()
    if [lemma[1], lemma[-1], lemma[0]] != [1, 0, sp.Rational(1, 2)]:
        return ClaimResult("refuted", f"lim σ(d/τ) for d > 0, d < 0, d = 0: {lemma}")
    count = 0
    for n in (3, 4):
        for f, s in weak_orders(n):
            for lab in labellings(n):
                # limit of a finite sum = sum of the pairwise limits (each exists by the lemma)
                lim = pair_mean(s, lab, lambda d: lemma[_sign(d)])
                if sp.simplify(lim - auc_expr(s, lab)) != 0:
                    return ClaimResult("refuted", f"n={n}, order {f}, labels {lab}: limit {lim}",
                                       f"levels {f}, labels {lab}")
                count += 1
    return ClaimResult("proved on instances",
                       "lemma (general d): sympy.limit_{τ→0⁺} σ(d/τ) = 1, 0, ½ for d > 0, d < 0, d = 0; instances: "
                       f"n = 3 and 4, every arrangement of the scores up to ties (symbolic gaps a > 0) and every "
                       f"labelling with a positive and a negative ({count} cases): the limit of soft_auc, taken "
                       "pair by pair (a finite sum of convergent terms), equals auc with ties as ½ exactly")


def claim_soft_complement():
    a = sp.Symbol("a", real=True)
    if sp.simplify(sigmoid(a) + sigmoid(-a) - 1) != 0:
        return ClaimResult("refuted", "σ(a) + σ(−a) ≠ 1")
    for n in (2, 3, 4, 5):
        # s_k = τ·log u_k with u_k = e^{s_k/τ} > 0 ranging over all positives as s_k ranges over the
        # reals: σ((s_i − s_j)/τ) = u_i/(u_i + u_j), so the identity is one of rational functions.
        u = sp.symbols(f"u0:{n}", positive=True)
        s = [TAU * sp.log(uk) for uk in u]
        for lab in labellings(n):
            total = soft_auc_expr(s, lab) + soft_auc_expr(s, [1 - v for v in lab])
            if sp.cancel(total - 1) != 0:
                return ClaimResult("refuted", f"n={n}, labels {lab}: sum {sp.simplify(total)}", str(lab))
    return ClaimResult("proved on instances",
                       "σ(a) + σ(−a) = 1 (sympy, general a); soft_auc(s, l) + soft_auc(s, 1 − l) − 1 cancels to 0 "
                       "for n = 2..5 and every labelling with a positive and a negative, with s_k = τ·log u_k "
                       "(u_k = e^{s_k/τ} > 0 symbolic, a bijection onto the positives), where σ((s_i − s_j)/τ) = "
                       "u_i/(u_i + u_j): flipping the labels transposes the pair set, so each σ(d/τ) meets σ(−d/τ)")


def claim_auc_complement():
    cases = [heaviside(v) + heaviside(-v) for v in (sp.Symbol("d", positive=True), sp.Symbol("d", negative=True),
                                                    sp.Integer(0))]
    if cases != [1, 1, 1]:
        return ClaimResult("refuted", f"H(d) + H(−d) for d > 0, d < 0, d = 0: {cases}")
    count = 0
    for n in (2, 3, 4):
        for f, s in weak_orders(n):
            for lab in labellings(n):
                total = auc_expr(s, lab) + auc_expr(s, [1 - v for v in lab])
                if sp.simplify(total) != 1:
                    return ClaimResult("refuted", f"n={n}, order {f}, labels {lab}: sum {total}", f"{f}, {lab}")
                count += 1
    return ClaimResult("proved on instances",
                       "H(d) + H(−d) = 1 for d > 0, d < 0 and d = 0 (the Piecewise decided by sympy's sign "
                       f"assumptions); auc(s, l) + auc(s, 1 − l) = 1 on n = 2, 3, 4, every arrangement up to ties and "
                       f"every labelling ({count} cases)")


#: strictly increasing maps of the invariance claims: (sympy form, NumPy form)
MAPS = {
    "2s + 1": (lambda x: 2 * x + 1, lambda s: 2 * s + 1),
    "1024s + 3": (lambda x: 1024 * x + 3, lambda s: s * 1024 + 3),
    "s³ + 2s": (lambda x: x ** 3 + 2 * x, lambda s: s ** 3 + 2 * s),
    "arctan(s)": (sp.atan, np.arctan),
}


def claim_invariance():
    # (1) the definition reads the scores only through H(s_i − s_j)
    for n in range(2, 6):
        s, y = ss(n), ls(n)
        expr = auc_expr(s, y)
        hs = {heaviside(s[i] - s[j]): sp.Symbol(f"H_{i}_{j}") for i in range(n) for j in range(n) if i != j}
        if not expr.atoms(sp.Piecewise) <= set(hs):
            return ClaimResult("refuted", f"n={n}: a Piecewise that is not H(s_i − s_j)")
        if expr.xreplace(hs).free_symbols & set(s):
            return ClaimResult("refuted", f"n={n}: scores appear outside H(s_i − s_j)")
    # (2) the maps of the numerical claim are strictly increasing: g' > 0 everywhere
    x = sp.Symbol("x", real=True)
    for name, (g, _) in MAPS.items():
        slope = sp.diff(g(x), x)
        if not slope.is_positive:
            return ClaimResult("refuted", f"{name}: derivative {slope} not provably positive")
    return ClaimResult("proved",
                       "auc's definition reads the scores only through H(s_i − s_j) (checked structurally for "
                       "n = 2..5: replacing every H by a symbol leaves no score symbol; build(n) wraps every score "
                       "difference in H for every n), and H(g(a) − g(b)) = H(a − b) for strictly increasing g is "
                       "the definition of strictly increasing (a > b ⇒ g(a) > g(b), a = b ⇒ g(a) = g(b), a < b ⇒ "
                       "g(a) < g(b)); the maps of the numerical claim (" + ", ".join(MAPS) + ") have derivatives "
                       "that sympy proves positive on the reals, hence are strictly increasing")


# -- numerical claims (run on every implementation) -----------------------------------
# Claim-regime scores: multiples of 2^-10 with |s| ≤ 2^10, distinct within a row.
# Ties are made on purpose by tie(): floor(s/256)·256 ∈ {−1024, −768, …, 1024}.
def tie(s):
    return np.floor(s / 256.0) * 256.0


def wmw_numpy(s, labels):
    """AUC from the definition: mean over (positive i, negative j) of 1[s_i > s_j] + ½·1[s_i = s_j]."""
    d = s[..., :, None] - s[..., None, :]
    h = np.where(d > 0, 1.0, np.where(d == 0, 0.5, 0.0))
    w = labels[..., :, None] * (1 - labels[..., None, :])
    return (w * h).sum(axis=(-2, -1)) / (labels.sum(axis=-1) * (1 - labels).sum(axis=-1))


def _tol_pairs(n):
    """A mean of ≤ n²/4 pair terms in [0, 1], each with a few roundings: 4(n² + 8) eps."""
    return 4.0 * (n * n + 8) * EPS64


def _check_soft_limit(impl, scores, labels, **_):
    n = scores.shape[-1]
    out = []
    for what, s in (("distinct scores", scores), ("tied scores floor(s/256)·256", tie(scores))):
        d = np.abs(s[..., :, None] - s[..., None, :])
        gaps = d[d > 0]
        t = float(1e-6 * (gaps.min() if gaps.size else 1.0))
        out.append(Comparison(impl(scores=s, tau=t), wmw_numpy(s, labels), _tol_pairs(n),
                              f"soft_auc(s, l, τ = {t:.3g}) = auc(s, l) with ties as ½, {what}"))
    return out


def _check_complement(impl, scores, labels, **kw):
    n = scores.shape[-1]
    return [Comparison(impl(scores=s, labels=1 - labels) + impl(scores=s), np.ones(scores.shape[:-1]), 2 * _tol_pairs(n),
                       f"impl(s, 1 − l) + impl(s, l) = 1, {what}")
            for what, s in (("distinct scores", scores), ("tied scores floor(s/256)·256", tie(scores)))]


def _check_range(impl, scores, labels, **kw):
    n = scores.shape[-1]
    v = impl()
    return [Comparison(np.clip(v, 0.0, 1.0), v, _tol_pairs(n), "0 ≤ value ≤ 1")]


def _check_invariance(impl, scores, labels):
    out = []
    for what, s in (("distinct scores", scores), ("tied scores floor(s/256)·256", tie(scores))):
        base = impl(scores=s)
        for name, (_, g) in MAPS.items():
            out.append(Comparison(impl(scores=g(s)), base, 0.0, f"auc(g(s), l) = auc(s, l), g(s) = {name}, {what}"))
    return out


def _check_ties(impl, scores, labels):
    n = scores.shape[-1]
    s = tie(scores)
    return [Comparison(impl(scores=s), wmw_numpy(s, labels), _tol_pairs(n),
                       "auc at tied scores floor(s/256)·256 = the Wilcoxon–Mann–Whitney mean with ties as ½")]


_SCORES_NOGRAD = Arg("scores", "vector", grad=False, doc="scores; the last axis holds the items ranked")
_SCORES = Arg("scores", "vector", doc="scores; the last axis holds the items ranked")
_LABELS = Arg("labels", "binary", doc="0/1 labels, at least one positive and one negative per row")
_TAU = Arg("tau", "positive", 1.0, doc="temperature τ > 0 of the sigmoid")
_LABEL_INVALID = ["value 2", "no positive", "no negative", "wrong shape"]
_TOL_PAIRS = "4(n² + 8) eps: a mean of ≤ n²/4 pair terms in [0, 1], each with a few roundings"
_EXACT_MAPS = ("exact (tolerance 0): auc reads the scores only through comparisons, so equal order patterns give "
               "bit-identical results; 2s + 1 and 1024s + 3 are exact on the grid (numerators < 2^53); s³ + 2s "
               "and arctan(s) keep strict order in float64: grid neighbours differ by 2^-10, so g(b) − g(a) ≥ "
               "2·2^-10 for s³ + 2s against roundings ≤ 2^-21 (|g| ≤ 2^31), and ≥ 2^-10/(1 + 2^20) ≈ 9e-10 for "
               "arctan against a few ulps of π/2 (≈ 2e-16); ties stay ties under any function")

AUC = Quantity(
    name="auc", family="ranking",
    summary="area under the ROC curve (Wilcoxon–Mann–Whitney), ties count ½",
    formula="Σ_{i,j} l_i (1 − l_j) H(s_i − s_j) / (Σ l · Σ (1 − l)), H(d) = 1 (d > 0), ½ (d = 0), 0 (d < 0)",
    args=(_SCORES_NOGRAD, _LABELS), output="row", build=_build_auc,
    conventions=("ties between a positive and a negative count ½",
                 "every row needs at least one positive and one negative (ValueError otherwise)",
                 "not differentiable: no gradient is part of the contract (use soft_auc)",
                 "a good implementation is O(n log n) (sort and ranks), not O(P·N)"),
    reference=SOURCE,
    invalid={"labels": _LABEL_INVALID, "scores": ["integer array"]},
    image=Image("a fraction of pairs: in [0, 1]", 0.0, 1.0),
    claims=(
        SymbolicClaim("complement_symbolic", "auc(s, 1 − l) = 1 − auc(s, l)", claim_auc_complement, SOURCE),
        SymbolicClaim("invariance_symbolic", "auc(g(s), l) = auc(s, l) for every strictly increasing g",
                      claim_invariance, SOURCE),
        NumericalClaim("invariance", "auc(g(s), l) = auc(s, l) for g = 2s + 1, 1024s + 3, s³ + 2s, arctan",
                       _check_invariance, _EXACT_MAPS, source=SOURCE),
        NumericalClaim("range", "0 ≤ auc ≤ 1", _check_range, _TOL_PAIRS, source=SOURCE),
        NumericalClaim("complement", "auc(s, 1 − l) + auc(s, l) = 1, with and without ties", _check_complement,
                       "twice " + _TOL_PAIRS, source=SOURCE),
        NumericalClaim("ties_half", "at tied scores auc is the Wilcoxon–Mann–Whitney mean with ties as ½",
                       _check_ties, _TOL_PAIRS + "; the NumPy mean has the same bound", source="catalogue §6"),
    ),
    discrete=True,
)

SOFT_AUC = Quantity(
    name="soft_auc", family="ranking",
    summary="sigmoid surrogate of the AUC",
    formula="Σ_{i,j} l_i (1 − l_j) σ((s_i − s_j)/τ) / (Σ l · Σ (1 − l))",
    args=(_SCORES, _LABELS, _TAU), output="row", build=_build_soft_auc,
    conventions=("every row needs at least one positive and one negative (ValueError otherwise)",
                 "τ → 0⁺ gives auc with ties as ½ (σ(0) = ½)",
                 "gradients w.r.t. scores only (labels are integers, τ is a hyperparameter)"),
    reference=SOURCE,
    invalid={"labels": _LABEL_INVALID, "tau": [0.0, -1.0, float("inf"), float("nan")], "scores": ["integer array"]},
    image=Image("a mean of sigmoids: in [0, 1]", 0.0, 1.0),
    shifts=(Shift("soft AUC depends on the scores only through s_i − s_j, so Σ_i ∂/∂s_i = 0", {"scores": None}, 0.0,
                  lambda scores, tau=1.0, **_: exponent_size(scores, 1.0 / tau)),),
    claims=(
        SymbolicClaim("limit_auc", "soft_auc(s, l, τ) → auc(s, l) as τ → 0⁺, ties included", claim_limit, SOURCE),
        SymbolicClaim("complement_symbolic", "soft_auc(s, l) + soft_auc(s, 1 − l) = 1", claim_soft_complement, SOURCE),
        NumericalClaim("auc_limit", "soft_auc(s, l, τ = 1e-6·smallest gap) = auc(s, l), with and without ties",
                       _check_soft_limit,
                       "4(n² + 8) eps: at |d|/τ ≥ 1e6 σ rounds to exactly 0 or 1 (e^{−1e6} underflows) and σ(0) = ½ "
                       "exactly, so only the mean's roundings remain; the expected value is computed in NumPy from "
                       "the definition", source=SOURCE),
        NumericalClaim("complement", "soft_auc(s, 1 − l) + soft_auc(s, l) = 1, with and without ties",
                       _check_complement, "twice " + _TOL_PAIRS + " (each σ within a few ulps of a value ≤ 1)",
                       source=SOURCE),
        NumericalClaim("range", "0 ≤ soft_auc ≤ 1", _check_range, _TOL_PAIRS, source=SOURCE),
    ),
)

QUANTITIES = (AUC, SOFT_AUC)
