"""Catalogue §4, overlap measures (seed 001, "optimizing directly for the
metric"): soft_f1, dice, jaccard.

Layouts (spec.quantity): ``soft_f1`` is per column over axis 0 (layout
"first", output ``probs.shape[1:]``); ``dice`` and ``jaccard`` reduce over
all elements (layout "all", a scalar).  Each definition is written for one
sample of n entries p_i, t_i ∈ [0, 1] with

    I = Σ p·t,   P = Σ p,   T = Σ t   (squared Dice: P2 = Σ p², T2 = Σ t²)

    soft_f1 = 2I / (P + T + eps)
    dice    = (2I + smooth) / (P + T + smooth)      (squared: P2 + T2, V-Net)
    jaccard = (I + smooth) / (P + T − I + smooth)

Empty sets.  Every denominator is a sum of nonnegative terms (P + T − I =
Σ p + t(1 − p)), so it vanishes only when p = t = 0 everywhere *and* the
constant (smooth, eps) is 0.  There the value is 1 (catalogue §4: two empty
sets agree perfectly), written as ``Piecewise((1, Eq(denominator, 0)), ...)``
so the reference evaluates the convention itself, with a zero gradient (the
derivative of the constant branch).  Why 1 and 0: with smooth > 0 the value
at p = t = 0 is smooth/smooth = 1, so 1 is the smooth → 0 limit there; the
function is discontinuous at that point (at t = 0 and any p ≠ 0 it is 0), so
no value is a limit along every path, and 0 is the limit of ∂/∂p along t = 0
(where the value is identically 0) — never NaN.  With eps > 0 an empty
soft_f1 column is the formula's 0/eps = 0, not 1: that is seed 001's
convention (eps = 1e-6), recorded as the refuted claim ``empty_column_one_any_eps``.

Soft targets.  For binary targets 1 − dice = Σ|p − t| / (P + T + smooth) > 0
for every p ≠ t, but for soft targets the plain Dice is not maximised at
p = t: dice(t, t) = (2Σt² + s)/(2Σt + s) < 1 when some t ∈ (0, 1).  The
squared (V-Net) Dice has 1 − dice = Σ(p − t)² / (P2 + T2 + s), zero iff p = t
for every target.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, NumericalClaim, Quantity, SymbolicClaim

SOURCE = "seed 001 ('optimizing directly for the metric': soft F1, Dice loss); catalogue §4"
VNET = "Milletari, Navab & Ahmadi, 'V-Net', 3DV 2016 (squared Dice)"
EPS64 = float(np.finfo(np.float64).eps)


def ps(n):
    return sp.symbols(f"p0:{n}", real=True)


def ts(n):
    return sp.symbols(f"t0:{n}", real=True)


SMOOTH = sp.Symbol("smooth", real=True)
EPS = sp.Symbol("eps", real=True)


# -- definitions ----------------------------------------------------------------------
def ratio(num, den):
    """num/den, and 1 (with a zero gradient) where den = 0: the empty-set convention."""
    return sp.Piecewise((1, sp.Eq(den, 0)), (num / den, True))


def soft_f1_expr(p, t, eps):
    inter = sum((pi * ti for pi, ti in zip(p, t)), sp.Integer(0))
    return ratio(2 * inter, sum(p, sp.Integer(0)) + sum(t, sp.Integer(0)) + eps)


def dice_expr(p, t, smooth, squared=False):
    inter = sum((pi * ti for pi, ti in zip(p, t)), sp.Integer(0))
    size = (sum((pi ** 2 for pi in p), sp.Integer(0)) + sum((ti ** 2 for ti in t), sp.Integer(0)) if squared
            else sum(p, sp.Integer(0)) + sum(t, sp.Integer(0)))
    return ratio(2 * inter + smooth, size + smooth)


def jaccard_expr(p, t, smooth):
    inter = sum((pi * ti for pi, ti in zip(p, t)), sp.Integer(0))
    union = sum(p, sp.Integer(0)) + sum(t, sp.Integer(0)) - inter
    return ratio(inter + smooth, union + smooth)


def _build_soft_f1(n):
    p, t = ps(n), ts(n)
    return Definition({"probs": p, "targets": t, "eps": EPS}, [soft_f1_expr(p, t, EPS)])


def _build_dice(n, squared=0):
    p, t = ps(n), ts(n)
    return Definition({"probs": p, "targets": t, "smooth": SMOOTH}, [dice_expr(p, t, SMOOTH, bool(squared))])


def _build_jaccard(n):
    p, t = ps(n), ts(n)
    return Definition({"probs": p, "targets": t, "smooth": SMOOTH}, [jaccard_expr(p, t, SMOOTH)])


def generic(expr):
    """The Piecewise's generic branch (the formula away from the empty point)."""
    return expr.args[1][0] if isinstance(expr, sp.Piecewise) else expr


def seed001_dice_loss_expr(p, t):
    """Seed 001's ``dice_loss`` as printed: smooth = 1, A_sum = Σ t·p (not Σ p), B_sum = Σ t·t."""
    inter = sum((pi * ti for pi, ti in zip(p, t)), sp.Integer(0))
    a_sum = sum((ti * pi for pi, ti in zip(p, t)), sp.Integer(0))
    b_sum = sum((ti * ti for ti in t), sp.Integer(0))
    return 1 - (2 * inter + 1) / (a_sum + b_sum + 1)


# -- symbolic claims ---------------------------------------------------------------------
def _set_dice(a, b):
    """Set Dice and IoU of two 0/1 tuples, by counting (Fractions): independent of the definitions."""
    inter = sum(x & y for x, y in zip(a, b))
    union = sum(x | y for x, y in zip(a, b))
    sa, sb = sum(a), sum(b)
    dice = Fraction(1) if sa + sb == 0 else Fraction(2 * inter, sa + sb)
    iou = Fraction(1) if union == 0 else Fraction(inter, union)
    return dice, iou


N_SETS = 4  # every pair of subsets of {0..3}: 256 pairs per n, enough to hit every overlap pattern


def claim_binary_sets():
    for n in range(1, N_SETS + 1):
        p, t = ps(n), ts(n)
        exprs = (dice_expr(p, t, 0), dice_expr(p, t, 0, squared=True), jaccard_expr(p, t, 0))
        for a in itertools.product((0, 1), repeat=n):
            for b in itertools.product((0, 1), repeat=n):
                at = {**dict(zip(p, a)), **dict(zip(t, b))}
                d, j = _set_dice(a, b)
                got = [sp.nsimplify(e.subs(at)) for e in exprs]
                if got != [d, d, j]:
                    return ClaimResult("refuted", f"n={n}, p={a}, t={b}: dice, squared dice, jaccard = {got}, "
                                       f"set Dice, IoU = {d}, {j}", f"probs={a}, targets={b}")
    return ClaimResult("proved on instances",
                       f"every pair of 0/1 vectors for n = 1..{N_SETS} (sympy substitution into the definitions with "
                       "smooth = 0, both squared flags): dice = 2|P∩T|/(|P| + |T|) and jaccard = |P∩T|/|P∪T|, counted "
                       "with Python sets, and 1 for two empty sets")


def claim_dice_jaccard_relation():
    inter, size = sp.symbols("I A", positive=True)  # I = Σpt, A = Σp + Σt > 0
    d, j = 2 * inter / size, inter / (size - inter)
    if sp.simplify(2 * j / (1 + j) - d) != 0:
        return ClaimResult("refuted", f"2J/(1+J) − D = {sp.simplify(2 * j / (1 + j) - d)}")
    for n in range(1, 4):  # the definitions themselves, away from the empty point
        p, t = ps(n), ts(n)
        dd, jj = generic(dice_expr(p, t, 0)), generic(jaccard_expr(p, t, 0))
        if sp.simplify(2 * jj / (1 + jj) - dd) != 0:
            return ClaimResult("refuted", f"n={n}: the definitions disagree")
    # with smooth > 0 it fails: p = (1, 0), t = (1, 1), smooth = 1
    at = {**dict(zip(ps(2), (1, 0))), **dict(zip(ts(2), (1, 1)))}
    dd = dice_expr(ps(2), ts(2), 1).subs(at)
    jj = jaccard_expr(ps(2), ts(2), 1).subs(at)
    return ClaimResult("proved",
                       "with I = Σpt and A = Σp + Σt > 0 (any soft p, t), D = 2I/A and J = I/(A − I) give "
                       "2J/(1 + J) − D = 0 (sympy.simplify, general); also on the definitions for n = 1..3; at the "
                       "empty point both are 1 = 2·1/(1 + 1).  Not with smooth > 0 (p = (1, 0), t = (1, 1), smooth = 1: "
                       f"D = {dd}, J = {jj}, 2J/(1 + J) = {sp.nsimplify(2 * jj / (1 + jj))}) and not for squared Dice "
                       "at soft inputs")


def claim_seed_dice_gt_iou():
    # seed 001: "在数值上, DICE > IOU" — strict
    j = sp.Symbol("J", nonnegative=True)
    gap = sp.factor(2 * j / (1 + j) - j)
    at = [gap.subs(j, v) for v in (0, 1)]
    return ClaimResult("refuted",
                       f"Dice − IoU = 2J/(1 + J) − J = {gap}, which is 0 at J = 0 and J = 1 (values {at}): the strict "
                       "inequality fails at a perfect prediction and at disjoint sets; Dice ≥ IoU holds (claim "
                       "dice_ge_jaccard)",
                       "probs = targets = [1] (Dice = IoU = 1); probs = [1, 0], targets = [0, 1] (Dice = IoU = 0)")


def claim_dice_ge_jaccard():
    j = sp.Symbol("J", nonnegative=True)
    gap = sp.factor(2 * j / (1 + j) - j)  # J(1 − J)/(1 + J)
    p, t = sp.symbols("p t", real=True)
    # J ≤ 1 because the union minus the intersection is Σ p(1 − t) + t(1 − p) ≥ 0 termwise
    term = sp.expand(p + t - 2 * p * t - (p * (1 - t) + t * (1 - p)))
    roots = sp.solve(gap, j)
    if term != 0 or sorted(roots) != [0, 1] or not gap.subs(j, sp.Rational(1, 2)).is_positive:
        return ClaimResult("refuted", f"gap {gap}, roots {roots}")
    return ClaimResult("proved",
                       f"at smooth = 0, D = 2J/(1 + J) (claim dice_jaccard_relation), so D − J = {gap}: its only roots "
                       "are J = 0 and J = 1 (sympy.solve) and it is positive between (continuous, positive at ½); "
                       "J ∈ [0, 1] since (P + T − I) − I = Σ p(1 − t) + t(1 − p) ≥ 0 termwise for p, t ∈ [0, 1] "
                       "(sympy.expand).  So Dice ≥ IoU, equal only at 0 and 1")


def claim_loss_positive():
    p, t, s = sp.Symbol("p", real=True), sp.Symbol("t", real=True), sp.Symbol("s", nonnegative=True)
    # non-squared, binary t: the summand of (P + T) − 2I is p + t − 2pt, which is p at t = 0 and 1 − p at t = 1
    term = p + t - 2 * p * t
    if sp.simplify(term.subs(t, 0) - p) != 0 or sp.simplify(term.subs(t, 1) - (1 - p)) != 0:
        return ClaimResult("refuted", "the binary-target summand is not |p − t|")
    # squared, any t: p² + t² − 2pt = (p − t)²
    if sp.expand(p ** 2 + t ** 2 - 2 * p * t - (p - t) ** 2) != 0:
        return ClaimResult("refuted", "p² + t² − 2pt ≠ (p − t)²")
    for n in range(1, 4):  # 1 − dice = (A − 2I)/(A + s) on the definitions
        pv, tv = ps(n), ts(n)
        for squared in (False, True):
            e = generic(dice_expr(pv, tv, s, squared))
            size = (sum(x ** 2 for x in pv) + sum(x ** 2 for x in tv)) if squared else sum(pv) + sum(tv)
            excess = sum(((x - y) ** 2 if squared else x + y - 2 * x * y) for x, y in zip(pv, tv))
            if sp.simplify(1 - e - excess / (size + s)) != 0:
                return ClaimResult("refuted", f"n={n}, squared={squared}: 1 − dice ≠ excess/(size + smooth)")
    return ClaimResult("proved",
                       "1 − dice = Σ_i e_i / (A + smooth) with A the denominator's size term and e_i = p_i + t_i − 2p_i t_i "
                       "(plain) or (p_i − t_i)² (squared) (sympy.simplify on the definitions, n = 1..3; the identity is "
                       "termwise, so it holds for every n).  At t_i ∈ {0, 1}, e_i = |p_i − t_i| (sympy.subs), and "
                       "(p − t)² ≥ 0 at any t: for binary targets (either flag) and for any targets with squared = True, "
                       "1 − dice ≥ 0 with equality iff p = t, for every smooth ≥ 0 (A + smooth > 0 off the empty point)")


def claim_soft_self():
    t = sp.Rational(1, 2)
    plain = dice_expr([t], [t], 0).subs({})
    squared = dice_expr([t], [t], 0, squared=True)
    return ClaimResult("refuted",
                       f"plain Dice at a soft target: dice(t, t) = (2Σt² + s)/(2Σt + s) < 1 when some t ∈ (0, 1); "
                       f"t = [1/2], smooth = 0 gives {plain} (squared Dice gives {squared}).  The plain soft Dice loss "
                       "is not minimised at p = t for soft targets; the squared (V-Net) one is (claim loss_positive)",
                       "dice(probs=[0.5], targets=[0.5]) = 0.5")


def claim_seed_dice_loss():
    # seed 001's dice_loss: is it 0 only at a perfect prediction?
    n = 2
    p, t = ps(n), ts(n)
    loss = seed001_dice_loss_expr(p, t)
    ones = sp.simplify(loss.subs(dict(zip(p, (1, 1)))))  # predict all ones, any t
    binary = [ones.subs(dict(zip(t, b))) for b in itertools.product((0, 1), repeat=n)]
    if any(v != 0 for v in binary):
        return ClaimResult("proved on instances", f"all-ones prediction loses {binary}")
    return ClaimResult("refuted",
                       f"seed 001's dice_loss uses A_sum = Σ t·p where Dice has Σ p, so its value is 1 − (2I + 1)/(I + Σt² + 1); "
                       f"at p = (1, 1) it simplifies to {ones} for every binary t (values {binary} at t ∈ {{0,1}}²): predicting "
                       "all ones is a minimiser whatever the targets; catalogue dice (claim loss_positive) is 0 only at p = t",
                       "seed dice_loss(pred=[1, 1], target=[1, 0]) = 0, while dice(probs=[1, 1], targets=[1, 0]) = 2/3")


def claim_empty():
    out = []
    for n in range(1, 4):
        zero = {**{x: 0 for x in ps(n)}, **{x: 0 for x in ts(n)}}
        p, t = ps(n), ts(n)
        vals = [dice_expr(p, t, 0).subs(zero), dice_expr(p, t, 0, True).subs(zero), jaccard_expr(p, t, 0).subs(zero),
                soft_f1_expr(p, t, 0).subs(zero)]
        grads = [sp.diff(e, x).subs(zero) for e in (dice_expr(p, t, 0), jaccard_expr(p, t, 0), soft_f1_expr(p, t, 0))
                 for x in p]
        if vals != [1, 1, 1, 1] or any(g != 0 for g in grads):
            return ClaimResult("refuted", f"n={n}: values {vals}, gradients {grads}")
        out.append(n)
        # with smooth > 0 the formula itself gives 1: smooth/smooth
        s = sp.Symbol("s", positive=True)
        if sp.simplify(generic(dice_expr(p, t, s)).subs(zero)) != 1 or sp.simplify(generic(jaccard_expr(p, t, s)).subs(zero)) != 1:
            return ClaimResult("refuted", f"n={n}: smooth/smooth ≠ 1")
    return ClaimResult("proved on instances",
                       "n = 1..3: at p = t = 0 with smooth = 0 dice (both flags), jaccard and soft_f1 (eps = 0) are 1 and "
                       "their ∂/∂p are 0 (the convention's branch); with smooth > 0 the formulas give smooth/smooth = 1, "
                       "so the convention is the smooth → 0 limit at that point")


def claim_empty_column_any_eps():
    e = sp.Symbol("eps", positive=True)
    v = generic(soft_f1_expr(ps(2), ts(2), e)).subs({**{x: 0 for x in ps(2)}, **{x: 0 for x in ts(2)}})
    return ClaimResult("refuted",
                       f"with eps > 0 an empty column (Σp = Σt = 0) scores 2·0/(0 + eps) = {v}, not 1: seed 001's soft F1 "
                       "(eps = 1e-6) gives a class absent from the batch and correctly predicted absent the maximal loss 1; "
                       "the catalogue's 'empty column is 1' holds at eps = 0 only",
                       "soft_f1(probs=[[0]], targets=[[0]], eps=1e-6) = 0")


def claim_seed_f1_form():
    p, t = sp.symbols("p t", real=True)
    # per element: 2·tp + fn + fp − (p + t) with tp = p·t, fp = p(1 − t), fn = (1 − p)t
    summand = sp.expand(2 * p * t + (1 - p) * t + p * (1 - t) - p - t)
    if summand != 0:
        return ClaimResult("refuted", f"2tp + fn + fp − (p + t) = {summand} per element")
    return ClaimResult("proved",
                       "seed 001's tp = Σ p·t, fp = Σ p(1 − t), fn = Σ (1 − p)t: the summand of 2tp + fn + fp − (Σp + Σt) "
                       "expands to 0 (sympy), so for every n 2tp/(2tp + fn + fp + eps) = 2Σpt/(Σp + Σt + eps), soft_f1's "
                       "definition, column by column")


def claim_f1_eps_is_dice_smooth():
    p, t = ps(1), ts(1)
    at = {p[0]: 0, t[0]: 1}
    f1 = generic(soft_f1_expr(p, t, 1)).subs(at)
    d = generic(dice_expr(p, t, 1)).subs(at)
    same0 = sp.simplify(generic(soft_f1_expr(ps(3), ts(3), 0)) - generic(dice_expr(ps(3), ts(3), 0)))
    if same0 != 0:
        return ClaimResult("refuted", "soft_f1 ≠ dice even at eps = smooth = 0")
    return ClaimResult("refuted",
                       f"soft_f1 with eps equals per-column dice with smooth = 0 only at eps = 0 (identical definitions, sympy); "
                       f"seed 001's eps enters the denominator only, Dice's smooth both: p = [0], t = [1], eps = smooth = 1 "
                       f"gives soft_f1 = {f1} but dice = {d}",
                       "soft_f1(probs=[[0]], targets=[[1]], eps=1) = 0; dice(probs=[0], targets=[1], smooth=1) = 1/2")


# -- numerical claims (every implementation) -----------------------------------------------
# Claim inputs are put on the grid of multiples of 2^-10 (GRID) inside each check: with at most
# 12 entries every sum Σp, Σt, Σp·t, Σp², and their sums with a dyadic smoothing constant
# (0, 1/8 … 8), is exact in float64 whatever the order of summation.  Then a correct
# implementation's value is one correctly rounded quotient of exact sums (≤ eps/2 relative),
# and the NumPy closed forms below are too.
GRID = 1024.0
TOL_FEW = 8 * EPS64  # up to 4 correctly rounded operations on exact sums (a quotient, 1 − x, D/(2 − D)…), ×2 margin
TOL_FEW_WHY = ("8 eps (absolute, values ≤ 1): on the 2^-10 grid every sum is exact in float64, so each side is at most "
               "four correctly rounded operations on exact sums (quotient, 1 − x, a conversion such as 2J/(1 + J)), "
               "≤ eps/2 each, with a margin of 2")


def grid(x):
    return np.round(np.asarray(x, dtype=np.float64) * GRID) / GRID


def _sums(p, t, axis=None):
    return (p * t).sum(axis=axis), p.sum(axis=axis), t.sum(axis=axis), (p * p).sum(axis=axis), (t * t).sum(axis=axis)


def _safe_ratio(num, den):
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.where(den == 0, 1.0, num / np.where(den == 0, 1.0, den))


def _dice_np(p, t, s=0.0, squared=False):
    i, sp_, st_, sp2, st2 = _sums(p, t)
    return _safe_ratio(2 * i + s, (sp2 + st2 if squared else sp_ + st_) + s)


def _jaccard_np(p, t, s=0.0):
    i, sp_, st_, _, _ = _sums(p, t)
    return _safe_ratio(i + s, sp_ + st_ - i + s)


def _check_dice_binary(impl, probs, targets, smooth, squared):
    p, t = np.round(probs), np.round(targets)
    inter, sizes = (p * t).sum(), p.sum() + t.sum()  # counts (exact)
    want = 1.0 if sizes == 0 else 2 * inter / sizes
    return [Comparison(impl(probs=p, targets=t, smooth=0.0, squared=sq), want, TOL_FEW,
                       f"binary inputs, squared={sq}: dice = 2|P∩T|/(|P| + |T|) (1 for two empty sets)") for sq in (False, True)]


def _check_dice_loss(impl, probs, targets, smooth, squared):
    p, tb, ts_ = grid(probs), np.round(targets), grid(targets)
    ones = np.ones_like(p)
    # plain Dice at binary targets: 1 − dice = Σ|p − t| / (Σp + Σt + smooth)
    out = [Comparison(1 - impl(probs=p, targets=tb, squared=False),
                      _safe_ratio(np.abs(p - tb).sum(), p.sum() + tb.sum() + smooth) * (p.sum() + tb.sum() + smooth > 0),
                      TOL_FEW, "binary targets: 1 − dice = Σ|p − t| / (Σp + Σt + smooth) (> 0 iff p ≠ t)"),
           Comparison(1 - impl(probs=ones, targets=tb, squared=False),
                      (tb.size - tb.sum()) / (tb.size + tb.sum() + smooth),
                      TOL_FEW, "binary targets, all-ones prediction: 1 − dice = #negatives / (n + |T| + smooth)"),
           # squared Dice at any targets: 1 − dice = Σ(p − t)² / (Σp² + Σt² + smooth)
           Comparison(1 - impl(probs=p, targets=ts_, squared=True),
                      _safe_ratio(((p - ts_) ** 2).sum(), (p * p).sum() + (ts_ * ts_).sum() + smooth)
                      * ((p * p).sum() + (ts_ * ts_).sum() + smooth > 0),
                      TOL_FEW, "squared: 1 − dice = Σ(p − t)² / (Σp² + Σt² + smooth) (> 0 iff p ≠ t)")]
    return out


def _check_self(impl, probs, targets, smooth, squared=None):
    """dice/jaccard(t, t): 1 at binary t; soft t: the plain forms (2Σt² + s)/(2Σt + s), (Σt² + s)/(2Σt − Σt² + s)."""
    t, tb = grid(targets), np.round(targets)
    s1, s2 = t.sum(), (t * t).sum()
    kw = {} if squared is None else {"squared": False}
    out = [Comparison(impl(probs=tb, targets=tb, **kw), 1.0, TOL_FEW, "binary t: value(t, t) = 1")]
    if squared is None:  # jaccard
        out.append(Comparison(impl(probs=t, targets=t), _safe_ratio(s2 + smooth, 2 * s1 - s2 + smooth), TOL_FEW,
                              "soft t: jaccard(t, t) = (Σt² + smooth)/(2Σt − Σt² + smooth) (< 1 for t ∈ (0, 1))"))
    else:
        out += [Comparison(impl(probs=t, targets=t, squared=False), _safe_ratio(2 * s2 + smooth, 2 * s1 + smooth),
                           TOL_FEW, "soft t: dice(t, t) = (2Σt² + smooth)/(2Σt + smooth) (< 1 for t ∈ (0, 1))"),
                Comparison(impl(probs=t, targets=t, squared=True), 1.0, TOL_FEW, "squared: dice(t, t) = 1 for every t")]
    return out


def _check_bounds(impl, probs, targets, **kw):
    v = impl(probs=grid(probs), targets=grid(targets))
    return [Comparison(np.clip(v, 0.0, 1.0), v, 0.0, "0 ≤ value ≤ 1")]


def _check_permutation(impl, probs, targets, **kw):
    """Any permutation of the elements (and any reshape) leaves an all-elements overlap unchanged."""
    p, t = grid(probs), grid(targets)
    order = np.argsort(-p.ravel(), kind="stable")  # a deterministic, input-dependent permutation
    v = impl(probs=p, targets=t)
    return [Comparison(impl(probs=p.ravel()[order], targets=t.ravel()[order]), v, 0.0,
                       "elements permuted and flattened: exact sums are order-independent, so the value is identical"),
            Comparison(impl(probs=p.ravel()[::-1].reshape(-1, 1), targets=t.ravel()[::-1].reshape(-1, 1)), v, 0.0,
                       "reversed, as a column")]


def _check_jaccard_binary(impl, probs, targets, smooth):
    p, t = np.round(probs), np.round(targets)
    inter, union = (p * t).sum(), np.maximum(p, t).sum()
    return [Comparison(impl(probs=p, targets=t, smooth=0.0), 1.0 if union == 0 else inter / union, TOL_FEW,
                       "binary inputs: jaccard = |P∩T|/|P∪T| (1 for two empty sets)")]


def _check_jaccard_dice(impl, probs, targets, smooth):
    p, t = grid(probs), grid(targets)
    j = impl(probs=p, targets=t, smooth=0.0)
    d = _dice_np(p, t)
    return [Comparison(2 * j / (1 + j), d, TOL_FEW, "smooth = 0, soft inputs: 2J/(1 + J) = 2Σpt/(Σp + Σt) (Dice)"),
            Comparison(np.minimum(d - j, 0.0), 0.0, TOL_FEW, "Dice ≥ jaccard")]


def _check_f1_columns(impl, probs, targets, eps):
    """Each column is the Dice of that column alone (eps = 0), seed 001's tp/fp/fn form for any eps,
    and empty columns score 1 at eps = 0."""
    p, t = grid(probs), grid(targets)
    v = impl(probs=p, targets=t)
    cols = p.reshape(p.shape[0], -1), t.reshape(t.shape[0], -1)
    alone = np.array([impl(probs=cols[0][:, j:j + 1], targets=cols[1][:, j:j + 1])[0] for j in range(cols[0].shape[1])])
    tp = (p * t).sum(axis=0)
    fp, fn = (p * (1 - t)).sum(axis=0), ((1 - p) * t).sum(axis=0)
    seed = _safe_ratio(2 * tp, 2 * tp + fn + fp + eps)
    rows = np.argsort(-p.reshape(p.shape[0], -1).sum(axis=1), kind="stable")
    dice = np.array([_dice_np(a, b) for a, b in zip(cols[0].T, cols[1].T)]).reshape(v.shape)
    return [Comparison(alone.reshape(v.shape), v, 0.0, "column j = soft_f1 of column j alone (exact sums: identical)"),
            Comparison(v, seed, TOL_FEW, "seed 001's 2tp/(2tp + fn + fp + eps), per column over axis 0"),
            Comparison(impl(probs=p[rows], targets=t[rows]), v, 0.0, "rows (axis 0) permuted: identical"),
            Comparison(impl(probs=p, targets=t, eps=0.0), dice, TOL_FEW,
                       "eps = 0: each column is the Dice 2Σpt/(Σp + Σt) of that column, 1 if empty")]


_P = Arg("probs", "unit", grad=True, doc="predicted probabilities in [0, 1]")
# Gradients w.r.t. targets are not in the contract: targets are data (hard or soft labels).
_T = Arg("targets", "unit", doc="targets in [0, 1] (binary masks, or soft targets)")
_SMOOTH = Arg("smooth", "nonnegative", 0.0, doc="smoothing constant ≥ 0 added to numerator and denominator")
_INVALID = {"probs": ["above 1", "negative entry", "wrong shape", "integer array"],
            "targets": ["above 1", "negative entry", "wrong shape"]}
_EMPTY = ("empty sets: where the denominator is 0 (p = t = 0 everywhere and smooth = 0) the value is 1 and the gradient 0, "
          "never NaN; the function is discontinuous there (0 at t = 0 and any p ≠ 0): 1 is the smooth → 0 limit at "
          "that point and 0 the limit of ∂/∂p along t = 0")
_COMMON = NumericalClaim("bounds", "0 ≤ value ≤ 1", _check_bounds,
                         "exact (0): on the 2^-10 grid numerator ≤ denominator are exact sums and a correctly rounded "
                         "quotient of them never leaves [0, 1]", source="catalogue §4")
_PERM = NumericalClaim("permutation_invariance", "permuting, flattening or reshaping the elements leaves the value unchanged",
                       _check_permutation, "exact (0): on the 2^-10 grid every sum is exact whatever its order, so the "
                       "computation is the same quotient", source="catalogue §4 (over all elements)")

SOFT_F1 = Quantity(
    name="soft_f1", family="overlap",
    summary="soft F1 per class column (seed 001)",
    formula="2·Σ_i p_i·t_i / (Σ_i p_i + Σ_i t_i + eps), per column over axis 0",
    args=(_P, _T, Arg("eps", "nonnegative", 0.0, doc="constant ≥ 0 added to the denominator only")),
    output="row", build=_build_soft_f1, layout="first",
    conventions=(
        "layout 'first': one score per column over axis 0; output probs.shape[1:]",
        "seed 001's 2tp/(2tp + fn + fp + eps) is the same function (claim seed_form)",
        "empty column (Σp = Σt = 0): 1 with a zero gradient when eps = 0; with eps > 0 the formula's 0 (seed 001's "
        "convention, refuted claim empty_column_one_any_eps)",
        "eps enters the denominator only: soft_f1 with eps is not Dice with smooth = eps",
    ),
    reference=SOURCE,
    invalid={**_INVALID, "eps": [-1.0]},
    image=Image("2·p·t ≤ p + t on [0, 1]: in [0, 1]", 0.0, 1.0),
    claims=(
        SymbolicClaim("seed_form", "seed 001's 2tp/(2tp + fn + fp + eps) = 2Σpt/(Σp + Σt + eps)", claim_seed_f1_form, SOURCE),
        SymbolicClaim("eps_is_dice_smooth", "soft_f1 with eps is per-column dice with smooth = eps",
                      claim_f1_eps_is_dice_smooth, "a common assumption, not a catalogue claim"),
        SymbolicClaim("empty_column_one_any_eps", "an empty column scores 1 for every eps ≥ 0",
                      claim_empty_column_any_eps, "catalogue §4 with seed 001's eps = 1e-6"),
        SymbolicClaim("empty_sets", "empty sets give 1 with a zero gradient at smooth = eps = 0", claim_empty, "catalogue §4"),
        NumericalClaim("columns", "column j is soft_f1 of column j alone, seed 001's tp/fp/fn form, the column's Dice at "
                       "eps = 0 (1 if empty); invariant under permuting rows", _check_f1_columns,
                       "exact (0) where the same exact sums are divided (a column alone, rows permuted); otherwise "
                       + TOL_FEW_WHY, source=SOURCE),
        _COMMON,
    ),
)

DICE = Quantity(
    name="dice", family="overlap",
    summary="soft Dice coefficient over all elements (seed 001; squared: V-Net)",
    formula="(2·Σ p·t + smooth) / (Σ p + Σ t + smooth); squared: (2·Σ p·t + smooth) / (Σ p² + Σ t² + smooth)",
    args=(_P, _T, _SMOOTH, Arg("squared", "flag", False, doc="use Σp² + Σt² in the denominator (V-Net)")),
    output="row", build=_build_dice, layout="all",
    conventions=(
        "layout 'all': one scalar over every element of probs and targets (same shape)",
        _EMPTY,
        "loss = 1 − dice: for binary targets 0 iff p = t; for soft targets only the squared form is minimised at p = t "
        "(plain: dice(t, t) = Σt²/Σt < 1 at smooth = 0)",
    ),
    reference=f"{SOURCE}; {VNET}",
    invalid={**_INVALID, "smooth": [-1.0]},
    image=Image("2·p·t ≤ p + t and 2·p·t ≤ p² + t²: in [0, 1]", 0.0, 1.0),
    claims=(
        SymbolicClaim("binary_sets", "at binary inputs dice is the set Dice 2|P∩T|/(|P| + |T|)", claim_binary_sets, SOURCE),
        SymbolicClaim("dice_jaccard_relation", "smooth = 0: dice = 2J/(1 + J), for soft inputs too",
                      claim_dice_jaccard_relation, SOURCE),
        SymbolicClaim("seed_dice_gt_iou", "seed 001: DICE > IOU (strictly)", claim_seed_dice_gt_iou, SOURCE),
        SymbolicClaim("dice_ge_jaccard", "Dice ≥ IoU, equal only at 0 and 1", claim_dice_ge_jaccard, "catalogue §4"),
        SymbolicClaim("loss_positive", "1 − dice ≥ 0, = 0 iff p = t (binary targets; any targets when squared)",
                      claim_loss_positive, "catalogue §4"),
        SymbolicClaim("soft_self_one", "dice(t, t) = 1 for soft targets too (plain Dice)", claim_soft_self,
                      "a common assumption, not a catalogue claim"),
        SymbolicClaim("seed_dice_loss_perfect_only", "seed 001's dice_loss is 0 only at a perfect prediction",
                      claim_seed_dice_loss, SOURCE),
        SymbolicClaim("empty_sets", "empty sets give 1 with a zero gradient at smooth = 0", claim_empty, "catalogue §4"),
        NumericalClaim("binary_sets", "at probs, targets rounded to {0, 1}: dice = 2|P∩T|/(|P| + |T|), 1 if both empty",
                       _check_dice_binary, TOL_FEW_WHY, source=SOURCE),
        NumericalClaim("loss_identity", "1 − dice = Σ|p − t|/(Σp + Σt + s) at binary t (all-ones p too); squared: "
                       "Σ(p − t)²/(Σp² + Σt² + s) at any t", _check_dice_loss, TOL_FEW_WHY, source="catalogue §4; seed 001"),
        NumericalClaim("self", "dice(t, t) = 1 at binary t and (squared) at any t; plain soft: (2Σt² + s)/(2Σt + s)",
                       _check_self, TOL_FEW_WHY, source="catalogue §4"),
        _COMMON, _PERM,
    ),
)

JACCARD = Quantity(
    name="jaccard", family="overlap",
    summary="soft Jaccard index (IoU) over all elements",
    formula="(Σ p·t + smooth) / (Σ p + Σ t − Σ p·t + smooth)",
    args=(_P, _T, _SMOOTH),
    output="row", build=_build_jaccard, layout="all",
    conventions=(
        "layout 'all': one scalar over every element of probs and targets (same shape)",
        _EMPTY,
        "the union Σp + Σt − Σpt = Σ p + t(1 − p) is a sum of nonnegative terms: no cancellation",
    ),
    reference=SOURCE,
    invalid={**_INVALID, "smooth": [-1.0]},
    image=Image("Σ p·t ≤ Σ p + Σ t − Σ p·t on [0, 1]: in [0, 1]", 0.0, 1.0),
    claims=(
        SymbolicClaim("binary_sets", "at binary inputs jaccard is the set IoU |P∩T|/|P∪T|", claim_binary_sets, SOURCE),
        SymbolicClaim("empty_sets", "empty sets give 1 with a zero gradient at smooth = 0", claim_empty, "catalogue §4"),
        NumericalClaim("binary_sets", "at probs, targets rounded to {0, 1}: jaccard = |P∩T|/|P∪T|, 1 if both empty",
                       _check_jaccard_binary, TOL_FEW_WHY, source=SOURCE),
        NumericalClaim("dice_relation", "smooth = 0: 2J/(1 + J) = 2Σpt/(Σp + Σt), and Dice ≥ J", _check_jaccard_dice,
                       TOL_FEW_WHY, source="catalogue §4"),
        NumericalClaim("self", "jaccard(t, t) = 1 at binary t; soft t: (Σt² + s)/(2Σt − Σt² + s)", _check_self,
                       TOL_FEW_WHY, source="catalogue §4"),
        _COMMON, _PERM,
    ),
)

QUANTITIES = (SOFT_F1, DICE, JACCARD)
