"""Catalogue §2, classification (seeds 000, 003, 004): cross_entropy, entropy,
kl_divergence, soft_accuracy, logistic_loss, hinge_loss.  EXACT lives in
``spec.exact``.

0·log 0 = 0 is written as a Piecewise whose zero branch also has a zero
derivative (the convention of xlogy and of double-where implementations:
the one-sided derivative −log p − 1 is +∞ there).  A class masked by a −inf
logit with target weight 0 contributes nothing to value or gradient.
"""

from __future__ import annotations

import zlib

import numpy as np
import sympy as sp

from .quantity import (
    Arg,
    ClaimResult,
    Comparison,
    Definition,
    Image,
    Masking,
    NumericalClaim,
    Quantity,
    Shift,
    SymbolicClaim,
    exponent_size,
    is_masked,
)
from .smoothing import softmax_expr

SEED000 = "seed 000 (Su, 'How to Train Your Accuracy?', EXACT); catalogue §2"
SEED003 = "seed 003 ('Focus on cross-entropy loss and KL divergence'); catalogue §2"
SEED004 = "seed 004 (Su, 'On Function Smoothing'); catalogue §2"
EPS64 = float(np.finfo(np.float64).eps)


def _syms(prefix, n, **assumptions):
    return sp.symbols(f"{prefix}0:{n}", **assumptions)


def xlogy(p, y):
    """p·y with 0·y = 0 for any y (value and derivative)."""
    return sp.Piecewise((0, sp.Eq(p, 0)), (p * y, True))


def log_softmax_expr(x):
    lse = sp.log(sum(sp.exp(xi) for xi in x))
    return [xi - lse for xi in x]


def ce_expr(x, t):
    """−Σ t_c log softmax(x)_c; a weight-0 term at a masked (−inf) logit is 0."""
    return -sum(sp.Piecewise((0, sp.Eq(tc, 0) & is_masked(xc)), (tc * lc, True))
                for xc, tc, lc in zip(x, t, log_softmax_expr(x)))


def entropy_expr(p):
    return -sum(xlogy(pi, sp.log(pi)) for pi in p)


def kl_expr(p, q):
    return sum(xlogy(pi, sp.log(pi) - sp.log(qi)) for pi, qi in zip(p, q))


def logistic_expr(f, l):
    return sp.log(1 + sp.exp(-l * f))


def hinge_expr(f, l):
    return sp.Piecewise((1 - l * f, l * f < 1), (0, True))


# -- builds ---------------------------------------------------------------------
def _build_ce(n):
    x, t = _syms("x", n, real=True), _syms("t", n, nonnegative=True)
    return Definition({"logits": x, "target": t}, [ce_expr(x, t)])


def _build_entropy(n):
    p = _syms("p", n, nonnegative=True)
    return Definition({"p": p}, [entropy_expr(p)])


def _build_kl(n):
    p, q = _syms("p", n, nonnegative=True), _syms("q", n, nonnegative=True)
    return Definition({"p": p, "q": q}, [kl_expr(p, q)])


def _build_soft_accuracy(n, labels):
    x = _syms("x", n, real=True)
    return Definition({"logits": x}, [softmax_expr(x, 1)[labels]])


def _build_elementwise(expr):
    def build(n):
        f, l = _syms("f", n, real=True), _syms("l", n, real=True)
        return Definition({"f": f, "l": l}, [expr(fi, li) for fi, li in zip(f, l)])
    return build


# -- symbolic claims ----------------------------------------------------------------
P, Q = sp.symbols("p q", positive=True)


def claim_ce_h_kl():
    # Termwise: −p log q = −p log p + p log(p/q) for p, q > 0; the sums follow term by term.
    d = sp.expand_log(-P * sp.log(Q) - (-P * sp.log(P) + P * sp.log(P / Q)), force=True)
    if sp.simplify(d) == 0:
        return ClaimResult("proved", "termwise identity −p log q = −p log p + p log(p/q) for p, q > 0 (SymPy expand_log)")
    return ClaimResult("refuted", f"residual {d}")


def claim_seed003_kl():
    # Seed 003 writes KL(P‖Q) = Σ P log(P + Q); at P = Q = uniform(3) that is log(2/3) < 0.
    p = [sp.Rational(1, 3)] * 3
    v = sum(pi * sp.log(pi + qi) for pi, qi in zip(p, p))
    if v.is_negative:
        return ClaimResult("refuted", "seed 003's Σ P log(P + Q) is negative at P = Q, so it is no divergence (typo for log(P/Q))",
                           f"P = Q = (1/3, 1/3, 1/3): Σ P log(P + Q) = {sp.nsimplify(v)} ≈ {float(v):.6f} < 0")
    return ClaimResult("proved", f"value {v}")


def claim_ce_gradient():
    for n in (2, 3, 4):
        x, t = _syms("x", n, real=True), list(_syms("t", n, nonnegative=True))
        t_last = 1 - sum(t[:-1])  # Σ t = 1
        ce = -sum(tc * lc for tc, lc in zip(t, log_softmax_expr(x))).subs(t[-1], t_last)  # finite logits: no masked branch
        sm = softmax_expr(x, 1)
        tt = t[:-1] + [t_last]
        for i in range(n):
            d = sp.simplify(sp.diff(ce, x[i]) - (sm[i] - tt[i]))
            if d != 0:
                return ClaimResult("refuted", f"n = {n}, i = {i}: residual {d}")
    return ClaimResult("proved on instances", "∂CE/∂x_i − (softmax_i − t_i) simplifies to 0 for n = 2, 3, 4 with Σ t = 1 (finite logits)")


def claim_log_bound():
    p = sp.Symbol("p", positive=True)
    g = -sp.log(p) - (1 - p)
    increasing = sp.solveset(sp.diff(g, p) > 0, p, sp.Interval.Lopen(0, 1))
    if g.subs(p, 1) == 0 and increasing is sp.S.EmptySet:
        return ClaimResult("proved", "g(p) = −log p − (1 − p) has g(1) = 0 and g'(p) = 1 − 1/p ≤ 0 on (0, 1], so g ≥ 0 there")
    return ClaimResult("refuted", f"g(1) = {g.subs(p, 1)}, g' > 0 on {increasing}")


def claim_log_series():
    p = sp.Symbol("p", positive=True)
    s = sp.series(-sp.log(p), p, 1, 3).removeO()
    if sp.expand(s - ((1 - p) + (1 - p) ** 2 / 2)) == 0:
        return ClaimResult("proved", "series(−log p, p = 1, order 3) = (1 − p) + (1 − p)²/2: near convergence CE is a first-order "
                           "copy of 1 − soft accuracy (seed 000's log x ≈ x − 1)")
    return ClaimResult("refuted", f"series is {s}")


def claim_entropy_uniform():
    for n in (2, 3, 5):
        p = [sp.Rational(1, n)] * n
        if sp.simplify(entropy_expr(p) - sp.log(n)) != 0:
            return ClaimResult("refuted", f"n = {n}")
    return ClaimResult("proved on instances", "H(uniform(n)) = log n for n = 2, 3, 5")


def claim_gumbel_max():
    # P(y = argmax(x + g)) = ∫ f(g) Π_{j≠y} F(g + x_y − x_j) dg with Gumbel f, F; u = e^{−g} turns it
    # into ∫_0^∞ e^{−u (1 + Σ_{j≠y} e^{x_j − x_y})} du = 1/(1 + c): softmax(x)_y, for any n.
    u, c = sp.symbols("u c", positive=True)
    val = sp.integrate(sp.exp(-u * (1 + c)), (u, 0, sp.oo))
    if sp.simplify(val - 1 / (1 + c)) == 0:
        return ClaimResult("proved", "with u = e^{−g}, P(y = argmax(x + g)) = ∫_0^∞ e^{−u(1 + c)} du = 1/(1 + c), "
                           "c = Σ_{j≠y} e^{x_j − x_y}: softmax(x)_y for every n (SymPy integrates the last step)")
    return ClaimResult("refuted", f"integral {val}")


def claim_soft_accuracy_limit():
    k = sp.Symbol("k", positive=True)
    x = [sp.Integer(2), sp.Integer(0), sp.Integer(-1)]
    vals = [sp.limit(softmax_expr(x, k)[y], k, sp.oo) for y in range(3)]
    if vals == [1, 0, 0]:
        return ClaimResult("proved on instances", "lim_{k→∞} softmax(k·x)[y] = 1[y = argmax x] at x = (2, 0, −1), every y")
    return ClaimResult("refuted", f"limits {vals}")


B = sp.Symbol("b", real=True)
TOY = [(sp.Rational(-1, 4), -1), (sp.Integer(0), -1), (sp.Rational(1, 4), 1)]


def _toy_logistic(t=1):
    return sum(logistic_expr(t * (x - B), l) for x, l in TOY)


def claim_toy_logistic():
    d = sp.diff(_toy_logistic(), B)
    lo, hi = sp.Rational(700085, 10 ** 6), sp.Rational(700095, 10 ** 6)
    # convex: each term log(1 + e^{−l(x − b)}) has second derivative σ'(·) > 0 in b
    convex = all(sp.simplify(sp.diff(logistic_expr(x - B, l), B, 2) - sp.exp(-l * (x - B)) / (1 + sp.exp(-l * (x - B))) ** 2) == 0
                 for x, l in TOY)
    if convex and d.subs(B, lo).evalf(40) < 0 < d.subs(B, hi).evalf(40):
        return ClaimResult("proved", "Σ logistic loss is strictly convex in b and its derivative changes sign on "
                           "(0.700085, 0.700095): the minimiser is b ≈ 0.70009 (seed 000 rounds it to 0.7)")
    return ClaimResult("refuted", "no sign change of the derivative near 0.70009")


def claim_toy_correct():
    sol = sp.Intersection(*[sp.solveset(l * (x - B) > 0, B, sp.S.Reals) for x, l in TOY])
    if sol == sp.Interval.open(0, sp.Rational(1, 4)):
        return ClaimResult("proved", "sign(x − b) = label for all three points ⇔ b ∈ (0, 1/4) (SymPy solveset)")
    return ClaimResult("refuted", f"solution set {sol}")


def claim_toy_temperature():
    t, m = sp.Symbol("t", positive=True), sp.Symbol("m", positive=True)
    to_zero = sp.limit(sp.log(1 + sp.exp(-t * m)), t, sp.oo) == 0
    mn = sp.Symbol("mn", nonpositive=True)
    floor = sp.simplify(sp.log(1 + sp.exp(-t * mn)) - sp.log(2))  # ≥ 0 since −t·mn ≥ 0
    if to_zero and (floor.is_nonnegative or sp.log(1 + sp.exp(-t * mn)).subs(mn, 0) == sp.log(2)):
        return ClaimResult("proved", "with f = t(x − b): a point with margin m = l(x − b) > 0 has log(1 + e^{−tm}) → 0 as t → ∞; "
                           "one with m ≤ 0 keeps ≥ log 2 for every t. So inf_t L = 0 exactly when all margins are positive: "
                           "b ∈ (0, 1/4), approached only as t → ∞")
    return ClaimResult("refuted", "limit check failed")


ETA = sp.Symbol("eta", positive=True)
F = sp.Symbol("f", real=True)


def claim_logistic_calibration():
    risk = ETA * logistic_expr(F, 1) + (1 - ETA) * logistic_expr(F, -1)
    sol = sp.solve(sp.diff(risk, F), F)
    if len(sol) == 1 and sp.simplify(sp.exp(sol[0]) - ETA / (1 - ETA)) == 0:
        return ClaimResult("proved", "∂/∂f [η ℓ(f, +1) + (1 − η) ℓ(f, −1)] = 0 ⇔ f = log(η/(1 − η)), whose sign is that of 2η − 1 "
                           "(the risk is convex)")
    return ClaimResult("refuted", f"stationary points {sol}")


def _slopes(expr, var, points):
    """Slopes of a piecewise-linear expression between (and beyond) sorted breakpoints."""
    pts = sorted(points)
    probes = [pts[0] - 1] + [(a + b) / 2 for a, b in zip(pts, pts[1:])] + [pts[-1] + 1]
    return [sp.diff(expr, var).subs(var, p) for p in probes]


def claim_hinge_calibration():
    out = []
    for eta, best in ((sp.Rational(7, 10), 1), (sp.Rational(1, 5), -1), (sp.Rational(9, 10), 1)):
        risk = eta * hinge_expr(F, 1) + (1 - eta) * hinge_expr(F, -1)
        s = _slopes(risk, F, [-1, 1])  # slopes on (−∞, −1), (−1, 1), (1, ∞)
        argmin = 1 if (s[1] < 0 < s[2]) else (-1 if (s[0] < 0 < s[1]) else None)
        out.append(argmin == best)
    # general: on (−1, 1) the risk is 1 + f(1 − 2η); outside it grows with slopes η and 1 − η (> 0)
    mid = sp.simplify((ETA * (1 - F) + (1 - ETA) * (1 + F)) - (1 + F * (1 - 2 * ETA)))
    if all(out) and mid == 0:
        return ClaimResult("proved", "on [−1, 1] the conditional risk is 1 + f(1 − 2η) and it increases outside, so the minimiser is "
                           "sign(2η − 1) (checked symbolically, and by slopes at η = 0.7, 0.2, 0.9)")
    return ClaimResult("refuted", f"minimisers {out}")


def claim_toy_hinge():
    L = sum(hinge_expr(x - B, l) for x, l in TOY)
    s = _slopes(L, B, [sp.Rational(-3, 4), sp.Rational(3, 4), sp.Integer(1)])
    # slopes on (−∞, −3/4), (−3/4, 3/4), (3/4, 1), (1, ∞): −, −, 0, + ⇒ argmin set is exactly [3/4, 1]
    if s[0] < 0 and s[1] < 0 and s[2] == 0 and s[3] > 0:
        return ClaimResult("proved", f"Σ hinge is piecewise linear with slopes {[int(v) for v in s]} on (−∞, −3/4), (−3/4, 3/4), "
                           "(3/4, 1), (1, ∞): minimised exactly on [0.75, 1]")
    return ClaimResult("refuted", f"slopes {s}")


# -- numerical claims -----------------------------------------------------------------
def _onehot(labels, n):
    return np.eye(n)[labels]


def _check_ce_labels_onehot(impl, logits, target):
    n = logits.shape[-1]
    a, b = impl(), impl(target=_onehot(target, n))
    # Same logits, same arithmetic up to the order of a sum: C·eps·(|CE| + |logits|) absolute.
    tol = 32 * EPS64 * (1 + np.abs(b) + np.max(np.abs(logits), axis=-1))
    return [Comparison(a, b, tol, "integer labels vs one-hot targets")]


def _is_labels(logits, target):
    return np.issubdtype(np.asarray(target).dtype, np.integer)


def _softmax_np(x):
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _check_ce_gradient(impl, logits, target):
    n = logits.shape[-1]
    t = _onehot(target, n) if _is_labels(logits, target) else target
    g = impl.grad("logits")
    expected = _softmax_np(logits) * t.sum(axis=-1, keepdims=True) - t
    # softmax and the gradient each carry a few roundings of values ≤ 1: 16·eps absolute.
    return [Comparison(g, expected, 16 * EPS64, "∂CE/∂logits = softmax·Σt − t")]


def _check_entropy_range(impl, p):
    h = impl()
    n = p.shape[-1]
    # p is rounded to float64 after normalising: Σp = 1 ± n·eps; H ≤ log n + (small), H ≥ 0 up to rounding.
    tol = 16 * n * EPS64 * (1 + np.log(n))
    return [Comparison(np.minimum(h, 0.0), np.zeros_like(h), tol, "H ≥ 0"),
            Comparison(np.maximum(h - np.log(n), 0.0), np.zeros_like(h), tol, "H ≤ log n")]


def _check_entropy_uniform(impl, p):
    n = p.shape[-1]
    u = np.full(p.shape, 1.0 / n)
    # 1/n is rounded (relative eps/2): H moves by ≤ n·eps·(1 + log n)/2, plus the sum's roundings.
    return [Comparison(impl(p=u), np.full(p.shape[:-1], np.log(n)), 8 * n * EPS64 * (1 + np.log(n)), "H(uniform) = log n")]


def _check_kl_nonnegative(impl, p, q):
    d = impl()
    # Gibbs: KL ≥ 0 for normalised p, q; the draws sum to 1 ± n·eps, and each term p·log(p/q) rounds with
    # error ≤ 4·eps·|p·log(p/q)| ≤ 4·eps·p·(|log p| + |log q|) ≤ 4·eps·(1 + 2·log 64): 64·eps·n covers both.
    n = p.shape[-1]
    tol = 64 * n * EPS64
    return [Comparison(np.minimum(d, 0.0), np.zeros_like(d), tol, "KL(p‖q) ≥ 0")]


def _check_kl_self(impl, p, q):
    d = impl(q=p)
    # log p − log p = 0 exactly when computed termwise; allow the roundings of a cancelling form.
    return [Comparison(d, np.zeros_like(d), 16 * p.shape[-1] * EPS64, "KL(p‖p) = 0")]


def _check_kl_support(impl, p, q):
    q2 = q.copy()
    i = np.unravel_index(np.argmax(p), p.shape)  # p > 0 there (rows sum to 1)
    q2[i] = 0.0
    d = impl(q=q2)
    return [Comparison(np.isposinf(d[i[:-1]]).astype(float), 1.0, 0.0, "p > 0 = q gives +inf")]


def _check_soft_accuracy_onehot(impl, logits, labels):
    # claim-grid logits are distinct multiples of 2^-10 ≤ 2^10: scaled by 2^20 every gap is ≥ 1024, so the
    # softmax is one-hot up to e^{-1024} (below float64's smallest subnormal): exact 0/1 expected.
    acc = (np.argmax(logits, axis=-1) == labels).astype(float)
    return [Comparison(impl(logits=logits * 2.0 ** 20), acc, 0.0, "soft accuracy at one-hot predictions = accuracy")]


def _check_gumbel(impl, logits, labels):
    """Statistical: the frequency of label == argmax(logits + Gumbel noise) in M draws must lie within 6
    standard errors of soft_accuracy (normal approximation, floor 1/M on the variance).  A correct
    implementation fails with probability ≤ 2e-9 per row (two-sided 6σ); the draws are seeded from the
    input bytes, so the check is deterministic for a given input."""
    m = 20000
    p = impl()
    rng = np.random.default_rng(zlib.crc32(logits.tobytes()))
    g = rng.gumbel(size=(m,) + logits.shape)
    freq = (np.argmax(logits + g, axis=-1) == labels).mean(axis=0)
    se = np.sqrt(np.maximum(p * (1 - p), 1.0 / m) / m)
    return [Comparison(freq, p, 6 * se, "P(label = argmax(x + Gumbel)) = softmax(x)[label]")]


def _check_logistic_symmetry(impl, f, l):
    # log(1 + e^{−l·f}) depends on l·f only: (f, l) and (−f, −l) give bitwise the same product.
    return [Comparison(impl(f=-f, l=-l), impl(), 0.0, "ℓ(f, l) = ℓ(−f, −l)")]


def _check_logistic_calibration(impl, f, l, eta):
    fstar = np.log(eta / (1 - eta)) * np.ones_like(f)
    gp = impl.grad("f", f=fstar, l=np.ones_like(l))
    gm = impl.grad("f", f=fstar, l=-np.ones_like(l))
    # η·(−σ(−f*)) + (1 − η)·σ(f*) = 0; each derivative is ≤ 1 in size with a few roundings: 8·eps.
    return [Comparison(eta * gp + (1 - eta) * gm, np.zeros_like(f), 8 * EPS64, "risk is stationary at f* = log(η/(1 − η))")]


def _check_hinge_zero(impl, f, l):
    margin = l * f
    out = impl()
    return [Comparison(np.where(margin >= 1, out, 0.0), 0.0, 0.0, "ℓ = 0 where l·f ≥ 1"),
            Comparison(np.where(margin < 1, out, 0.0), np.where(margin < 1, 1 - margin, 0.0),
                       EPS64 * (1 + np.abs(margin)), "ℓ = 1 − l·f where l·f < 1 (one rounding)")]


def _not_kink(f, l):
    return bool(np.all(l * f != 1))


# -- exact ranges (spec.quantity.Image) of rows that sum to 1 only up to rounding ------------------
def _entropy_hi(p, **_):
    total = np.sum(np.asarray(p, dtype=np.float64), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, total * np.log(np.shape(p)[-1] / total), 0.0)


def _kl_lo(p, q, **_):
    pt, qt = np.sum(np.asarray(p, dtype=np.float64), axis=-1), np.sum(np.asarray(q, dtype=np.float64), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pt > 0, pt * np.log(pt / qt), 0.0)


# -- records -----------------------------------------------------------------------------
CROSS_ENTROPY = Quantity(
    name="cross_entropy", family="classification",
    summary="cross-entropy of logits against integer labels or probability targets",
    formula="CE(x, t) = −Σ_c t_c · log softmax(x)_c",
    args=(Arg("logits", "vector"), Arg("target", "target", grad=True,
                                       doc="int labels of shape logits.shape[:-1], or probabilities of logits' shape")),
    output="row", build=_build_ce,
    masking=Masking("logits", empty=None, weights="target"),
    image=Image("−Σ t log softmax ≥ 0: every log-probability is ≤ 0", 0.0),
    shifts=(Shift("CE(x + c, t) = CE(x, t), so Σ_i ∂CE/∂x_i = 0", {"logits": None}, 0.0,
                  lambda logits, **_: exponent_size(logits)),),
    claims=(
        SymbolicClaim("ce_is_h_plus_kl", "CE(P, Q) = H(P) + KL(P‖Q)", claim_ce_h_kl, SEED003),
        SymbolicClaim("gradient_softmax_minus_target", "∂CE/∂logits = softmax(logits) − target (Σ target = 1)",
                      claim_ce_gradient, SEED003),
        SymbolicClaim("log_bound", "−log p ≥ 1 − p on (0, 1]", claim_log_bound, SEED000),
        SymbolicClaim("log_series", "−log p = (1 − p) + (1 − p)²/2 + O((1 − p)³) as p → 1", claim_log_series, SEED000),
        NumericalClaim("labels_as_onehot", "CE(x, labels) = CE(x, onehot(labels))", _check_ce_labels_onehot,
                       "32·eps·(1 + |CE| + max|x|): the same arithmetic up to summation order", precondition=_is_labels),
        NumericalClaim("gradient", "∂CE/∂logits = softmax(logits)·Σt − t", _check_ce_gradient,
                       "16·eps absolute: softmax entries and the gradient are ≤ 1 with a few roundings"),
    ),
    conventions=("target: integer labels (batch shape) or probability vectors (logits' shape)",
                 "a class with logit −inf and target weight 0 contributes nothing to value or gradient",
                 "∂/∂target_c at a masked class is 0 by convention (the term is absent)"),
    reference=SEED003,
    invalid={"target": ["label n", "label -1", "wrong shape"], "logits": ["integer array"]},
)

ENTROPY = Quantity(
    name="entropy", family="classification",
    summary="Shannon entropy of probability vectors",
    formula="H(p) = −Σ_i p_i log p_i, 0·log 0 = 0",
    args=(Arg("p", "simplex", grad=True),), output="row", build=_build_entropy,
    masking=Masking("p", empty=0.0, value=0.0),
    image=Image("0 ≤ H(p) ≤ P·log(n/P), P = Σ p (log n for a normalised p; drawn rows sum to 1 only up to "
                "the dtype's rounding)", 0.0, _entropy_hi),
    claims=(
        SymbolicClaim("uniform_symbolic", "H(uniform(n)) = log n", claim_entropy_uniform, SEED003),
        NumericalClaim("range", "0 ≤ H(p) ≤ log n", _check_entropy_range,
                       "16·n·eps·(1 + log n): p sums to 1 only up to rounding"),
        NumericalClaim("uniform", "H(uniform(n)) = log n", _check_entropy_uniform,
                       "8·n·eps·(1 + log n): 1/n is rounded"),
    ),
    conventions=("0·log 0 = 0, with derivative 0 at p_i = 0 (the one-sided derivative is +∞)",),
    reference=SEED003,
    invalid={"p": ["integer array", "negative entry", "above 1"]},
)

KL_DIVERGENCE = Quantity(
    name="kl_divergence", family="classification",
    summary="Kullback–Leibler divergence KL(p‖q)",
    formula="KL(p‖q) = Σ_i p_i log(p_i / q_i), 0·log(0/q) = 0, p > 0 = q gives +∞",
    args=(Arg("p", "simplex", grad=True), Arg("q", "simplex", grad=True)), output="row", build=_build_kl,
    masking=Masking("p", empty=0.0, value=0.0),
    image=Image("KL ≥ P·log(P/Q), P = Σ p, Q = Σ q (the log-sum inequality; Gibbs' KL ≥ 0 for normalised rows, "
                "which drawn rows are only up to the dtype's rounding)", _kl_lo),
    claims=(
        SymbolicClaim("seed003_kl_typo", "seed 003's KL(P‖Q) = Σ P log(P + Q) is a divergence", claim_seed003_kl, SEED003),
        NumericalClaim("nonnegative", "KL(p‖q) ≥ 0 (Gibbs)", _check_kl_nonnegative,
                       "64·n·eps absolute: draws sum to 1 up to rounding, terms round by 4·eps·(|log p| + |log q|)"),
        NumericalClaim("self", "KL(p‖p) = 0", _check_kl_self, "16·n·eps absolute: a cancelling log p − log p"),
        NumericalClaim("support", "p_i > 0 = q_i gives +∞", _check_kl_support, "exact: +inf expected"),
    ),
    conventions=("0·log(0/q) = 0 (also for q = 0), with derivative 0 in p at p_i = 0", "p > 0 = q gives +∞"),
    reference=SEED003,
    invalid={"p": ["negative entry", "above 1", "integer array"], "q": ["wrong shape", "negative entry"]},
)

SOFT_ACCURACY = Quantity(
    name="soft_accuracy", family="classification",
    summary="smooth accuracy: the softmax probability of the true label",
    formula="softacc(x, y) = softmax(x)_y",
    args=(Arg("logits", "vector"), Arg("labels", "label")), output="row", build=_build_soft_accuracy,
    masking=Masking("logits", empty=None, weights="labels"),
    image=Image("a probability: softmax(x)_y ∈ [0, 1]", 0.0, 1.0),
    shifts=(Shift("softmax(x + c)_y = softmax(x)_y, so Σ_i ∂/∂x_i = 0", {"logits": None}, 0.0,
                  lambda logits, **_: exponent_size(logits)),),
    claims=(
        SymbolicClaim("onehot_limit", "at one-hot predictions soft accuracy = accuracy", claim_soft_accuracy_limit, SEED004),
        SymbolicClaim("gumbel_max_symbolic", "P(y = argmax(x + g)) = softmax(x)_y, g i.i.d. standard Gumbel", claim_gumbel_max,
                      SEED000),
        NumericalClaim("onehot", "soft accuracy = accuracy at one-hot predictions", _check_soft_accuracy_onehot,
                       "exact: gaps ≥ 1024 make every off-label probability < e^-1024, below float64's subnormals"),
        NumericalClaim("gumbel_max", "frequency of y = argmax(x + Gumbel) matches softmax(x)_y (20000 draws)", _check_gumbel,
                       "6 standard errors: false alarm ≤ 2e-9 per row (normal approximation, variance floor 1/M)"),
    ),
    conventions=("labels: integers of shape logits.shape[:-1]", "a −inf logit is a masked class; labels never point at one"),
    reference=SEED004 + "; seed 000",
    invalid={"labels": ["label n", "label -1"], "logits": ["integer array"]},
)

LOGISTIC_LOSS = Quantity(
    name="logistic_loss", family="classification",
    summary="logistic loss of a score f against a label l ∈ {−1, +1}",
    formula="ℓ(f, l) = log(1 + exp(−l·f))",
    args=(Arg("f", "vector"), Arg("l", "sign")), output="vector", build=_build_elementwise(logistic_expr),
    image=Image("log(1 + e^{−l·f}) > 0", 0.0),
    claims=(
        SymbolicClaim("calibration", "argmin_f η ℓ(f, +1) + (1 − η) ℓ(f, −1) = log(η/(1 − η))", claim_logistic_calibration, SEED003),
        SymbolicClaim("toy_optimum", "seed 000 toy data: Σ logistic loss of f = x − b is minimised at b ≈ 0.70009",
                      claim_toy_logistic, SEED000),
        SymbolicClaim("toy_correct", "seed 000 toy data: all points classified correctly ⇔ b ∈ (0, 0.25)", claim_toy_correct, SEED000),
        SymbolicClaim("toy_temperature", "with f = t(x − b), inf over t of the loss is 0, reached only for b ∈ (0, 0.25) as t → ∞",
                      claim_toy_temperature, SEED000),
        NumericalClaim("symmetry", "ℓ(f, l) = ℓ(−f, −l)", _check_logistic_symmetry, "exact: l·f is the same product"),
        NumericalClaim("calibration_stationary", "η ∂ℓ(f*, +1) + (1 − η) ∂ℓ(f*, −1) = 0 at f* = log(η/(1 − η))",
                       _check_logistic_calibration, "8·eps: two derivatives ≤ 1 with a few roundings each",
                       extra={"eta": "eta"}),
    ),
    conventions=("l ∈ {−1, +1}, floating or integer, broadcast against f",),
    reference=SEED000 + "; " + SEED003,
    invalid={"l": ["value 0"], "f": ["integer array"]},
)

HINGE_LOSS = Quantity(
    name="hinge_loss", family="classification",
    summary="hinge loss of a score f against a label l ∈ {−1, +1}",
    formula="ℓ(f, l) = max(0, 1 − l·f)",
    args=(Arg("f", "vector"), Arg("l", "sign")), output="vector", build=_build_elementwise(hinge_expr),
    differentiable=_not_kink,
    image=Image("max(0, 1 − l·f) ≥ 0", 0.0),
    claims=(
        SymbolicClaim("calibration", "argmin_f η ℓ(f, +1) + (1 − η) ℓ(f, −1) = sign(2η − 1)", claim_hinge_calibration, SEED003),
        SymbolicClaim("toy_optimum", "seed 000 toy data: Σ hinge loss of f = x − b is minimised exactly on [0.75, 1]",
                      claim_toy_hinge, SEED000),
        NumericalClaim("piecewise", "ℓ = 0 for l·f ≥ 1, 1 − l·f otherwise", _check_hinge_zero,
                       "exact zero; one rounding of 1 − l·f"),
    ),
    conventions=("l ∈ {−1, +1}, floating or integer, broadcast against f", "gradients are not checked at the kink l·f = 1"),
    reference=SEED000 + "; " + SEED003,
    invalid={"l": ["value 0"], "f": ["integer array"]},
)

QUANTITIES = (CROSS_ENTROPY, ENTROPY, KL_DIVERGENCE, SOFT_ACCURACY, LOGISTIC_LOSS, HINGE_LOSS)
