"""Catalogue §3, multi-label ZLPR (seed 002: Su Jianlin, "A Soft-Label Version
of Multi-label 'Softmax + Cross-Entropy'", 2022): zlpr, zlpr_probability.

The definition is written per row of n classes.  A term whose weight is
exactly 0 must be exactly 0 whatever s is.  For every finite s that is what
w·e^{±s} gives in exact arithmetic (the mpmath reference computes 0·e^{±s}
= 0 however large e^{±s} is), so only a masked position needs a guard: its
score reaches the reference as the stand-in −10^400 (spec.quantity.
MASKED_STANDIN), where t·e^{−s} would be 0·e^{10^400}.  The positive-side
term is therefore ``Piecewise((0, Eq(t, 0) & is_masked(s)), (t·e^{−s}, True))``
(value and gradient 0 there, as in spec.classification's cross-entropy);
the negative-side term (1 − t)·e^{s} tends to 0 at a masked score by itself.
Since the guard never fires at a finite score, the gradient w.r.t. the
targets at t ∈ {0, 1} is the one-sided derivative of the plain formula.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, Masking, NumericalClaim, Quantity, SymbolicClaim, is_masked

SOURCE = "seed 002 (Su, 'A Soft-Label Version of Multi-label Softmax + Cross-Entropy', 2022); catalogue §3"
EPS64 = float(np.finfo(np.float64).eps)


def ss(n):
    return sp.symbols(f"s0:{n}", real=True)


def ts(n):
    return sp.symbols(f"t0:{n}", real=True)


# -- definitions ---------------------------------------------------------------
def pos_term(s, t, guard=True):
    """t·e^{−s}; 0 (value and gradient) at a masked score with t = 0."""
    if not guard:
        return t * sp.exp(-s)
    return sp.Piecewise((0, sp.Eq(t, 0) & is_masked(s)), (t * sp.exp(-s), True))


def neg_term(s, t):
    """(1 − t)·e^{s}: at a masked score e^{s} → 0 by itself (value and gradient)."""
    return (1 - t) * sp.exp(s)


def zlpr_expr(s, t, guard=True):
    """log(1 + Σ (1 − t_i) e^{s_i}) + log(1 + Σ t_i e^{−s_i}); ``guard=False``
    gives the seed's plain formula (equal to the guarded one at every finite s)."""
    neg = sum((neg_term(si, ti) for si, ti in zip(s, t)), sp.Integer(0))
    pos = sum((pos_term(si, ti, guard) for si, ti in zip(s, t)), sp.Integer(0))
    return sp.log(1 + neg) + sp.log(1 + pos)


def hard_expr(s, labels):
    """The hard-label loss of the earlier post: log(1 + Σ_neg e^{s}) + log(1 + Σ_pos e^{−s})."""
    neg = sum((sp.exp(si) for si, li in zip(s, labels) if li == 0), sp.Integer(0))
    pos = sum((sp.exp(-si) for si, li in zip(s, labels) if li == 1), sp.Integer(0))
    return sp.log(1 + neg) + sp.log(1 + pos)


def bce_expr(s, t):
    """Per-class binary cross-entropy with a sigmoid: t·log(1 + e^{−s}) + (1 − t)·log(1 + e^{s})."""
    return t * sp.log(1 + sp.exp(-s)) + (1 - t) * sp.log(1 + sp.exp(s))


def sigma2(s):
    """σ(2s) = 1/(1 + e^{−2s})."""
    return 1 / (1 + sp.exp(-2 * s))


def closed_gradient(s, t, i):
    """Seed 002's closed form of ∂l/∂s_i."""
    A = sum(tk * sp.exp(-sk) for sk, tk in zip(s, t))
    B = sum((1 - tk) * sp.exp(sk) for sk, tk in zip(s, t))
    return -t[i] * sp.exp(-s[i]) / (1 + A) + (1 - t[i]) * sp.exp(s[i]) / (1 + B)


def _build_zlpr(n):
    s, t = ss(n), ts(n)
    return Definition({"scores": s, "targets": t}, [zlpr_expr(s, t)])


def _build_probability(n):
    s = ss(n)
    return Definition({"scores": s}, [sigma2(si) for si in s])


def unguard(expr, zero_at_weight_zero=True):
    """``expr`` at finite scores: every guard Piecewise((0, Eq(w, 0) & is_masked(s)), (E, True)) replaced
    by E (is_masked(s) is False for every finite s).  With ``zero_at_weight_zero`` also check that E
    vanishes at w = 0, i.e. that the guard only restates the generic branch's value there.
    Returns (expression, list of guards that fail that check or are not of that form)."""
    bad = []

    def plain(p):
        (z, cond), (generic, _) = p.args
        parts = cond.args if isinstance(cond, sp.And) else (cond,)
        eqs = [c for c in parts if isinstance(c, sp.Eq)]
        masked = [c for c in parts if not isinstance(c, sp.Eq)]
        if z != 0 or len(eqs) != 1 or len(masked) != 1 or masked[0].func is not sp.StrictLessThan:
            bad.append(p)
            return generic
        if zero_at_weight_zero:
            w = eqs[0].lhs - eqs[0].rhs
            (var,) = w.free_symbols
            if any(sp.simplify(generic.subs(var, r)) != 0 for r in sp.solve(w, var)):
                bad.append(p)
        return generic

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), plain), bad


# -- symbolic claims -------------------------------------------------------------
def claim_hard_labels():
    for n in range(1, 5):
        s, t = ss(n), ts(n)
        z = zlpr_expr(s, t)
        for labels in itertools.product((0, 1), repeat=n):
            at, bad = unguard(z.subs(dict(zip(t, labels))))
            if bad or sp.simplify(at - hard_expr(s, labels)) != 0:
                return ClaimResult("refuted", f"n={n}, t={labels}: {at}", str(labels))
    return ClaimResult("proved on instances",
                       "every t ∈ {0,1}^n for n = 1..4 with symbolic real (finite) s: the definition at t equals "
                       "log(1 + Σ_{t=0} e^{s}) + log(1 + Σ_{t=1} e^{−s}) identically (sympy.simplify of the "
                       "difference is 0; a term of weight 0 is 0·e^{±s} = 0)")


def claim_gradient():
    # General n: sums over k = 0..i+m (n = i + m + 1 ≥ i + 1), IndexedBase entries.
    i = sp.Symbol("i", integer=True, nonnegative=True)
    m = sp.Symbol("m", integer=True, nonnegative=True)
    k = sp.Symbol("k", integer=True)
    s, t = sp.IndexedBase("s", real=True), sp.IndexedBase("t", real=True)
    A = sp.Sum(t[k] * sp.exp(-s[k]), (k, 0, i + m))
    B = sp.Sum((1 - t[k]) * sp.exp(s[k]), (k, 0, i + m))
    general = sp.diff(sp.log(1 + A) + sp.log(1 + B), s[i]).doit()
    closed = -t[i] * sp.exp(-s[i]) / (1 + A) + (1 - t[i]) * sp.exp(s[i]) / (1 + B)
    if sp.simplify(general - closed) != 0:
        return ClaimResult("refuted", f"general n: sympy.diff gives {general}")
    # The guarded definition the reference differentiates, n = 1..3, at finite scores.
    for n in range(1, 4):
        sv, tv = ss(n), ts(n)
        z = zlpr_expr(sv, tv)
        A = sum(tk * sp.exp(-sk) for sk, tk in zip(sv, tv))
        B = sum((1 - tk) * sp.exp(sk) for sk, tk in zip(sv, tv))
        for j in range(n):
            d, bad = unguard(sp.diff(z, sv[j]))
            if bad or sp.simplify(d - closed_gradient(sv, tv, j)) != 0:
                return ClaimResult("refuted", f"guarded definition, n={n}, ∂/∂s_{j}: {d}")
            dt, bad = unguard(sp.diff(z, tv[j]), zero_at_weight_zero=False)
            if bad or sp.simplify(dt - (sp.exp(-sv[j]) / (1 + A) - sp.exp(sv[j]) / (1 + B))) != 0:
                return ClaimResult("refuted", f"guarded definition, n={n}, ∂/∂t_{j}: {dt}")
    return ClaimResult("proved",
                       "general n: sympy.diff of log(1 + Σ_k t_k e^{−s_k}) + log(1 + Σ_k (1 − t_k) e^{s_k}) "
                       "(sums over k = 0..n−1 of IndexedBase entries, n = i + m + 1) w.r.t. s_i equals "
                       "−t_i e^{−s_i}/(1 + Σ t e^{−s}) + (1 − t_i) e^{s_i}/(1 + Σ (1 − t) e^{s}); for the guarded "
                       "definition (n = 1..3, finite s, where the masked-score guard is its generic branch) "
                       "sympy.diff w.r.t. s_i is that closed form, and w.r.t. t_i it is "
                       "e^{−s_i}/(1 + Σ t e^{−s}) − e^{s_i}/(1 + Σ (1 − t) e^{s}), also at t_i ∈ {0, 1} (one-sided)")


def claim_optimum():
    s, t = sp.Symbol("s", real=True), sp.Symbol("t", real=True)
    sol = sp.solve(sp.Eq(t * sp.exp(-s), (1 - t) * sp.exp(s)), t)
    coeff = sp.diff(t * sp.exp(-s) - (1 - t) * sp.exp(s), t)  # the equation is linear in t
    if len(sol) != 1 or sp.simplify(sol[0] - sigma2(s)) != 0 or not coeff.is_positive:
        return ClaimResult("refuted", f"solutions {sol}, coefficient of t {coeff}")
    # General n: at t_k = σ(2 s_k), a_k = t_k e^{−s_k} equals b_k = (1 − t_k) e^{s_k} for every k,
    # so Σ a = Σ b and the closed form (claim gradient_closed_form) is (b_i − a_i)/(1 + Σ a) = 0.
    i = sp.Symbol("i", integer=True, nonnegative=True)
    m = sp.Symbol("m", integer=True, nonnegative=True)
    k = sp.Symbol("k", integer=True)
    S = sp.IndexedBase("s", real=True)
    a = sigma2(S[k]) * sp.exp(-S[k])
    b = (1 - sigma2(S[k])) * sp.exp(S[k])
    if sp.simplify(a - b) != 0:
        return ClaimResult("refuted", f"a_k − b_k = {sp.simplify(a - b)}")
    A = sp.Sum(a, (k, 0, i + m))
    g = -a.subs(k, i) / (1 + A) + b.subs(k, i) / (1 + A)  # Σ b replaced by Σ a (equal summands)
    if sp.simplify(g) != 0:
        return ClaimResult("refuted", f"general n: gradient at the optimum {g}")
    # And directly on the guarded definition the reference uses, n = 1..3.
    for n in range(1, 4):
        sv, tv = ss(n), ts(n)
        z = zlpr_expr(sv, tv)
        at = {ti: sigma2(si) for si, ti in zip(sv, tv)}
        for j in range(n):
            d, bad = unguard(sp.diff(z, sv[j]).subs(at))
            if bad or sp.simplify(d) != 0:
                return ClaimResult("refuted", f"guarded definition, n={n}: ∂/∂s_{j} at t = σ(2s) is {d}")
    return ClaimResult("proved",
                       "t e^{−s} = (1 − t) e^{s} is linear in t with coefficient e^{−s} + e^{s} > 0, and sympy.solve "
                       "gives the unique root e^{s}/(e^{s} + e^{−s}) = σ(2s); at t_k = σ(2s_k) the summands "
                       "t_k e^{−s_k} and (1 − t_k) e^{s_k} simplify to the same expression for every k, so both sums "
                       "agree and the general closed form vanishes for every i and n; checked again by sympy.diff "
                       "of the guarded definition at t = σ(2s), n = 1..3.  (Each log(1 + Σ w e^{±s}) is a "
                       "log-sum-exp of affine functions of s, so zlpr is convex in s and this stationary point "
                       "is its minimum.)")


def _excess(group):
    """Π(1 + a) − (1 + Σ a), expanded."""
    return sp.expand(sp.Mul(*[1 + a for a in group]) - 1 - sum(group))


def _excess_ok(m, strict):
    """For m variables (positive if ``strict``, else nonnegative): the excess is a
    polynomial whose monomials all have degree ≥ 2 and positive coefficients,
    and it is the zero polynomial iff m ≤ 1."""
    a = sp.symbols(f"a0:{m}", positive=True) if strict else sp.symbols(f"a0:{m}", nonnegative=True)
    P = _excess(list(a))
    if m <= 1:
        return P == 0
    poly = sp.Poly(P, *a)
    return all(c > 0 for c in poly.coeffs()) and all(sum(e) >= 2 for e in poly.monoms()) and P.is_nonnegative


def claim_hard_bce_bound():
    # Lemma: Π(1 + a_i) − (1 + Σ a_i) = Σ_{|S| ≥ 2} Π_S a_i, checked for group sizes 0..6.
    for m in range(7):
        if not _excess_ok(m, strict=True):
            return ClaimResult("refuted", f"expansion lemma fails for a group of {m}")
    # Each hard labelling: Σ BCE = log Π_neg(1 + e^{s}) + log Π_pos(1 + e^{−s}), zlpr the same logs of 1 + Σ.
    for n in range(1, 5):
        s, t = ss(n), ts(n)
        for labels in itertools.product((0, 1), repeat=n):
            neg = [sp.exp(si) for si, li in zip(s, labels) if li == 0]
            pos = [sp.exp(-si) for si, li in zip(s, labels) if li == 1]
            bce = sum(bce_expr(si, li) for si, li in zip(s, labels))
            split = sum(sp.log(1 + a) for a in neg + pos)
            z = zlpr_expr(s, t).subs(dict(zip(t, labels)))
            if sp.simplify(bce - split) != 0 or sp.simplify(z - sp.log(1 + sum(neg)) - sp.log(1 + sum(pos))) != 0:
                return ClaimResult("refuted", f"n={n}, t={labels}: the split into groups fails", str(labels))
            excess = [_excess(g) for g in (neg, pos)]
            equal = all(e == 0 for e in excess)
            if equal != (len(neg) <= 1 and len(pos) <= 1):
                return ClaimResult("refuted", f"n={n}, t={labels}: equality case", str(labels))
            if not all(e == 0 or e.is_positive for e in excess):
                return ClaimResult("refuted", f"n={n}, t={labels}: excess {excess}", str(labels))
    return ClaimResult("proved on instances",
                       "Σ BCE = log Π_{neg}(1 + e^{s_i}) + log Π_{pos}(1 + e^{−s_j}) and zlpr = log(1 + Σ_{neg} e^{s_i}) "
                       "+ log(1 + Σ_{pos} e^{−s_j}) (sympy, every t ∈ {0,1}^n, n = 1..4); Π(1 + a) − (1 + Σ a) "
                       "expands to the sum of the products of ≥ 2 distinct a's with coefficient 1 (checked for "
                       "groups of 0..6 positive a's), so it is > 0 for a group of ≥ 2 and 0 otherwise; log is "
                       "increasing, so Σ BCE ≥ zlpr with equality iff at most one positive and at most one negative")


def claim_soft_bce_bound():
    t, s, x = sp.Rational(1, 2), sp.Integer(0), sp.Symbol("x", positive=True)
    z = zlpr_expr([s], [t])
    bce = bce_expr(s, t)
    gap = sp.simplify(sp.expand_log(z - bce, force=True))
    coeff2 = sp.series((1 + x) ** sp.Symbol("t"), x, 0, 3).removeO().coeff(x, 2)
    if not (z - bce).is_positive:
        return ClaimResult("proved on instances", "no counterexample at n = 1, t = 1/2, s = 0")
    return ClaimResult(
        "refuted",
        "n = 1, t = 1/2, s = 0: zlpr = 2·log(3/2) ≈ %.6f > Σ BCE = log 2 ≈ %.6f (difference %s > 0, exact in "
        "sympy).  The seed's step (1 + x)^t = 1 + t·x + ⋯ drops terms that are not nonnegative for t ∈ (0, 1): "
        "the x² coefficient is %s < 0.  Claims per_class_bound_symbolic and bce_below_per_class state what does hold: "
        "zlpr ≤ Σ_i zlpr(s_i, t_i) for every t ∈ [0,1]^n, and BCE_i ≤ zlpr(s_i, t_i) with equality iff "
        "t_i ∈ {0, 1}; so for n = 1 the inequality is reversed at every soft label, and for n ≥ 2 neither "
        "direction holds in general (t = (1, 1) gives Σ BCE > zlpr)"
        % (float(z), float(bce), gap, sp.factor(coeff2)),
        "zlpr(scores=[0.0], targets=[0.5]) = 2·log(3/2) ≈ 0.8109 > log 2 ≈ 0.6931 = BCE")


def claim_per_class_bound():
    for m in range(7):
        if not _excess_ok(m, strict=False):
            return ClaimResult("refuted", f"expansion lemma fails for a group of {m} nonnegative terms")
    for n in range(1, 5):
        s, t = ss(n), ts(n)
        z, _ = unguard(zlpr_expr(s, t))
        per = sum(unguard(zlpr_expr([si], [ti]))[0] for si, ti in zip(s, t))
        a = [ti * sp.exp(-si) for si, ti in zip(s, t)]
        b = [(1 - ti) * sp.exp(si) for si, ti in zip(s, t)]
        split = sum(sp.log(1 + v) for v in a + b)
        if sp.simplify(per - split) != 0 or sp.simplify(z - sp.log(1 + sum(a)) - sp.log(1 + sum(b))) != 0:
            return ClaimResult("refuted", f"n={n}: the split into groups fails")
        for li in range(2):  # at hard labels the single-class zlpr is the BCE
            if sp.simplify(unguard(zlpr_expr([s[0]], [li]))[0] - bce_expr(s[0], li)) != 0:
                return ClaimResult("refuted", f"single-class zlpr ≠ BCE at t = {li}")
    return ClaimResult("proved on instances",
                       "with a_i = t_i e^{−s_i} ≥ 0 and b_i = (1 − t_i) e^{s_i} ≥ 0, zlpr = log(1 + Σ a) + log(1 + Σ b) "
                       "and Σ_i zlpr(s_i, t_i) = Σ log(1 + a_i) + Σ log(1 + b_i) (sympy, n = 1..4); Π(1 + a) − (1 + Σ a) "
                       "is a polynomial with positive coefficients and no monomial of degree < 2 (groups of 0..6 "
                       "nonnegative a's), so zlpr ≤ Σ_i zlpr(s_i, t_i), with equality iff at most one t_i > 0 and at "
                       "most one t_i < 1; at hard labels zlpr(s_i, t_i) = BCE_i, which is claim hard_bce_bound_symbolic")


def claim_bce_below_per_class():
    w = sp.Symbol("w", nonnegative=True)
    x = sp.Symbol("x", positive=True)
    phi = sp.log(1 + w * x)
    second = sp.simplify(sp.diff(phi, w, 2))
    ends = (phi.subs(w, 0), sp.simplify(phi.subs(w, 1) - sp.log(1 + x)))
    if not (second.is_negative and ends == (0, 0)):
        return ClaimResult("refuted", f"φ'' = {second}, φ(0), φ(1) − log(1 + x) = {ends}")
    s, t = sp.Symbol("s", real=True), sp.Symbol("t", real=True)
    # BCE = t·φ(1; e^{−s}) + (1 − t)·φ(1; e^{s}); zlpr(s, t) = φ(t; e^{−s}) + φ(1 − t; e^{s})
    z, _ = unguard(zlpr_expr([s], [t]))
    chord = t * sp.log(1 + sp.exp(-s)) + (1 - t) * sp.log(1 + sp.exp(s))
    if sp.simplify(chord - bce_expr(s, t)) != 0:
        return ClaimResult("refuted", "BCE is not the chord of φ")
    return ClaimResult("proved",
                       "φ(w) = log(1 + w·x) with x > 0 has φ'' = %s < 0 (sympy), φ(0) = 0 and φ(1) = log(1 + x), so "
                       "by strict concavity φ(w) ≥ w·log(1 + x) on [0, 1] with equality iff w ∈ {0, 1}; applied to "
                       "w = t, x = e^{−s} and w = 1 − t, x = e^{s}: BCE(s, t) ≤ zlpr((s), (t)), equality iff t ∈ {0, 1}"
                       % second)


def claim_masking():
    stand_in = -sp.Integer(10) ** 400  # spec.quantity.MASKED_STANDIN
    for n in range(1, 4):
        s, t = ss(n + 1), ts(n + 1)
        full = zlpr_expr(s, t).subs(t[n], 0)  # the appended position's weights: t = 0, 1 − t = 1
        u = sp.exp(s[n])  # at a finite score the position enters only through e^{s_n} → 0 as s_n → −∞
        if full.has(sp.exp(-s[n])):
            return ClaimResult("refuted", f"n={n}: e^{{−s}} of a position with t = 0 survives: {full}")
        base = zlpr_expr(s[:n], t[:n])
        checks = [full.subs(u, 0) - base] + [sp.diff(full, s[j]).subs(u, 0) - sp.diff(base, s[j]) for j in range(n)]
        checks.append(sp.diff(full, s[n]).subs(u, 0))
        if any(sp.simplify(c) != 0 for c in checks):
            return ClaimResult("refuted", f"n={n}: value or gradient changes")
    # At the stand-in itself the guard fires: the t·e^{−s} term and both its partials are 0.
    sn, tn = sp.Symbol("s", real=True), sp.Symbol("t", real=True)
    term = pos_term(sn, tn)
    at = {sn: stand_in, tn: 0}
    vals = [term.subs(at), sp.diff(term, sn).subs(at), sp.diff(term, tn).subs(at)]
    if vals != [0, 0, 0]:
        return ClaimResult("refuted", f"at the masked stand-in: t·e^{{−s}}, ∂/∂s, ∂/∂t = {vals}")
    return ClaimResult("proved on instances",
                       "n = 1..3 plus one appended position with t = 0: its t·e^{−s} term is 0 (no e^{−s_n} left), "
                       "its (1 − t)·e^{s} term tends to 0 as s_n → −∞, and the value, every ∂/∂s_j (j < n) and "
                       "∂/∂s_n at e^{s_n} = 0 equal those of the n-position definition (each is a continuous "
                       "function of e^{s_n} there); at the masked stand-in s = −10^400 the guard makes t·e^{−s} and "
                       "its partials w.r.t. s and t exactly 0.  At s_n = −1e7 the change is below e^{−1e7} ≈ "
                       "10^{−4342945}, which no float64 result can show")


def claim_probability_optimum():
    s = sp.Symbol("s", real=True)
    t = _build_probability(1).outputs[0].subs(ss(1)[0], s)
    if sp.simplify(t * sp.exp(-s) - (1 - t) * sp.exp(s)) != 0:
        return ClaimResult("refuted", "σ(2s)·e^{−s} ≠ (1 − σ(2s))·e^{s}")
    return ClaimResult("proved",
                       "zlpr_probability(s) = σ(2s) satisfies t·e^{−s} = (1 − t)·e^{s} (sympy.simplify), which is "
                       "the optimum condition of zlpr (claim zlpr.optimum_symbolic: there every ∂zlpr/∂s_i = 0, for every n)")


def claim_probability_symmetry():
    s = sp.Symbol("s", real=True)
    if sp.simplify(sigma2(-s) + sigma2(s) - 1) != 0:
        return ClaimResult("refuted", "σ(−2s) + σ(2s) ≠ 1")
    return ClaimResult("proved", "σ(−2s) + σ(2s) − 1 simplifies to 0 for real s")


def claim_probability_range():
    s = sp.Symbol("s", real=True)
    p, q = sigma2(s), sp.simplify(1 - sigma2(s))
    slope = sp.simplify(sp.diff(p, s))
    if not (p.is_positive and q.is_positive and slope.is_positive):
        return ClaimResult("refuted", f"σ(2s) = {p}, 1 − σ(2s) = {q}, derivative {slope}")
    return ClaimResult("proved",
                       "for real s, σ(2s) = 1/(1 + e^{−2s}) > 0, 1 − σ(2s) = %s > 0 and dσ(2s)/ds = %s > 0 "
                       "(sympy sign assumptions): a strictly increasing map onto (0, 1)" % (q, slope))


# -- numerical claims (run on every implementation) -----------------------------------
# Claim-regime inputs: scores on the 2^-10 grid with |s| ≤ 2^10, distinct per row;
# targets in [0, 1] with exact 0s and 1s among them.  A backward-stable
# implementation commits ~C(n)·eps·(|zlpr| + Σ|∂zlpr/∂s_i|·|s_i|) with
# C(n) = 4(n + 8) (properties/dtypes.py); |zlpr| and the sensitivity are both
# ≤ 2(max|s| + log(n + 1)), which gives the row scale below.
def _tol(n, scale):
    return 4.0 * (n + 8) * EPS64 * scale


def _scale(s):
    n = s.shape[-1]
    return 1.0 + 2.0 * (np.abs(s).max(axis=-1) + np.log(n + 1.0))


def _log1p_sum_exp(a):
    """log(1 + Σ_i exp(a_i)) along the last axis, stable; a_i = −inf contributes 0."""
    m = np.maximum(0.0, a.max(axis=-1))
    return m + np.log(np.exp(-m) + np.exp(a - m[..., None]).sum(axis=-1))


def hard_numpy(s, labels):
    """The hard-label loss in NumPy, evaluated as two shifted log-sum-exps (exact inputs,
    every term ≤ 1 after the shift): error ≤ (n + 4)·eps·(1 + max|s| + log(n + 1)) per log."""
    neg = np.where(labels == 0, s, -np.inf)
    pos = np.where(labels == 1, -s, -np.inf)
    return _log1p_sum_exp(neg) + _log1p_sum_exp(pos)


def bce_numpy(s, labels):
    return np.where(labels == 1, np.logaddexp(0.0, -s), np.logaddexp(0.0, s)).sum(axis=-1)


def _check_hard(impl, scores, targets):
    n = scores.shape[-1]
    hard = np.round(targets)
    tol = 2 * _tol(n, _scale(scores))
    return [Comparison(impl(targets=hard), hard_numpy(scores, hard), tol,
                       "zlpr at t ∈ {0,1} = log(1 + Σ_neg e^{s}) + log(1 + Σ_pos e^{−s})")]


def _check_masked(impl, scores, targets):
    n = scores.shape[-1]
    batch = scores.shape[:-1]
    pad_s = np.concatenate([np.full(batch + (1,), -1e7), np.full(batch + (1,), -np.inf)], axis=-1)
    s_ext = np.concatenate([scores, pad_s], axis=-1)
    t_ext = np.concatenate([targets, np.zeros(batch + (2,))], axis=-1)
    scale = _scale(scores)
    tol = 2 * _tol(n + 2, scale)
    g_ext = impl.grad("scores", scores=s_ext, targets=t_ext)
    return [Comparison(impl(scores=s_ext, targets=t_ext), impl(), tol, "value with masked positions appended"),
            Comparison(g_ext[..., :n], impl.grad("scores"), tol[..., None],
                       "∂/∂scores of the original positions with masked positions appended"),
            Comparison(g_ext[..., n:], np.zeros(batch + (2,)), 0.0, "∂/∂scores at the masked positions is 0")]


def _check_hard_bce(impl, scores, targets):
    n = scores.shape[-1]
    hard = np.round(targets)
    z, bce = impl(targets=hard), bce_numpy(scores, hard)
    tol = _tol(n, _scale(scores)) + _tol(n, 1.0 + n * (np.abs(scores).max(axis=-1) + 1.0))
    equal = ((hard == 1).sum(axis=-1) <= 1) & ((hard == 0).sum(axis=-1) <= 1)
    return [Comparison(np.minimum(bce - z, 0.0), np.zeros_like(z), tol, "Σ BCE ≥ zlpr at hard labels"),
            Comparison(np.where(equal, z, bce), bce, tol, "Σ BCE = zlpr with ≤ 1 positive and ≤ 1 negative")]


def _check_per_class(impl, scores, targets):
    n = scores.shape[-1]
    z = impl()
    per = sum(impl(scores=scores[..., i:i + 1], targets=targets[..., i:i + 1]) for i in range(n))
    scale = _scale(scores)
    tol = _tol(n, scale) + n * _tol(1, scale)
    equal = ((targets > 0).sum(axis=-1) <= 1) & ((targets < 1).sum(axis=-1) <= 1)
    return [Comparison(np.minimum(per - z, 0.0), np.zeros_like(z), tol, "zlpr(s, t) ≤ Σ_i zlpr(s_i, t_i)"),
            Comparison(np.where(equal, z, per), per, tol, "equality with ≤ 1 nonzero t and ≤ 1 t below 1")]


OPT_SHRINK = 2.0 ** -8  # |s| ≤ 4 keeps the gradient well conditioned in t (see _opt_tol)


def _opt_tol(s):
    """At t = fl(σ(2s)) the exact gradient is not 0: each t_j (and the implementation's 1 − t_j) is off
    by ≤ 3·eps absolute (three roundings of 1/(1 + e^{−2s}), one of 1 − t), and Σ_j |∂g_i/∂t_j| ≤
    2e^{|s_i|} + 2Σ_j e^{|s_j|} ≤ 4n·e^{max|s|}; plus the implementation's own rounding of g (terms ≤ 1,
    relative error ≤ C(n)·eps·(1 + max|s|))."""
    n = s.shape[-1]
    m = np.abs(s).max(axis=-1, keepdims=True)
    return _tol(n, 1.0 + m) + 12.0 * n * np.exp(m) * EPS64


def _check_optimum(impl, scores, targets):
    s = scores * OPT_SHRINK  # exact: a power of two
    t = 1.0 / (1.0 + np.exp(-2.0 * s))
    g = impl.grad("scores", scores=s, targets=t)
    return [Comparison(g, np.zeros_like(g), np.broadcast_to(_opt_tol(s), g.shape),
                       "∂zlpr/∂scores = 0 at targets = σ(2·scores), scores scaled by 2^-8")]


def closed_gradient_numpy(s, t):
    """Seed 002's closed form, for |s| ≤ 4 (no overflow)."""
    a, b = t * np.exp(-s), (1 - t) * np.exp(s)
    return -a / (1 + a.sum(axis=-1, keepdims=True)) + b / (1 + b.sum(axis=-1, keepdims=True))


def _check_probability_optimum(impl, scores):
    s = scores * OPT_SHRINK
    p = impl(scores=s)
    g = closed_gradient_numpy(s, p)
    # the NumPy closed form adds ~(n + 8) roundings of terms ≤ e^4: covered by _opt_tol's first term × e^4
    tol = _opt_tol(s) + _tol(s.shape[-1], np.exp(np.abs(s).max(axis=-1, keepdims=True)))
    return [Comparison(g, np.zeros_like(g), np.broadcast_to(tol, g.shape),
                       "seed 002's ∂zlpr/∂s vanishes at targets = zlpr_probability(s), scores scaled by 2^-8")]


STRICT = 16.0  # |s| ≤ 16: min(σ(2s), 1 − σ(2s)) ≥ e^{−32}/(1 + e^{−32}) ≈ 1.3e-14 ≫ eps: p stays inside (0, 1)


def _check_probability_range(impl, scores):
    p = impl()
    inside = np.where(np.abs(scores) <= STRICT, (p > 0) & (p < 1), True).astype(np.float64)
    return [Comparison(np.clip(p, 0.0, 1.0), p, 0.0, "0 ≤ p ≤ 1"),
            Comparison(inside, np.ones_like(p), 0.0, f"0 < p < 1 where |s| ≤ {STRICT:g}")]


def _check_probability_symmetry(impl, scores):
    return [Comparison(impl(scores=-scores) + impl(), np.ones(scores.shape), 2 * _tol(1, 1.0), "p(−s) + p(s) = 1")]


_S = Arg("scores", "vector", doc="class scores (logits); masked positions hold −inf (or −1e7)")
# Gradients w.r.t. targets are not part of the contract: at t_i = 0 the derivative e^{−s_i}/(1 + Σ t e^{−s})
# overflows for very negative finite s_i, and implementations that drop weight-0 terms return 0 there.
_T = Arg("targets", "unit", doc="soft multi-label targets in [0, 1]; hard labels are 0/1")

ZLPR = Quantity(
    name="zlpr", family="multilabel",
    summary="multi-label 'softmax + cross-entropy' with soft labels (ZLPR)",
    formula="log(1 + Σ_i (1 − t_i)·e^{s_i}) + log(1 + Σ_i t_i·e^{−s_i})",
    args=(_S, _T), output="row", build=_build_zlpr,
    masking=Masking("scores", empty=0.0, value=float("-inf"), weights="targets"),
    conventions=(
        "a term whose weight (t_i or 1 − t_i) is exactly 0 is exactly 0 whatever s_i is (never 0·inf = NaN); "
        "clipping t before log t, as in seed 002's first implementation, breaks this",
        "masked positions carry s_i = −inf (or −1e7) and t_i = 0: they change neither the value nor the gradient "
        "w.r.t. the other scores, and their own score gradient is 0; a row with every position masked has "
        "value 0 and a zero gradient",
        "soft targets: any t_i in [0, 1]; at t ∈ {0, 1} the loss is the hard-label loss of the earlier post",
        "gradients w.r.t. scores only: ∂/∂t_i at t_i = 0 overflows for very negative s_i",
        "gradient w.r.t. targets: e^{−s_i}/(1 + Σ t e^{−s}) − e^{s_i}/(1 + Σ (1 − t) e^{s}) at every finite s, "
        "one-sided at t_i ∈ {0, 1}; 0 at a masked position (the guard's zero branch); ±inf where it exceeds the "
        "dtype's range (t_i = 0 at a finite but very negative s_i)",
        "the probability that matches the loss is σ(2s) (zlpr_probability), not σ(s)",
    ),
    reference=SOURCE,
    invalid={"targets": ["above 1", "negative entry", "wrong shape"], "scores": ["integer array"]},
    image=Image("log(1 + Σ …) + log(1 + Σ …) ≥ 0", 0.0),
    claims=(
        SymbolicClaim("hard_labels_symbolic", "at t ∈ {0,1}: zlpr = log(1 + Σ_{neg} e^{s}) + log(1 + Σ_{pos} e^{−s})",
                      claim_hard_labels, SOURCE),
        SymbolicClaim("gradient_closed_form",
                      "∂zlpr/∂s_i = −t_i e^{−s_i}/(1 + Σ t e^{−s}) + (1 − t_i) e^{s_i}/(1 + Σ (1 − t) e^{s})",
                      claim_gradient, SOURCE),
        SymbolicClaim("optimum_symbolic", "t_i e^{−s_i} = (1 − t_i) e^{s_i} ⇔ t_i = σ(2 s_i); there every ∂zlpr/∂s_i = 0",
                      claim_optimum, SOURCE),
        SymbolicClaim("hard_bce_bound_symbolic",
                      "hard labels: Σ_i BCE_i ≥ zlpr, equality iff ≤ 1 positive and ≤ 1 negative",
                      claim_hard_bce_bound, SOURCE),
        SymbolicClaim("soft_bce_bound", "hard-label inequality holds for soft labels: Σ_i BCE_i ≥ zlpr for t ∈ [0,1]^n",
                      claim_soft_bce_bound, "catalogue §3 (open question)"),
        SymbolicClaim("per_class_bound_symbolic",
                      "soft labels: zlpr(s, t) ≤ Σ_i zlpr(s_i, t_i), equality iff ≤ 1 t_i > 0 and ≤ 1 t_i < 1",
                      claim_per_class_bound, "catalogue §3 (what survives for soft labels)"),
        SymbolicClaim("bce_below_per_class",
                      "per class: t·log(1 + e^{−s}) + (1 − t)·log(1 + e^{s}) ≤ zlpr((s), (t)), equality iff t ∈ {0, 1}",
                      claim_bce_below_per_class, "catalogue §3 (what survives for soft labels)"),
        SymbolicClaim("masking_symbolic", "appending positions with s = −∞, t = 0 changes neither value nor gradient",
                      claim_masking, "catalogue §3"),
        NumericalClaim("hard_labels", "at targets rounded to {0, 1}, zlpr = the hard-label loss", _check_hard,
                       "2 × 4(n+8) eps × (1 + 2(max|s| + log(n+1))): the implementation and the NumPy log-sum-exp "
                       "each commit ~(n+8) roundings, relative to |zlpr| + Σ|∂zlpr/∂s|·|s| ≤ 2(max|s| + log(n+1))",
                       source=SOURCE),
        NumericalClaim("masked_positions",
                       "appending s = −1e7 and s = −inf with t = 0 leaves the value and ∂/∂scores unchanged",
                       _check_masked,
                       "values and gradients: 2 × 4(n+10) eps × (1 + 2(max|s| + log(n+1))): the masked terms are "
                       "exactly 0 (or e^{−1e7}, below float64's smallest subnormal), but a longer row may be summed "
                       "in another order; gradient entries are differences of terms ≤ 1 whose exponents carry the "
                       "same absolute error; the masked positions' own gradient must be exactly 0 (its exact value "
                       "e^{−1e7}/(1 + Σ) underflows to 0)", source="catalogue §3; seed 002 (clip-then-log)"),
        NumericalClaim("hard_bce_bound", "hard labels: Σ_i BCE_i ≥ zlpr, equal with ≤ 1 positive and ≤ 1 negative",
                       _check_hard_bce,
                       "4(n+8) eps × (1 + 2(max|s| + log(n+1))) for zlpr plus 4(n+8) eps × (1 + n(max|s| + 1)) for "
                       "the NumPy sum of n logaddexp terms, each ≤ |s_i| + log 2", source=SOURCE),
        NumericalClaim("per_class_bound", "zlpr(s, t) ≤ Σ_i zlpr(s_i, t_i) for soft t", _check_per_class,
                       "4(n+8) eps × scale for the full row plus n single-class evaluations at 4·9 eps × scale each, "
                       "scale = 1 + 2(max|s| + log(n+1))", source="catalogue §3"),
        NumericalClaim("optimum", "∂zlpr/∂scores = 0 at targets = σ(2·scores)", _check_optimum,
                       "scores scaled by 2^-8 (|s| ≤ 4); 4(n+8) eps × (1 + max|s|) for the gradient's own rounding plus "
                       "12n·e^{max|s|}·eps for the rounding of t = σ(2s) and of 1 − t (Σ_j |∂g_i/∂t_j| ≤ 4n·e^{max|s|}, |δt_j| ≤ 3 eps)",
                       source=SOURCE),
    ),
)

ZLPR_PROBABILITY = Quantity(
    name="zlpr_probability", family="multilabel",
    summary="the class probability that zlpr's optimum matches",
    formula="σ(2·s_i) = 1 / (1 + e^{−2·s_i})",
    args=(_S,), output="vector", build=_build_probability,
    conventions=("σ(2s), not σ(s): at t = σ(2s) every ∂zlpr/∂s_i vanishes (seed 002)",
                 "elementwise; finite scores (no masking convention); in float64 σ(2s) rounds to 1 for s ≳ 18.7 "
                 "and underflows to 0 for s ≲ −372.5"),
    reference=SOURCE,
    invalid={"scores": ["integer array"]},
    image=Image("a probability: σ(2s) ∈ [0, 1]", 0.0, 1.0),
    claims=(
        SymbolicClaim("is_zlpr_optimum", "t = zlpr_probability(s) satisfies t e^{−s} = (1 − t) e^{s}, zlpr's optimum",
                      claim_probability_optimum, SOURCE),
        SymbolicClaim("symmetry_symbolic", "p(−s) = 1 − p(s)", claim_probability_symmetry, SOURCE),
        SymbolicClaim("range_symbolic", "p maps the reals strictly increasingly onto (0, 1)", claim_probability_range, SOURCE),
        NumericalClaim("optimum", "seed 002's ∂zlpr/∂s vanishes at t = zlpr_probability(s)",
                       _check_probability_optimum,
                       "scores scaled by 2^-8 (|s| ≤ 4): the optimum claim's tolerance (rounding of t and of g) plus "
                       "4(n+8) eps × e^{max|s|} for the NumPy closed form's terms ≤ e^{|s|}", source=SOURCE),
        NumericalClaim("range", "0 ≤ p ≤ 1, and 0 < p < 1 where |s| ≤ 16", _check_probability_range,
                       "exact: a correctly computed σ(2s) never leaves [0, 1], and for |s| ≤ 16 its distance "
                       "e^{−32}/(1 + e^{−32}) ≈ 1.3e-14 from 1 (or from 0) is far above the rounding at 1",
                       source=SOURCE),
        NumericalClaim("symmetry", "p(−s) + p(s) = 1", _check_probability_symmetry,
                       "2 × 4·9 eps: two evaluations of a few elementwise operations on values ≤ 1", source=SOURCE),
    ),
)

QUANTITIES = (ZLPR, ZLPR_PROBABILITY)
