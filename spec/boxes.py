"""Catalogue §5, boxes (seed 001): box_iou, giou, diou, ciou.

Boxes are rows (x1, y1, x2, y2) with x1 ≤ x2, y1 ≤ y2 in continuous
coordinates (seed 001's ``get_iou`` adds 1 to every width and height: a
different convention, left to its adapter).  Every quantity is elementwise
over pairs of rows.

One set of formulas (:func:`terms`) serves two readings:

* the *closed* form, with ``Max``/``Min``, ``atan(w/h)`` and plain quotients,
  over non-degenerate boxes: the symbolic claims work on it;
* the *branch* form the reference differentiates: for a concrete input row
  :func:`_structure` fixes which argument every ``Max``/``Min`` picks, whether
  the intersection is empty on each axis, and which quotient is 0/0, so the
  expression is smooth (``sympy.diff`` never meets ``Max`` or ``Heaviside``).

Conventions for degenerate boxes (zero width or height: outside the domain of
the catalogue, but every implementation must return finite values there):

* IoU = 0 when the union has zero area (both boxes degenerate);
* GIoU's (|C| − |a ∪ b|)/|C| = 0 when the enclosing box C has zero area;
* DIoU's ρ²/c² = 0 when c = 0 (both boxes the same point);
* CIoU's aspect angle atan(w/h) is extended by its limits: π/2 for a box of
  zero height and positive width, 0 for a point (what ``atan2(w, h)`` gives);
* CIoU's α = v/((1 − IoU) + v) is 0 where (1 − IoU) + v = 0, i.e. a = b
  (non-degenerate), where v = 0 anyway.

Gradients exist where no coordinates tie (Max/Min kinks), no interval just
touches (the clamp at 0) and no box is degenerate (:func:`_differentiable`);
elsewhere the properties check only that the gradient is finite.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import sympy as sp

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, NumericalClaim, Quantity, Shift, SymbolicClaim

SOURCE = ("catalogue §5 (seed 001); Rezatofighi et al., 'Generalized Intersection over Union', CVPR 2019; "
          "Zheng et al., 'Distance-IoU Loss', AAAI 2020")
EPS64 = float(np.finfo(np.float64).eps)
HALF_PI = sp.pi / 2


def box_symbols(name):
    return sp.symbols(f"{name}0:4", real=True)


# -- the formulas, read two ways ---------------------------------------------------------
class Closed:
    """Max/Min, atan(w/h) and plain quotients: the catalogue's formulas on non-degenerate boxes."""

    def hi(self, k, u, v):
        return sp.Max(u, v)

    def lo(self, k, u, v):
        return sp.Min(u, v)

    def clamp(self, axis, t):
        return sp.Max(0, t)

    def ratio(self, flag, num, den):
        return num / den

    def angle(self, box, w, h):
        return sp.atan(w / h)


class Branches:
    """The smooth branch that :func:`_structure` chose for one input row."""

    def __init__(self, structure):
        self.s = structure

    def hi(self, k, u, v):  # Max(a_k, b_k)
        return u if self.s[f"a_ge_b{k}"] else v

    def lo(self, k, u, v):  # Min(a_k, b_k)
        return v if self.s[f"a_ge_b{k}"] else u

    def clamp(self, axis, t):
        return t if self.s[f"overlap_{axis}"] else sp.Integer(0)

    def ratio(self, flag, num, den):
        return sp.Integer(0) if self.s[flag] else num / den

    def angle(self, box, w, h):
        shape = self.s[f"shape_{box}"]
        if shape == "box":
            return sp.atan(w / h)
        return HALF_PI if shape == "flat" else sp.Integer(0)


def terms(a, b, form):
    """IoU, GIoU, DIoU, v and α of boxes a, b (4 coordinates each) in ``form``."""
    wa, ha, wb, hb = a[2] - a[0], a[3] - a[1], b[2] - b[0], b[3] - b[1]
    iw = form.clamp("x", form.lo(2, a[2], b[2]) - form.hi(0, a[0], b[0]))
    ih = form.clamp("y", form.lo(3, a[3], b[3]) - form.hi(1, a[1], b[1]))
    inter = iw * ih
    union = wa * ha + wb * hb - inter
    W = form.hi(2, a[2], b[2]) - form.lo(0, a[0], b[0])  # the enclosing box C
    H = form.hi(3, a[3], b[3]) - form.lo(1, a[1], b[1])
    enclosure = W * H
    iou = form.ratio("union_zero", inter, union)
    giou = iou - form.ratio("enclosure_zero", enclosure - union, enclosure)
    rho2 = ((a[0] + a[2] - b[0] - b[2]) / 2) ** 2 + ((a[1] + a[3] - b[1] - b[3]) / 2) ** 2
    c2 = W ** 2 + H ** 2
    diou = iou - form.ratio("diagonal_zero", rho2, c2)
    v = 4 / sp.pi ** 2 * (form.angle("b", wb, hb) - form.angle("a", wa, ha)) ** 2
    alpha = form.ratio("identical", v, (1 - iou) + v)
    return {"iou": iou, "giou": giou, "diou": diou, "v": v, "alpha": alpha, "inter": inter, "union": union,
            "enclosure": enclosure, "rho2": rho2, "c2": c2}


def _shape(r):
    w, h = r[2] - r[0], r[3] - r[1]
    return "box" if h > 0 else ("flat" if w > 0 else "point")


def _structure(a, b, **_):
    """The branch choices for one row (exact comparisons of the float64 coordinates)."""
    a, b = [float(t) for t in a], [float(t) for t in b]
    s = {f"a_ge_b{k}": a[k] >= b[k] for k in range(4)}
    s["overlap_x"] = min(a[2], b[2]) > max(a[0], b[0])
    s["overlap_y"] = min(a[3], b[3]) > max(a[1], b[1])
    zero_a = a[2] == a[0] or a[3] == a[1]
    zero_b = b[2] == b[0] or b[3] == b[1]
    s["union_zero"] = zero_a and zero_b  # |a ∪ b| = |a| + |b| − |a ∩ b| = 0 iff both areas are 0
    flat_w = max(a[2], b[2]) == min(a[0], b[0])
    flat_h = max(a[3], b[3]) == min(a[1], b[1])
    s["enclosure_zero"] = flat_w or flat_h
    s["diagonal_zero"] = flat_w and flat_h
    s["shape_a"], s["shape_b"] = _shape(a), _shape(b)
    s["identical"] = a == b and not s["union_zero"]  # IoU = 1 and v = 0: (1 − IoU) + v = 0
    return s


def _rows(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return a.reshape(-1, 4), b.reshape(-1, 4)


def _differentiable(a, b, **_):
    """No tied coordinates, no touching intervals, no degenerate box, in any row."""
    a, b = _rows(a, b)
    positive = (a[:, 2:] > a[:, :2]).all() and (b[:, 2:] > b[:, :2]).all()
    ties = (a == b).any()
    touch = (np.minimum(a[:, 2:], b[:, 2:]) == np.maximum(a[:, :2], b[:, :2])).any()
    return bool(positive and not ties and not touch)


def _builder(output):
    def build(n, **structure):
        if n != 4:
            raise ValueError(f"boxes have 4 coordinates, got rows of {n}")
        a, b = box_symbols("a"), box_symbols("b")
        t = terms(a, b, Branches(structure))
        if output != "ciou":
            return Definition({"a": a, "b": b}, [t[output]])
        alpha = sp.Symbol("alpha")
        return Definition({"a": a, "b": b}, [t["diou"] - alpha * t["v"]], stop_gradient={alpha: t["alpha"]})
    return build


def closed(a=None, b=None):
    a = box_symbols("a") if a is None else a
    b = box_symbols("b") if b is None else b
    t = terms(a, b, Closed())
    t["ciou"] = t["diou"] - t["alpha"] * t["v"]
    return t


# -- symbolic claims -------------------------------------------------------------------------
NAMES = ("iou", "giou", "diou", "ciou")
_X, _Y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
_GX, _GY = sp.symbols("p1:4", positive=True), sp.symbols("q1:4", positive=True)


def _orders():
    """The 6 strict interleavings of a's and b's interval ends on one axis ("A" < "a", "B" < "b")."""
    return [o for o in itertools.permutations("AaBb") if o.index("A") < o.index("a") and o.index("B") < o.index("b")]


def configurations():
    """All 36 strict configurations: each axis one interleaving, the ends at
    base + cumulative sums of positive gaps.  Yields (name, {a_k, b_k: expr})."""
    a, b = box_symbols("a"), box_symbols("b")
    for ox, oy in itertools.product(_orders(), _orders()):
        subs = {}
        for order, base, gaps, (lo, hi) in ((ox, _X, _GX, (0, 2)), (oy, _Y, _GY, (1, 3))):
            pos = [base + sum(gaps[:i]) for i in range(4)]
            where = {c: pos[i] for i, c in enumerate(order)}
            subs.update({a[lo]: where["A"], a[hi]: where["a"], b[lo]: where["B"], b[hi]: where["b"]})
        yield "".join(ox) + "/" + "".join(oy), subs


def _poly_sign(p):
    p = sp.expand(p)
    if p.is_Number:
        return int(sp.sign(p))
    if not all(s.is_positive for s in p.free_symbols):
        return None
    coeffs = sp.Poly(p, *sorted(p.free_symbols, key=str)).coeffs()
    if all(c > 0 for c in coeffs):
        return 1
    if all(c < 0 for c in coeffs):
        return -1
    return None


def sign(e):
    """0, +1 or −1 when ``e`` (a rational function of positive symbols) is 0 or has that
    sign because numerator and denominator have coefficients of one sign; None otherwise."""
    e = sp.cancel(sp.together(e))
    if e == 0:
        return 0
    num, den = sp.fraction(e)
    sn, sd = _poly_sign(num), _poly_sign(den)
    return None if sn is None or sd is None else sn * sd


_GENERAL = ("in general: all 36 strict configurations (each axis one of the 6 interleavings of a's and b's "
            "ends, ends = base + cumulative sums of positive symbolic gaps) with SymPy, where Max/Min/"
            "clamps evaluate; configurations with tied ends are limits of strict ones and every "
            "quantity is continuous on non-degenerate boxes")


def _over_configurations(test, names=NAMES):
    t0 = closed()
    for name, subs in configurations():
        at = {k: t0[k].subs(subs) for k in set(names) | {"iou", "c2"}}
        bad = test(at, name)
        if bad:
            return ClaimResult("refuted", f"configuration {name}: {bad}", name)
    return None


def claim_iou_range():
    bad = _over_configurations(lambda t, _: None if sign(t["iou"]) in (0, 1) and sign(1 - t["iou"]) == 1
                               else f"IoU = {t['iou']}", ("iou",))
    return bad or ClaimResult("proved", "IoU ≥ 0 and 1 − IoU > 0 as rational functions with coefficients of one "
                              "sign; " + _GENERAL + " (IoU = 1 only in the limit a = b)")


def claim_giou_bounds():
    def test(t, _):
        if sign(t["iou"] - t["giou"]) not in (0, 1) or sign(t["giou"] + 1) != 1 or sign(1 - t["iou"]) != 1:
            return f"IoU − GIoU = {sp.factor(t['iou'] - t['giou'])}, GIoU + 1 = {sp.factor(t['giou'] + 1)}"
    return _over_configurations(test, ("iou", "giou")) or ClaimResult(
        "proved", "IoU − GIoU = (|C| − |a ∪ b|)/|C| ≥ 0, GIoU + 1 = IoU + |a ∪ b|/|C| > 0 and IoU < 1; " + _GENERAL)


def claim_giou_nested():
    nested = 0
    for name, subs in configurations():
        ox, oy = name.split("/")
        if {ox, oy} <= {"ABba", "BAab"} and ox[0] == oy[0]:  # one box inside the other on both axes
            nested += 1
            t = closed()
            d = sp.cancel(sp.together((t["enclosure"] - t["union"]).subs(subs)))
            if d != 0:
                return ClaimResult("refuted", f"{name}: |C| − |a ∪ b| = {d}", name)
    assert nested == 2
    return ClaimResult("proved", "for a inside b and b inside a (strictly, on both axes; ties by continuity) "
                       "|C| − |a ∪ b| cancels to 0, so GIoU = IoU")


def claim_diou_below_iou():
    t = closed()
    if not t["rho2"].is_nonnegative:
        return ClaimResult("refuted", f"ρ² = {t['rho2']} not recognised as ≥ 0")
    bad = _over_configurations(lambda s, _: None if sign(s["c2"]) == 1 else f"c² = {s['c2']}", ("diou",))
    return bad or ClaimResult("proved", "IoU − DIoU = ρ²/c² with ρ² a sum of squares of real numbers (SymPy: "
                              "nonnegative) and c² = W² + H² > 0 in all 36 strict configurations (ties by continuity)")


def _swap(e):
    a, b = box_symbols("a"), box_symbols("b")
    return e.xreplace({**dict(zip(a, b)), **dict(zip(b, a))})


def claim_symmetry(name):
    def check():
        e = closed()[name]
        d = sp.expand(e - _swap(e))
        if d != 0 and sp.simplify(d) != 0:
            return ClaimResult("refuted", f"f(a, b) − f(b, a) = {d}")
        return ClaimResult("proved", "in general: the closed form with a and b swapped is identical "
                           "(Max/Min are symmetric, (θ_b − θ_a)² = (θ_a − θ_b)²)")
    return check


def claim_translation(name):
    def test(t, cfg):
        free = t[name].free_symbols & {_X, _Y}  # differences of ends cancel the base as they are formed
        if free:
            free = sp.cancel(sp.together(t[name])).free_symbols & {_X, _Y}
        return f"depends on the base point: {free}" if free else None

    def check():
        return _over_configurations(test, (name,)) or ClaimResult(
            "proved", "the expression does not depend on the base point (x, y) after cancellation; " + _GENERAL)
    return check


def claim_scale(name):
    lam = sp.Symbol("lambda", positive=True)
    scale = {s: lam * s for s in (_X, _Y) + _GX + _GY}

    def test(t, cfg):
        e = t[name]
        d = sp.simplify(sp.cancel(sp.together(e.xreplace(scale) - e)))
        return f"f(λa, λb) − f(a, b) = {d}" if d != 0 else None

    def check():
        return _over_configurations(test, (name,)) or ClaimResult(
            "proved", "f(λa, λb) − f(a, b) cancels to 0 for a positive symbol λ; " + _GENERAL)
    return check


def claim_identity(name):
    def check():
        x, y = _X, _Y
        w, h = sp.symbols("w h", positive=True)
        a = (x, y, x + w, y + h)
        t = closed(a, a)
        if name == "ciou":  # α = 0/0 here: the convention α = 0; any α multiplies v = 0
            ok = sp.simplify(t["diou"] - 1) == 0 and sp.simplify(t["v"]) == 0
        else:
            ok = sp.simplify(t[name] - 1) == 0
        if not ok:
            return ClaimResult("refuted", f"f(a, a) = {t[name]}")
        return ClaimResult("proved", "in general: at b = a = (x, y, x + w, y + h), w, h > 0, the closed form is 1"
                           + (" (DIoU = 1 and v = 0, so DIoU − α·v = 1 for any α; the spec's α is 0 there)"
                              if name == "ciou" else ""))
    return check


def _disjoint(name):
    ox, oy = name.split("/")
    return any(o in ("AaBb", "BbAa") for o in (ox, oy))


def claim_disjoint_gradient(name):
    """IoU: gradient 0 for disjoint boxes; GIoU: some partial derivative of one sign (≠ 0)."""
    def check():
        a, b = box_symbols("a"), box_symbols("b")
        e = closed()[name]
        grads = [sp.diff(e, s) for s in a + b]
        count = 0
        for cfg, subs in configurations():
            if not _disjoint(cfg):
                continue
            count += 1
            g = [d.subs(subs) for d in grads]
            signs = [sign(d) for d in g]
            if name == "iou" and any(s != 0 for s in signs):
                return ClaimResult("refuted", f"{cfg}: ∇IoU = {g}", cfg)
            if name == "giou" and not any(s in (1, -1) for s in signs[:4]):
                return ClaimResult("refuted", f"{cfg}: no partial derivative w.r.t. a of one sign: {g}", cfg)
        what = ("every partial derivative of IoU is 0" if name == "iou" else
                "some ∂GIoU/∂a_k is a rational function of one sign (so ≠ 0)")
        return ClaimResult("proved", f"in general: in all {count} strict configurations with the boxes apart on "
                           f"at least one axis, {what} (sympy.diff of the closed form, where Max/Min derivatives "
                           "are Heaviside steps of positive gaps)")
    return check


#: instances for the stop-gradient claim: (a, b) with rational coordinates, no ties, overlapping
ALPHA_INSTANCES = (((0, 0, 2, 1), (1, sp.Rational(1, 2), 4, 3)), ((-1, -2, 3, 1), (0, -1, 1, 5)))


def claim_alpha_constant():
    from .reference import Reference  # the reference built from CIOU's Definition
    a_s, b_s = box_symbols("a"), box_symbols("b")
    t = closed()
    held = [sp.diff(t["diou"], s) - t["alpha"] * sp.diff(t["v"], s) for s in a_s]
    total = [sp.diff(t["ciou"], s) for s in a_s]
    details = []
    for a, b in ALPHA_INSTANCES:
        at = {**dict(zip(a_s, map(sp.nsimplify, a))), **dict(zip(b_s, map(sp.nsimplify, b)))}
        want = [sp.N(h.subs(at), 50) for h in held]
        other = [sp.N(d.subs(at), 50) for d in total]
        with mpmath.workdps(50):
            g, _ = Reference(CIOU).vjp({"a": np.array(a, dtype=np.float64), "b": np.array(b, dtype=np.float64)},
                                       np.array(1.0), "a")
            got = [float(v) for v in g]
        if any(abs(x - float(y)) > 1e-13 * (1 + abs(float(y))) for x, y in zip(got, want)):
            return ClaimResult("refuted", f"a = {a}, b = {b}: reference ∇_a = {got}, ∂DIoU − α∂v = {want}", str((a, b)))
        gap = max(abs(float(x - y)) for x, y in zip(want, other))
        if gap < 1e-3:
            return ClaimResult("refuted", f"a = {a}, b = {b}: holding α constant changes nothing ({gap})", str((a, b)))
        details.append(f"a = {a}, b = {b}: the two differ by up to {gap:.3g}")
    return ClaimResult("proved on instances",
                       "the reference's ∇_a CIoU (α a stop-gradient step) equals ∂DIoU/∂a − α·∂v/∂a of the closed "
                       "form (SymPy, 50 digits) and differs from the total derivative ∂(DIoU − α·v)/∂a, which adds "
                       "−v·∂α/∂a: " + "; ".join(details))


# -- numerical claims ------------------------------------------------------------------------
def iou_numpy(a, b):
    """The textbook IoU.  On claim-regime inputs (the 2^-10 grid, |x| ≤ 2^12 after shifts) every
    difference (≤ 23 bits), area (≤ 46 bits) and sum of three areas (≤ 48 bits) is exact in
    float64: only the final division rounds."""
    iw = np.maximum(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0.0)
    ih = np.maximum(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0.0)
    inter = iw * ih
    area = lambda r: (r[..., 2] - r[..., 0]) * (r[..., 3] - r[..., 1])  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def enclosing(a, b):
    return np.concatenate([np.minimum(a[..., :2], b[..., :2]), np.maximum(a[..., 2:], b[..., 2:])], axis=-1)


def apart(a, b):
    """b moved right (exact grid shift) until its left edge is 2^-10 beyond a's right edge: disjoint boxes."""
    s = a[..., 2] - b[..., 0] + 2.0 ** -10
    return b + np.stack([s, np.zeros_like(s), s, np.zeros_like(s)], axis=-1)


#: After the exact stage (see iou_numpy) an implementation forms the values with ≲ 16 roundings
#: (divisions, atan, squares, the final subtractions) of magnitudes ≤ 2, each ≤ 1 ulp of 2.
INVARIANCE_TOL = 2 * 16 * 2 * EPS64
_EXACT_STAGE = ("claim-regime boxes lie on the 2^-10 grid with |x| ≤ 2^10; shifts by grid values and scales by "
                "powers of two keep every coordinate, difference, area, sum of areas and squared distance exact in "
                "float64 (≤ 48 significant bits), so both evaluations start from the same exact intermediates up to "
                "a power of two; each then commits ≲ 16 roundings of magnitudes ≤ 2 (divisions, atan, squares, final "
                "subtractions): 2 evaluations × 16 × 2 eps")


def _check_symmetry(impl, a, b):
    return [Comparison(impl(a=b, b=a), impl(), INVARIANCE_TOL, "f(b, a) = f(a, b)")]


def _check_translation(impl, a, b, dx, dy):
    s = np.array([dx, dy, dx, dy])
    return [Comparison(impl(a=a + s, b=b + s), impl(), INVARIANCE_TOL, f"f(a + s, b + s) = f(a, b), s = ({dx}, {dy})")]


def _check_scale(impl, a, b, scale):
    return [Comparison(impl(a=a * scale, b=b * scale), impl(), INVARIANCE_TOL, f"f({scale}·a, {scale}·b) = f(a, b)")]


def _check_identity(impl, a, b):
    return [Comparison(impl(b=a), np.ones(a.shape[:-1]), 4 * EPS64, "f(a, a) = 1")]


def _below_iou(lower, strict):
    def check(impl, a, b):
        f, iou = impl(), iou_numpy(a, b)
        out = [Comparison(np.minimum(iou - f, 0.0), np.zeros_like(f), 4 * EPS64, "f ≤ IoU"),
               Comparison(np.clip(iou, 0.0, 1.0), iou, 0.0, "0 ≤ IoU ≤ 1 (NumPy, exact areas)")]
        if strict:
            out.append(Comparison((f > lower).astype(np.float64), np.ones_like(f), 0.0, f"f > {lower}"))
        else:
            out.append(Comparison(np.maximum(lower - f, 0.0), np.zeros_like(f), 4 * EPS64, f"f ≥ {lower}"))
        return out
    return check


def _check_iou_range(impl, a, b):
    f = impl()
    return [Comparison(np.clip(f, 0.0, 1.0), f, 2 * EPS64, "0 ≤ IoU ≤ 1"),
            Comparison(f, iou_numpy(a, b), 4 * EPS64, "IoU = the textbook formula (exact areas, one division)")]


def _check_nested(impl, a, b):
    c = enclosing(a, b)
    want = iou_numpy(a, c)
    return [Comparison(impl(b=c), want, 4 * EPS64, "GIoU(a, C) = IoU(a, C) for C ⊇ a"),
            Comparison(impl(a=c, b=a), want, 4 * EPS64, "GIoU(C, a) = IoU(C, a) for C ⊇ a")]


def _check_iou_disjoint_gradient(impl, a, b):
    far = apart(a, b)
    return [Comparison(impl.grad("a", b=far), np.zeros(np.broadcast_shapes(a.shape, far.shape)), 0.0,
                       "∇_a IoU = 0 for disjoint boxes"),
            Comparison(impl.grad("b", b=far), np.zeros(np.broadcast_shapes(a.shape, far.shape)), 0.0,
                       "∇_b IoU = 0 for disjoint boxes")]


def _check_giou_disjoint_gradient(impl, a, b):
    far = apart(a, b)
    g = impl.grad("a", b=far)
    c = enclosing(a, far)
    want = (a[..., 3] - a[..., 1]) / ((c[..., 2] - c[..., 0]) * (c[..., 3] - c[..., 1]))
    return [Comparison((np.abs(g).max(axis=-1) > 0).astype(np.float64), np.ones(g.shape[:-1]), 0.0,
                       "∇_a GIoU ≠ 0 for disjoint boxes"),
            Comparison(g[..., 2], want, 16 * EPS64 * want,
                       "∂GIoU/∂a_x2 = h_a/|C| when b lies to the right of a (∂|a ∪ b|/∂a_x2 = h_a, C fixed)")]


def _invariance_claims():
    return (
        NumericalClaim("symmetry", "f(a, b) = f(b, a)", _check_symmetry, _EXACT_STAGE, source=SOURCE),
        NumericalClaim("translation", "f(a + s, b + s) = f(a, b) for a shift s = (dx, dy, dx, dy)", _check_translation,
                       _EXACT_STAGE, extra={"dx": "shift", "dy": "shift"}, source=SOURCE),
        NumericalClaim("scale", "f(λa, λb) = f(a, b) for λ > 0 (powers of two: exact scaling)", _check_scale,
                       _EXACT_STAGE, extra={"scale": "power_of_two"}, source=SOURCE),
        NumericalClaim("identity", "f(a, a) = 1 (loss 0) for a non-degenerate box", _check_identity,
                       "4 eps: at a = b the intersection equals the union and ρ = v = 0 exactly; the quotient of two "
                       "equal numbers is exactly 1, 4 eps allows a few roundings in forming them differently",
                       source=SOURCE),
    )


def _symbolic_common(name):
    return (
        SymbolicClaim("symmetry_symbolic", "f(a, b) = f(b, a)", claim_symmetry(name), SOURCE),
        SymbolicClaim("translation_symbolic", "f(a + s, b + s) = f(a, b)", claim_translation(name), SOURCE),
        SymbolicClaim("scale_symbolic", "f(λa, λb) = f(a, b) for λ > 0", claim_scale(name), SOURCE),
        SymbolicClaim("identity_symbolic", "f(a, a) = 1 for a non-degenerate box", claim_identity(name), SOURCE),
    )


_A = Arg("a", "box", doc="boxes (x1, y1, x2, y2), x1 ≤ x2, y1 ≤ y2 (e.g. predictions)")
_B = Arg("b", "box", doc="boxes of a broadcastable shape (e.g. ground truth)")
_INVALID = {name: ["x2 < x1", "y2 < y1", "wrong shape", "integer array"] for name in ("a", "b")}
_DEGENERATE = ("degenerate boxes (zero width or height) are outside the domain, but values and gradients must be "
               "finite there; the spec's values: IoU = 0 when |a ∪ b| = 0, (|C| − |a ∪ b|)/|C| = 0 when |C| = 0, "
               "ρ²/c² = 0 when c = 0, and CIoU's atan(w/h) = π/2 at h = 0 < w and 0 at a point (atan2(w, h))")
_CONTINUOUS = "continuous coordinates: seed 001's get_iou adds 1 to widths and heights (pixel convention) and differs"


#: moving both boxes moves nothing: Σ ∂f/∂(x coordinates) = 0 and Σ ∂f/∂(y coordinates) = 0 at every input
_TRANSLATIONS = (
    Shift("f(a + (s, 0, s, 0), b + (s, 0, s, 0)) = f(a, b), so the x-coordinate gradients sum to 0",
          {"a": (1, 0, 1, 0), "b": (1, 0, 1, 0)}),
    Shift("f(a + (0, s, 0, s), b + (0, s, 0, s)) = f(a, b), so the y-coordinate gradients sum to 0",
          {"a": (0, 1, 0, 1), "b": (0, 1, 0, 1)}),
)


def _quantity(name, key, summary, formula, claims, image, conventions=()):
    return Quantity(
        name=name, family="boxes", summary=summary, formula=formula, args=(_A, _B), output="row",
        build=_builder(key), structure=_structure, differentiable=_differentiable,
        conventions=(_CONTINUOUS, _DEGENERATE, "elementwise over (..., 4) pairs; loss = 1 − value") + conventions,
        reference=SOURCE, invalid=_INVALID, claims=claims, image=image, shifts=_TRANSLATIONS)


BOX_IOU = _quantity(
    "box_iou", "iou", "intersection over union of two boxes", "|a ∩ b| / |a ∪ b|",
    _symbolic_common("iou") + (
        SymbolicClaim("range_symbolic", "0 ≤ IoU ≤ 1", claim_iou_range, SOURCE),
        SymbolicClaim("disjoint_gradient_symbolic", "∇IoU = 0 for disjoint boxes", claim_disjoint_gradient("iou"),
                      SOURCE),
    ) + _invariance_claims() + (
        NumericalClaim("range", "0 ≤ IoU ≤ 1, equal to the textbook formula on exact inputs", _check_iou_range,
                       "2 eps for the range, 4 eps for the formula: on the 2^-10 grid the areas are exact (see "
                       "iou_numpy), I ≤ U, and an implementation rounds the quotient once (plus ≤ 1 ulp for a "
                       "differently formed union)", source=SOURCE),
        NumericalClaim("disjoint_gradient", "∇IoU = 0 for disjoint boxes", _check_iou_disjoint_gradient,
                       "exact: IoU ≡ 0 on an open set around a disjoint pair (the clamped intersection width is 0 "
                       "with derivative 0), so reverse mode multiplies exact zeros", source=SOURCE),
    ),
    Image("|a ∩ b| ≤ |a ∪ b|: in [0, 1]", 0.0, 1.0))

GIOU = _quantity(
    "giou", "giou", "generalized IoU (Rezatofighi et al. 2019)", "IoU − |C \\ (a ∪ b)| / |C|",
    _symbolic_common("giou") + (
        SymbolicClaim("bounds_symbolic", "−1 < GIoU ≤ IoU ≤ 1", claim_giou_bounds, SOURCE),
        SymbolicClaim("nested_symbolic", "GIoU = IoU when one box contains the other", claim_giou_nested, SOURCE),
        SymbolicClaim("disjoint_gradient_symbolic", "∇GIoU ≠ 0 for disjoint boxes", claim_disjoint_gradient("giou"),
                      SOURCE),
    ) + _invariance_claims() + (
        NumericalClaim("bounds", "−1 < GIoU ≤ IoU ≤ 1", _below_iou(-1.0, strict=True),
                       "4 eps for GIoU ≤ IoU (IoU from exact areas, one rounding each side); GIoU > −1 exactly: "
                       "on the grid |a ∪ b|/|C| ≥ 2^-20/2^24 = 2^-44 ≫ the rounding 2^-53 near −1", source=SOURCE),
        NumericalClaim("nested", "GIoU = IoU when one box contains the other", _check_nested,
                       "4 eps: |C| − |a ∪ b| is exactly 0 for nested grid boxes; the IoU quotient rounds once on "
                       "each side", source=SOURCE),
        NumericalClaim("disjoint_gradient", "∇_a GIoU ≠ 0 for disjoint boxes (unlike IoU)",
                       _check_giou_disjoint_gradient,
                       "nonzero exactly; the closed form h_a/|C| (one division of exact grid values) within 16 eps "
                       "relative: ∂GIoU/∂a_x2 = ∂(|a ∪ b|/|C|)/∂a_x2 is a single term (C does not move), formed in "
                       "reverse mode through ~8 products and quotients, each ≤ 1 ulp", source=SOURCE),
    ),
    Image("−1 < GIoU ≤ IoU ≤ 1", -1.0, 1.0))

DIOU = _quantity(
    "diou", "diou", "distance IoU (Zheng et al. 2020)", "IoU − ρ²/c²",
    _symbolic_common("diou") + (
        SymbolicClaim("below_iou_symbolic", "DIoU ≤ IoU", claim_diou_below_iou, SOURCE),
    ) + _invariance_claims() + (
        NumericalClaim("bounds", "−1 ≤ DIoU ≤ IoU", _below_iou(-1.0, strict=False),
                       "4 eps: IoU from exact areas (one rounding), ρ²/c² ≤ 1 from exact squares (one rounding), "
                       "one final subtraction", source=SOURCE),
    ),
    Image("−1 ≤ DIoU ≤ IoU ≤ 1", -1.0, 1.0),
    conventions=("ρ: distance between the box centres; c: the diagonal of the smallest enclosing box C",))

CIOU = _quantity(
    "ciou", "ciou", "complete IoU (Zheng et al. 2020), α held constant in the gradient",
    "DIoU − α·v, v = (4/π²)(atan(w_b/h_b) − atan(w_a/h_a))², α = v/((1 − IoU) + v) (stop-gradient)",
    _symbolic_common("ciou") + (
        SymbolicClaim("alpha_constant", "the gradient treats α as a constant: ∇CIoU = ∇DIoU − α·∇v",
                      claim_alpha_constant, SOURCE),
    ) + _invariance_claims() + (
        NumericalClaim("bounds", "−2 ≤ CIoU ≤ IoU (α ∈ [0, 1], v ∈ [0, 1], DIoU ≥ −1)", _below_iou(-2.0, strict=False),
                       "4 eps: α·v ≥ 0 and ρ²/c² ≥ 0 are each rounded once from exact inputs, IoU once",
                       source=SOURCE),
    ),
    Image("−2 ≤ CIoU ≤ IoU ≤ 1 (α, v ∈ [0, 1])", -2.0, 1.0),
    conventions=("α = v/((1 − IoU) + v) is a stop-gradient (Zheng et al. 2020): gradients hold it constant; "
                 "α = 0 where (1 − IoU) + v = 0 (a = b)",))

QUANTITIES = (BOX_IOU, GIOU, DIOU, CIOU)
