"""Catalogue §4, the Lovász losses (Berman, Rannen Triki and Blaschko, "The
Lovász-Softmax loss", CVPR 2018): the Lovász extension of the Jaccard loss,
a convex, piecewise-linear surrogate of 1 − IoU.

For a ground truth G ⊆ {1..n} the Jaccard loss of an error set M is the set
function Δ(M) = 1 − |G ∩ P| / |G ∪ P| with P = G Δ M the prediction that
makes exactly the errors M.  Its Lovász extension at an error vector e is

    Δ̄(e) = Σ_t g_t e_(t),   g_t = Δ({π_1..π_t}) − Δ({π_1..π_{t−1}}),

with π the order of decreasing errors.  Which order applies is the discrete
*structure* of a concrete input (``Quantity.structure``): ``build`` receives
the order (per class for lovasz_softmax) and returns the linear expression
valid on that order cone, with the increments g_t computed here by SymPy from
the set function (never from the reference code's cumsum formula).

Both quantities reduce over every element of their inputs (layout "all": the
whole array is one sample, flattened in C order; scalar output):

* ``lovasz_hinge(logits, labels)``: e = 1 − logits·(2·labels − 1), loss
  Δ̄(relu(e)); the structure also holds how many errors are positive.
* ``lovasz_softmax(probs, labels)``: probs (..., C), labels (...) — (N, C)
  and (N,) in the catalogue, any leading shape flattened to N; per class c
  the errors |1[label = c] − p_c| = 1 − p_c on the class's pixels and p_c
  elsewhere (probs lie in [0, 1]), Δ̄ against G = {label = c}, averaged over
  the classes present in ``labels`` (the reference code's classes='present').

Ties between errors: the value does not depend on how they are broken (the
two adjacent cones' expressions agree where the tied errors are equal: the
symbolic claim piecewise_linear), but the gradient jumps, so the gradient
properties skip inputs whose errors are tied or nearly tied (``differentiable``).
"""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, NumericalClaim, Quantity, SymbolicClaim

SOURCE = ("Berman, Rannen Triki, Blaschko, 'The Lovász-Softmax loss: a tractable surrogate for the optimization of the "
          "intersection-over-union measure in neural networks', CVPR 2018 (arXiv:1705.08790); catalogue §4")
EPS64 = float(np.finfo(np.float64).eps)


# -- the set function and its Lovász extension -------------------------------------------
def jaccard_set_loss(m, g):
    """Δ(M) for indicator tuples ``m`` (errors) and ``g`` (ground truth): the
    prediction p = g XOR m, Δ = 1 − |G ∩ P| / |G ∪ P| (a SymPy Rational).

    Convention: G ∪ P = ∅ (no ground truth and no error) gives 0 — two empty
    sets agree perfectly.  It is the only 0/0, and it matches the reference
    code, whose first increment is J(π_1) − 0 (J(∅) = 0 for every G)."""
    m, g = [sp.Integer(v) for v in m], [sp.Integer(v) for v in g]
    p = [gi + mi - 2 * gi * mi for gi, mi in zip(g, m)]
    inter = sum((gi * pi for gi, pi in zip(g, p)), sp.Integer(0))
    union = sum((gi + pi - gi * pi for gi, pi in zip(g, p)), sp.Integer(0))
    return sp.Integer(0) if union == 0 else 1 - inter / union


@functools.lru_cache(maxsize=4096)
def increments(gt_sorted: tuple) -> tuple:
    """g_t = Δ(first t) − Δ(first t − 1) along an order, for the ground truth
    read in that order (``gt_sorted``): the Lovász extension's coefficients."""
    n = len(gt_sorted)
    values = [jaccard_set_loss([1] * t + [0] * (n - t), gt_sorted) for t in range(n + 1)]
    return tuple(b - a for a, b in zip(values, values[1:]))


def lovasz_extension(errors, gt, order, active=None):
    """Σ_t g_t e_{π_t} over the first ``active`` positions of ``order`` (all by default)."""
    g = increments(tuple(int(gt[i]) for i in order))
    k = len(order) if active is None else active
    return sum((g[t] * errors[order[t]] for t in range(k)), sp.Integer(0))


def _decreasing(keys):
    """The stable order of decreasing ``keys`` (exact rationals; ties in index order)."""
    return tuple(sorted(range(len(keys)), key=lambda i: -keys[i]))


#: Relative gap below which two errors count as tied for gradients: an
#: implementation decides the sort order from errors it computes, correctly
#: rounded in float32 (2^-24 relative) at worst where the catalogue allows a
#: float32 computation, so two errors closer than that may legitimately come
#: out in either order, and the gradient of the other order cone is as right
#: as this one's.  2^-20 leaves a margin of 16 such roundings.
TIE_GAP = Fraction(1, 2 ** 20)


def _separated(errors) -> bool:
    """Errors (exact rationals ≥ 0 that matter) pairwise apart by more than TIE_GAP relative."""
    e = sorted(errors, reverse=True)
    return all(a - b > TIE_GAP * a for a, b in zip(e, e[1:]))


# -- lovasz_hinge --------------------------------------------------------------------------
def _hinge_symbols(n):
    return sp.symbols(f"x0:{n}", real=True), sp.symbols(f"l0:{n}", real=True)


def hinge_errors(x, lab):
    return [1 - xi * (2 * li - 1) for xi, li in zip(x, lab)]


def _exact_margins(logits, labels):
    """x·(2l − 1) as exact rationals (a sign flip of a float is exact): e = 1 − margin."""
    x = np.ravel(np.asarray(logits, dtype=np.float64))
    lab = np.ravel(np.asarray(labels)).astype(np.int64)
    return [Fraction(float(v)) * (1 if li == 1 else -1) for v, li in zip(x, lab)], [int(v) for v in lab]


def hinge_structure(logits, labels):
    """The order of decreasing errors (ties in index order), the labels and
    the number of positive errors, from the exact margins x·(2l − 1)."""
    margins, lab = _exact_margins(logits, labels)
    return {"order": _decreasing([-m for m in margins]), "labels": tuple(lab),
            "active": sum(1 for m in margins if m < 1)}


def _build_hinge(n, order, labels, active):
    x, lab = _hinge_symbols(n)
    e = hinge_errors(x, lab)
    return Definition({"logits": x, "labels": lab}, [lovasz_extension(e, labels, order, active)])


def hinge_differentiable(logits, labels, **_):
    """No error exactly 0 (relu's kink; its sign is exact in any precision) and
    the positive errors pairwise apart by more than TIE_GAP (see there)."""
    margins, _ = _exact_margins(logits, labels)
    errors = [1 - m for m in margins]
    return all(e != 0 for e in errors) and _separated([e for e in errors if e > 0])


# -- lovasz_softmax -----------------------------------------------------------------------
def _softmax_symbols(rows, classes):
    return [[sp.Symbol(f"p{i}_{c}", real=True) for c in range(classes)] for i in range(rows)]


def softmax_errors(p, labels, c):
    return [1 - p[i][c] if labels[i] == c else p[i][c] for i in range(len(labels))]


def _exact_class_errors(probs, labels):
    """{present class c: exact errors |1[label = c] − p_c| as rationals}."""
    p = np.asarray(probs, dtype=np.float64)
    lab = [int(v) for v in np.ravel(np.asarray(labels))]
    p = p.reshape(len(lab), -1)
    return {c: [Fraction(1) - Fraction(float(p[i, c])) if lab[i] == c else Fraction(float(p[i, c]))
                for i in range(len(lab))] for c in sorted(set(lab))}, lab, p.shape[1]


def softmax_structure(probs, labels):
    """Per present class its order of decreasing exact errors; the labels; C."""
    errors, lab, classes = _exact_class_errors(probs, labels)
    return {"labels": tuple(lab), "classes": classes,
            "orders": tuple((c, _decreasing(e)) for c, e in errors.items())}


def _build_softmax(n, labels, classes, orders):
    rows = len(labels)
    if n != rows * classes:
        raise ValueError(f"lovasz_softmax: a sample of n = {n} entries is not N·C = {rows}·{classes}")
    p = _softmax_symbols(rows, classes)
    per_class = [lovasz_extension(softmax_errors(p, labels, c), [int(v == c) for v in labels], order)
                 for c, order in orders]
    return Definition({"probs": tuple(itertools.chain.from_iterable(p))}, [sum(per_class) / len(per_class)])


def softmax_differentiable(probs, labels, **_):
    """Every present class's errors pairwise apart by more than TIE_GAP (zeros included)."""
    errors, _, _ = _exact_class_errors(probs, labels)
    return all(_separated(e) for e in errors.values())


# -- symbolic claims ------------------------------------------------------------------------
def _jaccard_counts(m, g):
    """|M| / |G ∪ M| (0 for M = ∅): the Jaccard loss written with counts, independently of
    jaccard_set_loss (|G ∪ P| = |G ∪ M| and |G ∪ P| − |G ∩ P| = |M| for P = G Δ M)."""
    size = sum(m)
    return sp.Integer(0) if size == 0 else sp.Rational(size, sum(1 for a, b in zip(m, g) if a or b))


def _sorting_orders(e):
    """Every order that sorts ``e`` decreasingly (every tie-break)."""
    return [o for o in itertools.permutations(range(len(e))) if all(e[a] >= e[b] for a, b in zip(o, o[1:]))]


def claim_agrees_with_jaccard():
    """Lovász extension = set function at every binary error vector (every tie-break), and
    lovasz_hinge's own structure + build at logits that make those errors."""
    cases = 0
    for n in range(1, 5):
        for g in itertools.product((0, 1), repeat=n):
            for b in itertools.product((0, 1), repeat=n):
                want = _jaccard_counts(b, g)
                for order in _sorting_orders(b):
                    got = lovasz_extension([sp.Integer(v) for v in b], g, order)
                    if got != want:
                        return ClaimResult("refuted", f"G = {g}, errors {b}, order {order}: {got} ≠ {want}",
                                           f"G = {g}, e = {b}")
                # the quantity's own path: x = s·(1 − b) gives e = b exactly
                x = np.array([(2 * gi - 1) * (1 - bi) for gi, bi in zip(g, b)], dtype=np.float64)
                s = hinge_structure(x, np.array(g))
                d = _build_hinge(n, **s)
                val = d.outputs[0].subs({xi: sp.Integer(int(v)) for xi, v in zip(d.symbols["logits"], x)}).subs(
                    dict(zip(d.symbols["labels"], g)))
                if val != want:
                    return ClaimResult("refuted", f"lovasz_hinge at G = {g}, errors {b}: {val} ≠ {want}", str(x))
                cases += 1
    return ClaimResult("proved on instances",
                       f"n = 1..4, every ground truth G (the empty one included) and every binary error vector "
                       f"({cases} cases): Σ_t g_t e_(t) equals |M| / |G ∪ M| (the Jaccard loss counted directly) "
                       "along every order that sorts e decreasingly (every tie-break), and lovasz_hinge's "
                       "structure + build at logits s·(1 − b) gives the same rational")


def claim_empty_ground_truth():
    for n in range(1, 7):
        for order in itertools.permutations(range(n)):
            g = increments(tuple(0 for _ in order))
            if g != (1,) + (0,) * (n - 1):
                return ClaimResult("refuted", f"n = {n}: increments {g}")
    return ClaimResult("proved on instances",
                       "G = ∅, n = 1..6: the increments are (1, 0, …, 0), so the loss is relu(e_(1)), the largest "
                       "error (max(0, 1 + max logits) for lovasz_hinge) — the reference code's gts = 0 case, where "
                       "its union gts + cumsum(1 − gt) never vanishes")


def _error_symbols(n):
    return sp.symbols(f"e0:{n}", real=True)


def claim_piecewise_linear():
    """Within a cone: degree ≤ 1 in the inputs; across a cone wall: the adjacent expressions agree."""
    cases = 0
    for n in range(1, 5):
        e = _error_symbols(n)
        for g in itertools.product((0, 1), repeat=n):
            for order in itertools.permutations(range(n)):
                for k in range(n + 1):
                    d = _build_hinge(n, order, g, k)
                    expr = d.outputs[0].subs(dict(zip(d.symbols["labels"], g)))
                    if sp.Poly(expr, *d.symbols["logits"]).total_degree() > 1:
                        return ClaimResult("refuted", f"G = {g}, order {order}: {expr} not linear")
                    cases += 1
                full = lovasz_extension(e, g, order)
                for t in range(n - 1):  # the wall e_{π_t} = e_{π_t+1}
                    a, b = order[t], order[t + 1]
                    swapped = order[:t] + (b, a) + order[t + 2:]
                    if sp.expand((full - lovasz_extension(e, g, swapped)).subs(e[b], e[a])) != 0:
                        return ClaimResult("refuted", f"G = {g}: orders {order} and {swapped} differ at e_{a} = e_{b}")
                for k in range(n):  # the relu wall e_{π_k+1} = 0
                    step = lovasz_extension(e, g, order, k + 1) - lovasz_extension(e, g, order, k)
                    if sp.expand(step.subs(e[order[k]], 0)) != 0:
                        return ClaimResult("refuted", f"G = {g}, order {order}: relu wall {k}")
    return ClaimResult("proved on instances",
                       f"n = 1..4, every ground truth, order and number of positive errors ({cases} cones of "
                       "lovasz_hinge): the expression is a polynomial of degree ≤ 1 in the logits (sympy.Poly); "
                       "the expressions of two orders that differ by one adjacent swap agree where the swapped "
                       "errors are equal, and those of k and k + 1 positive errors where the (k + 1)-th is 0: the "
                       "function is continuous and piecewise linear, and the tie-break never changes a value. "
                       "For every n the expression Σ_t g_t e_(t) has rational g_t and errors affine in the inputs")


def claim_homogeneous():
    lam = sp.Symbol("lambda", positive=True)
    n, t = sp.Symbol("n", integer=True, positive=True), sp.Symbol("t", integer=True)
    e, g = sp.IndexedBase("e", real=True), sp.IndexedBase("g")
    a, b = sp.symbols("a b", real=True)

    def relu(u):
        return (u + sp.Abs(u)) / 2
    same_order = sp.sign(sp.factor(lam * a - lam * b)) == sp.sign(a - b)
    gap = sp.simplify(sp.Sum(g[t] * relu(lam * e[t]), (t, 1, n)) - lam * sp.Sum(g[t] * relu(e[t]), (t, 1, n)))
    if not same_order or gap != 0:
        return ClaimResult("refuted", f"sign(λa − λb) = sign(a − b): {same_order}; Σ g relu(λe) − λ Σ g relu(e) = {gap}")
    return ClaimResult("proved",
                       "for λ > 0 sympy reduces sign(λa − λb) = sign(λ(a − b)) to sign(a − b), so λe has the order of e (the same "
                       "cone, hence the same increments g_t, which depend only on the order and the ground truth), "
                       "and Σ_{t=1}^{n} g_t relu(λ e_t) − λ Σ_{t=1}^{n} g_t relu(e_t) simplifies to 0 for symbolic n "
                       "(relu(u) = (u + |u|)/2): Δ̄(λe) = λ Δ̄(e), with or without the relu; in lovasz_hinge's "
                       "inputs, logits (1 − λ)·s + λ·x (s = 2l − 1) have errors λ·e")


def _subsets(n):
    return list(itertools.product((0, 1), repeat=n))


def claim_convex():
    """Submodularity of Δ on instances, and the Lovász extension as the max over orders of the linear forms."""
    sub = 0
    for n in range(1, 5):
        for g in _subsets(n):
            for a in _subsets(n):
                for b in _subsets(n):
                    union, meet = [x | y for x, y in zip(a, b)], [x & y for x, y in zip(a, b)]
                    if jaccard_set_loss(union, g) + jaccard_set_loss(meet, g) > jaccard_set_loss(a, g) + jaccard_set_loss(b, g):
                        return ClaimResult("refuted", f"not submodular: G = {g}, A = {a}, B = {b}", f"{g}, {a}, {b}")
                    sub += 1
    dom = 0
    for n in range(1, 5):
        gaps = sp.symbols(f"a0:{n - 1}", nonnegative=True)
        c = sp.Symbol("c", real=True)
        for g in _subsets(n):
            if any(v < 0 for v in increments(tuple(g))):
                return ClaimResult("refuted", f"G = {g}: a negative increment {increments(tuple(g))}")
            for order in itertools.permutations(range(n)):
                # the cone of ``order``: e_{π_t} = c + a_t + … + a_{n−2}, every a ≥ 0
                e = [None] * n
                for t, i in enumerate(order):
                    e[i] = c + sum(gaps[t:], sp.Integer(0))
                mine = lovasz_extension(e, g, order)
                for other in itertools.permutations(range(n)):
                    diff = sp.Poly(sp.expand(mine - lovasz_extension(e, g, other)), c, *gaps)
                    coeffs = dict(zip(diff.monoms(), diff.coeffs()))
                    if any(v < 0 for v in coeffs.values()) or coeffs.get((1,) + (0,) * (n - 1), 0) != 0:
                        return ClaimResult("refuted", f"G = {g}: order {other} exceeds {order} on its cone")
                    dom += 1
    return ClaimResult("proved on instances",
                       f"(1) the Jaccard loss is submodular, Δ(A ∪ B) + Δ(A ∩ B) ≤ Δ(A) + Δ(B), for every ground "
                       f"truth and every A, B ⊆ {{1..n}}, n = 1..4 ({sub} triples; Yu and Blaschko prove it for all "
                       "n), so by Lovász (1983) its extension is convex; (2) directly: on each order cone (errors "
                       "c + a_t + … with gaps a ≥ 0 symbolic) the cone's linear form minus every other order's form "
                       f"has nonnegative coefficients in the gaps and none in c ({dom} pairs, n = 1..4), so Δ̄ is the "
                       "maximum of the linear forms of all orders — convex. The increments are ≥ 0 (Δ is monotone), "
                       "so Δ̄ is nondecreasing in each error; lovasz_hinge = Δ̄ ∘ relu ∘ (affine in the logits) and "
                       "lovasz_softmax = mean of Δ̄ ∘ (affine in the probabilities on [0, 1]) are therefore convex "
                       "in their inputs for fixed labels")


def claim_softmax_miou():
    cases = 0
    for n_rows in range(1, 4):
        for classes in range(1, 4):
            for lab in itertools.product(range(classes), repeat=n_rows):
                for pred in itertools.product(range(classes), repeat=n_rows):
                    probs = np.eye(classes)[list(pred)]
                    s = softmax_structure(probs, np.array(lab))
                    d = _build_softmax(n_rows * classes, **s)
                    val = d.outputs[0].subs({p: sp.Integer(int(v)) for p, v in zip(d.symbols["probs"], probs.ravel())})
                    present = sorted(set(lab))
                    ious = [sp.Rational(sum(1 for y, q in zip(lab, pred) if y == c and q == c),
                                        sum(1 for y, q in zip(lab, pred) if y == c or q == c)) for c in present]
                    want = 1 - sum(ious) / len(present)
                    if val != want:
                        return ClaimResult("refuted", f"labels {lab}, predictions {pred}: {val} ≠ {want}", f"{lab}, {pred}")
                    cases += 1
    return ClaimResult("proved on instances",
                       f"N = 1..3 rows, C = 1..3 classes, every labelling and every one-hot prediction ({cases} "
                       "cases): lovasz_softmax's structure + build equals 1 − the mean IoU over the classes present "
                       "in the labels, counted directly")


# -- numerical claims (on every implementation) ---------------------------------------------
def _c(n):
    """C(n) = 4(n + 8), as in properties.dtypes: ~n roundings of a sum plus a few elementwise ones."""
    return 4.0 * (n + 8)


def jaccard_numpy(m, g):
    """|M| / |G ∪ M| for boolean arrays (0 when M = ∅)."""
    size = np.count_nonzero(m)
    return 0.0 if size == 0 else size / np.count_nonzero(m | g)


def _mixing(eta):
    """A mixing weight k/64, k in 1..63: dyadic, so mixtures of grid inputs stay exact."""
    return (1 + int(eta * 62.999)) / 64.0


def _grid_like(seed, shape):
    """A second claim-regime array (multiples of 2^-10 in [−2^10, 2^10])."""
    return np.random.default_rng(seed).integers(-2 ** 20, 2 ** 20 + 1, size=shape) / 1024.0


_TOL_EXACT_ERRORS = ("4(n + 8) eps relative to the values compared, n the number of elements: on the claim grid "
                     "(multiples of 2^-10, |x| ≤ 2^10, dyadic mixing weights) the logits, their mixtures and the "
                     "errors 1 − x·s are exact in float64, so only the increments (a few roundings each) and the "
                     "sum of n nonnegative terms round, each value within 4(n + 8) eps of itself")


def _check_hinge_binary(impl, logits, labels):
    g = labels == 1
    m = logits > 0  # a binary error vector taken from the draw
    z = np.where(g, 1.0, -1.0) * (1.0 - m)  # errors 1 − z·s = m exactly
    want = jaccard_numpy(m, g)
    return [Comparison(impl(logits=z), want, _c(logits.size) * EPS64 * want,
                       "lovasz_hinge at logits s·(1 − b) (errors b ∈ {0, 1}) = |M| / |G ∪ M|")]


def _check_hinge_empty(impl, logits, labels):
    zeros = np.zeros_like(labels)
    want = max(0.0, 1.0 + float(np.max(logits)))
    return [Comparison(impl(labels=zeros), want, 2 * EPS64 * want,
                       "labels all 0 (G = ∅): lovasz_hinge = max(0, 1 + max logits)")]


def _check_hinge_homogeneous(impl, logits, labels):
    s = np.where(labels == 1, 1.0, -1.0)
    base = impl()
    out = []
    for lam in (0.25, 0.5, 2.0, 4.0):
        got = impl(logits=(1 - lam) * s + lam * logits)
        out.append(Comparison(got, lam * base, _c(logits.size) * EPS64 * (np.abs(got) + lam * np.abs(base)),
                              f"f((1 − λ)s + λx) = λ f(x), λ = {lam} (errors scaled by λ)"))
    return out


def _convex_comparisons(impl, wrt, x, y, lam, n, slack, what):
    fx, fy = impl(**{wrt: x}), impl(**{wrt: y})
    z = lam * x + (1 - lam) * y
    fz = impl(**{wrt: z})
    rhs = lam * fx + (1 - lam) * fy
    chord_tol = _c(n) * EPS64 * (np.abs(fz) + np.abs(rhs) + slack)
    gx = impl.grad(wrt, **{wrt: x})
    lin = fx + np.sum(gx * (y - x))
    sub_tol = _c(n) * EPS64 * (np.abs(fx) + np.abs(fy) + np.sum(np.abs(gx * (y - x))) + slack)
    return [Comparison(fz, np.minimum(fz, rhs), chord_tol, f"f(λx + (1 − λ)y) ≤ λf(x) + (1 − λ)f(y), λ = {lam}, {what}"),
            Comparison(lin, np.minimum(lin, fy), sub_tol, f"f(y) ≥ f(x) + ⟨∇f(x), y − x⟩ (the gradient is a subgradient), {what}")]


def _check_hinge_convex(impl, logits, labels, seed, eta):
    y = _grid_like(seed, logits.shape)
    return _convex_comparisons(impl, "logits", logits, y, _mixing(eta), logits.size, 0.0,
                               "y a second grid array")


def _onehot(idx, classes):
    return np.eye(classes)[idx]


def _miou_loss_numpy(pred, labels):
    present = np.unique(labels)
    ious = [np.count_nonzero((labels == c) & (pred == c)) / np.count_nonzero((labels == c) | (pred == c)) for c in present]
    return 1.0 - float(np.mean(ious))


def _check_softmax_binary(impl, probs, labels):
    pred = np.argmax(probs, axis=-1)
    want = _miou_loss_numpy(pred, labels)
    return [Comparison(impl(probs=_onehot(pred, probs.shape[-1])), want, _c(probs.size) * EPS64 * want,
                       "lovasz_softmax at one-hot probabilities (binary errors) = 1 − mean IoU over the present classes")]


_TOL_ROUNDED_PROBS = ("4(n + 8) eps·(the values compared + 2), n = N·C: each value within 4(n + 8) eps of itself and of "
                      "its sensitivity to its inputs, which is ≤ 1 (Σ_t g_t = Δ(all) ≤ 1 and p ≤ 1), plus the mixed "
                      "probabilities' own rounding (≤ eps per entry, moving the value by ≤ eps)")


def _check_softmax_homogeneous(impl, probs, labels):
    target = _onehot(labels, probs.shape[-1])
    base = impl()
    out = []
    for lam in (0.25, 0.5, 0.75):
        got = impl(probs=lam * probs + (1 - lam) * target)
        out.append(Comparison(got, lam * base, _c(probs.size) * EPS64 * (np.abs(got) + lam * np.abs(base) + 2),
                              f"f(λp + (1 − λ)onehot(labels)) = λ f(p), λ = {lam} (errors scaled by λ)"))
    return out


def _check_softmax_convex(impl, probs, labels, seed, eta):
    w = np.random.default_rng(seed).uniform(1 / 64, 1, size=probs.shape)
    q = w / w.sum(axis=-1, keepdims=True)
    return _convex_comparisons(impl, "probs", probs, q, _mixing(eta), probs.size, 2.0,
                               "q random rows on the simplex")


# -- records ---------------------------------------------------------------------------------
_SHARED_CLAIMS = (
    SymbolicClaim("agrees_with_jaccard", "the Lovász extension equals the Jaccard loss at binary error vectors",
                  claim_agrees_with_jaccard, SOURCE),
    SymbolicClaim("piecewise_linear", "linear on each order cone, continuous across cone walls (ties)",
                  claim_piecewise_linear, SOURCE),
    SymbolicClaim("homogeneous", "positively homogeneous in the errors: Δ̄(λe) = λΔ̄(e), λ > 0",
                  claim_homogeneous, SOURCE),
    SymbolicClaim("convex", "convex (Lovász extension of a submodular set function), nondecreasing in each error",
                  claim_convex, SOURCE),
)

LOVASZ_HINGE = Quantity(
    name="lovasz_hinge", family="overlap",
    summary="binary Lovász hinge: Lovász extension of the Jaccard loss at hinge errors, over all elements",
    formula="Σ_t g_t relu(e_(t)), e = 1 − logits·(2·labels − 1) sorted decreasingly, g_t = Δ_J(first t) − Δ_J(first t − 1)",
    args=(Arg("logits", "vector", doc="logits, any shape; every element is one pixel of one binary problem"),
          Arg("labels", "binary", doc="0/1 labels of the shape of logits")),
    output="row", layout="all", build=_build_hinge, structure=hinge_structure, differentiable=hinge_differentiable,
    conventions=("reduces over all elements (the reference code's per_image=False)",
                 "labels all 0 (G = ∅): Δ_J(∅) = 0 and Δ_J(M) = 1 otherwise, so the loss is max(0, 1 + max logits) "
                 "(the reference code's gts = 0 case)",
                 "ties between errors: any order gives the same value; gradients are those of one adjacent cone",
                 "relu'(0) = 0; gradients w.r.t. logits only"),
    reference=SOURCE,
    invalid={"labels": ["value 2", "wrong shape"], "logits": ["integer array"]},
    image=Image("Σ_t g_t relu(e_(t)) ≥ 0: the Lovász extension of the increasing Jaccard loss has g_t ≥ 0", 0.0),
    claims=_SHARED_CLAIMS + (
        SymbolicClaim("empty_ground_truth", "G = ∅: the loss is relu of the largest error", claim_empty_ground_truth, SOURCE),
        NumericalClaim("jaccard_at_binary", "at logits making binary errors, the loss is the set Jaccard loss",
                       _check_hinge_binary, _TOL_EXACT_ERRORS, source=SOURCE),
        NumericalClaim("empty_ground_truth", "labels all 0: lovasz_hinge = max(0, 1 + max logits)", _check_hinge_empty,
                       "2 eps relative: the increments are exactly (1, 0, …, 0) and 1 + x rounds once on either side",
                       source=SOURCE),
        NumericalClaim("homogeneous", "f((1 − λ)s + λx) = λ f(x): scaling the errors by λ scales the loss",
                       _check_hinge_homogeneous, _TOL_EXACT_ERRORS, source=SOURCE),
        NumericalClaim("convex", "convex in the logits (chord inequality) and the gradient is a subgradient",
                       _check_hinge_convex, _TOL_EXACT_ERRORS + "; the subgradient inequality adds 4(n + 8) eps·Σ|∇f||y − x| "
                       "for the dot product", extra={"seed": "seed", "eta": "eta"}, source=SOURCE),
    ),
)

LOVASZ_SOFTMAX = Quantity(
    name="lovasz_softmax", family="overlap",
    summary="Lovász-Softmax: per class the Lovász extension of the Jaccard loss, mean over present classes",
    formula="mean over classes c in labels of Σ_t g^c_t e^c_(t), e^c = |1[labels = c] − probs[:, c]| sorted decreasingly",
    args=(Arg("probs", "simplex", grad=True, doc="class probabilities, shape (N, C), rows on the simplex"),
          Arg("labels", "label", doc="class indices in 0..C−1, shape (N,)")),
    output="row", layout="all", min_rows=2, max_size=24, build=_build_softmax, structure=softmax_structure, differentiable=softmax_differentiable,
    conventions=("averages over the classes present in labels (the reference code's classes='present'); an absent "
                 "class contributes nothing, so every averaged class has a nonempty ground truth",
                 "errors are 1 − p on the class's rows and p elsewhere (probs lie in [0, 1])",
                 "ties between errors: any order gives the same value; gradients are those of one adjacent cone",
                 "gradients w.r.t. probs only"),
    reference=SOURCE,
    invalid={"labels": ["label n", "label -1", "wrong shape"], "probs": ["above 1", "negative entry", "integer array"]},
    image=Image("a mean of Lovász extensions of the Jaccard loss at errors in [0, 1]: in [0, 1]", 0.0, 1.0),
    claims=_SHARED_CLAIMS + (
        SymbolicClaim("miou_at_onehot", "at one-hot probabilities the loss is 1 − mean IoU over the present classes",
                      claim_softmax_miou, SOURCE),
        NumericalClaim("jaccard_at_binary", "at one-hot probabilities, 1 − mean IoU over the present classes",
                       _check_softmax_binary, "4(n + 8) eps relative, n = N·C: errors are exactly 0 or 1, so only "
                       "the increments, the sums and the mean round", source=SOURCE),
        NumericalClaim("homogeneous", "f(λp + (1 − λ)onehot(labels)) = λ f(p) for λ in (0, 1]",
                       _check_softmax_homogeneous, _TOL_ROUNDED_PROBS, source=SOURCE),
        NumericalClaim("convex", "convex in the probabilities (chord inequality) and the gradient is a subgradient",
                       _check_softmax_convex, _TOL_ROUNDED_PROBS + "; the subgradient inequality adds "
                       "4(n + 8) eps·Σ|∇f||q − p| for the dot product", extra={"seed": "seed", "eta": "eta"},
                       source=SOURCE),
    ),
)

QUANTITIES = (LOVASZ_HINGE, LOVASZ_SOFTMAX)
