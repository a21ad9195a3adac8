"""The spec itself: symbolic claims reach the status the mathematics says,
and the reference agrees with closed forms computed independently here."""

import math

import mpmath
import numpy as np
import pytest

from losscheck import spec
from losscheck.spec.smoothing import hard_topk

#: claims the seeds or the catalogue state and the spec refutes (a finding each);
#: every other symbolic claim must be proved.
REFUTED = {
    ("soft_topk", "hard_is_topk"),   # fails for topk = n: x = [1, 0], topk = 2 gives [2, 0]
    ("soft_topk", "limit_topk"),     # for topk = n the limit is not the indicator
    ("soft_topk", "entries_le_one"),  # p can exceed 1: x = [10, 0], topk = 2 gives p_0 ≈ 1.50007
    ("kl_divergence", "seed003_kl_typo"),  # seed 003's Σ P log(P + Q) is log(2/3) < 0 at P = Q = uniform(3)
    ("zlpr", "soft_bce_bound"),  # soft labels: n = 1, t = ½, s = 0: zlpr = 2 log 1.5 > log 2 = Σ BCE
    ("soft_f1", "eps_is_dice_smooth"),  # eps is in the denominator only: p = [0], t = [1], eps = 1 gives 0, Dice ½
    ("soft_f1", "empty_column_one_any_eps"),  # eps > 0: an empty column scores 0/eps = 0 (seed 001's eps = 1e-6)
    ("dice", "seed_dice_gt_iou"),  # seed 001's strict DICE > IOU: equal at J = 0 and J = 1
    ("dice", "soft_self_one"),  # plain Dice at soft targets: dice([.5], [.5]) = .5
    ("dice", "seed_dice_loss_perfect_only"),  # seed 001's dice_loss is 0 at an all-ones prediction
}

CLAIMS = [(q.name, c) for q in spec.QUANTITIES.values() for c in q.symbolic_claims]


@pytest.mark.parametrize("qname, claim", CLAIMS, ids=[f"{q}-{c.name}" for q, c in CLAIMS])
def test_symbolic_claim(qname, claim):
    r = claim.check()
    if (qname, claim.name) in REFUTED:
        assert r.status == "refuted" and r.counterexample, r
    else:
        assert r.status in ("proved", "proved on instances"), r
    assert r.detail


def test_refuted_list_is_current():
    names = {(q, c.name) for q, c in CLAIMS}
    assert REFUTED <= names, REFUTED - names


def _ref(name, **args):
    return spec.Reference(spec.get(name)).value(**args)


def test_reference_closed_forms():
    # independent closed forms (not the implementations' output)
    assert _ref("logsumexp", x=np.array([0.0, 0.0]), k=1.0) == pytest.approx(math.log(2), rel=1e-15)
    assert _ref("logsumexp", x=np.array([1.0, 2.0, 3.0]), k=2.0) == pytest.approx(
        math.log(math.exp(2) + math.exp(4) + math.exp(6)) / 2, rel=1e-15)
    np.testing.assert_allclose(_ref("softmax", x=np.array([0.0, math.log(3.0)]), k=1.0), [0.25, 0.75], rtol=1e-15)
    assert _ref("soft_argmax", x=np.array([5.0, 5.0, 5.0]), k=3.0) == pytest.approx(1.0, rel=1e-15)
    # soft_topk([10, 0], 2, 1) by hand: p = [σ(10), σ(−10)], then y = [10·σ(−10), 0]
    s = lambda t: 1 / (1 + mpmath.exp(-t))  # noqa: E731
    with mpmath.workdps(40):
        want = [s(10) + s(10 * s(-10)), s(-10) + s(-10 * s(-10))]
    np.testing.assert_allclose(_ref("soft_topk", x=np.array([10.0, 0.0]), topk=2, k=1.0), [float(w) for w in want], rtol=1e-15)


def test_reference_keeps_absorbed_terms():
    """log(1 + e^-217) is 0 at any precision below ~95 digits; the reference must see past that
    (its working precision of ~63 digits, checked at +30, had both rounding to 0)."""
    for f in (217.0, 700.0):  # log(1 + t) = t(1 − t/2 + …): t alone to 1e-94 relative and beyond
        got = _ref("logistic_loss", f=np.array([0.0, f]), l=np.array([-1.0, 1.0]))
        assert got[0] == pytest.approx(math.log(2), rel=1e-15)
        assert got[1] == pytest.approx(math.exp(-f), rel=1e-15)


def _agrees(got, want, digits=50):
    """mpf ``got`` equals the closed form ``want`` (computed at 120 digits) to ``digits`` significant digits."""
    with mpmath.workdps(120):
        return abs(mpmath.mpf(got) - want) <= mpmath.mpf(10) ** -digits * abs(want)


def test_reference_certified_digits():
    """The reference's values and gradients agree with closed forms evaluated independently by
    mpmath at 120 digits, to 50 significant digits — also where the definition cancels
    (log(1 + e^-217), CE at logits [61, −54] = log(1 + e^-115)) and where it cancels to exactly 0
    at second order (CE at logits [−inf, 1.3e-140]: x − log(e^x), which a check 30 digits deeper
    than the working precision took for x²/2 = 8.6e-281)."""
    def value(name, **args):
        return spec.Reference(spec.get(name)).evaluate(args)[0]

    with mpmath.workdps(120):
        e = mpmath.exp
        assert _agrees(value("logsumexp", x=np.array([0.0, 0.0]), k=1.0)[()], mpmath.log(2))
        assert _agrees(value("logsumexp", x=np.array([1.0, 2.0, 3.0]), k=2.0)[()], mpmath.log(e(2) + e(4) + e(6)) / 2)
        x1 = mpmath.mpf(math.log(3.0))  # the float the reference sees, exactly
        p = value("softmax", x=np.array([0.0, math.log(3.0)]), k=1.0)
        assert _agrees(p[0], 1 / (1 + e(x1))) and _agrees(p[1], e(x1) / (1 + e(x1)))
        assert _agrees(value("logistic_loss", f=np.array([217.0]), l=np.array([1.0]))[0], mpmath.log1p(e(-217)))
        ce = spec.Reference(spec.get("cross_entropy"))
        args = {"logits": np.array([61.0, -54.0]), "target": np.int64(0)}
        assert _agrees(ce.evaluate(args)[0][()], mpmath.log1p(e(-115)))
        g = ce.vjp(args, np.float64(1.0), "logits")[0]  # softmax − onehot
        q = e(-115) / (1 + e(-115))
        assert _agrees(g[0], -q) and _agrees(g[1], q)
        masked = {"logits": np.array([-np.inf] * 5 + [1.3119183759133692e-140]), "target": np.int64(5)}
        assert abs(ce.evaluate(masked)[0][()]) < mpmath.mpf("1e-340")  # exactly 0: below every float64


def test_reference_masking_conventions():
    lse = _ref("logsumexp", x=np.array([[-np.inf, -np.inf], [-np.inf, 0.0]]), k=1.0)
    assert lse[0] == -np.inf and lse[1] == 0.0
    sm = _ref("softmax", x=np.array([[-np.inf, -np.inf], [-np.inf, 0.0]]), k=1.0)
    np.testing.assert_array_equal(sm, [[0.0, 0.0], [0.0, 1.0]])
    # the masked entry keeps its index: soft_argmax of [-inf, 0] is exactly 1
    assert _ref("soft_argmax", x=np.array([-np.inf, 0.0]), k=1.0) == 1.0
    g, _ = spec.Reference(spec.get("logsumexp")).vjp({"x": np.array([-np.inf, -np.inf]), "k": 1.0}, np.array(1.0), "x")
    assert [float(v) for v in g] == [0.0, 0.0]


def test_reference_gradient_is_softmax():
    x = np.array([0.3, -1.2, 2.5, 0.0])
    g, _ = spec.Reference(spec.get("logsumexp")).vjp({"x": x, "k": 1.7}, np.array(1.0), "x")
    e = np.exp(1.7 * (x - x.max()))
    np.testing.assert_allclose([float(v) for v in g], e / e.sum(), rtol=1e-14)


def test_hard_topk_examples():
    assert hard_topk([3, 1, 2], 2) == [1, 0, 1]
    assert hard_topk([1, 0], 2) == [2, 0]  # the seed's recursion at topk = n (refuted claim)


def test_reference_rounded_steps():
    """Reference.rounded / rounded_vjp round every intermediate step (here z = x − min x:
    1 + 2^-60 becomes 1 at 53 bits, a tie the exact definition does not have); at more bits
    than the working precision nothing rounds and they are the exact reference."""
    r = spec.Reference(spec.get("soft_topk"))
    args, w = {"x": np.array([-1.0, 2.0 ** -60, 0.0]), "topk": 1, "k": 1.0}, np.array([0.5, 1.0, -2.0])
    exact, g = r.evaluate(args)[0], r.vjp(args, w, "x")[0]
    assert r.rounded(args, 53)[1] == r.rounded(args, 53)[2] and exact[1] != exact[2]
    assert list(r.rounded(args, 10_000)) == list(exact) and list(r.rounded_vjp(args, w, "x", 10_000)[0]) == list(g)
    np.testing.assert_allclose([float(v) for v in r.rounded_vjp(args, w, "x", 53)[0]], [float(v) for v in g], rtol=1e-15)
    # the running-error scale at the rounded point: Σ_j |w_j|·|J_ji|_abs, at least |gradient|
    scale = r.rounded_vjp(args, w, "x", 53)[1]
    assert (scale >= np.abs([float(v) for v in g]) * (1 - 1e-12)).all() and scale.max() > 0


def test_reference_rejects_nan():
    with pytest.raises(ValueError, match="NaN"):
        _ref("logsumexp", x=np.array([np.nan, 0.0]), k=1.0)


# -- layouts (spec.quantity docstring): one toy quantity per layout, closed forms by hand ----------
def _toy(layout, **kw):
    import sympy as sp

    from losscheck.spec.quantity import Arg, Definition, Quantity

    def build(n, **structure):
        x = sp.symbols(f"x0:{n}", real=True)
        if "labels" in structure:  # layout "all": the sample's labels as a tuple; per-row width n // len(labels)
            c = n // len(structure["labels"])
            return Definition({"x": x}, [sum(x[i * c + lab] ** 2 for i, lab in enumerate(structure["labels"]))])
        return Definition({"x": x}, [sum(xi * xi * (i + 1) for i, xi in enumerate(x))])
    args = (Arg("x", "vector"),) + ((Arg("labels", "label"),) if kw.pop("labels", False) else ())
    return Quantity(name=f"toy_{layout}", family="toy", summary="", formula="", args=args, output="row",
                    build=build, layout=layout, **kw)


def test_layout_first_reduces_axis_0():
    q = _toy("first")
    x = np.arange(6.0).reshape(2, 3)  # columns (0, 3), (1, 4), (2, 5); weights 1, 2 along axis 0
    ref = spec.Reference(q)
    assert ref.output_shape({"x": x}) == (3,) and ref.shapes({"x": x}) == ((3,), 2)
    np.testing.assert_array_equal(ref.value(x=x), [0 + 2 * 9, 1 + 2 * 16, 4 + 2 * 25])
    g, _ = ref.vjp({"x": x}, np.array([1.0, 2.0, 3.0]), "x")
    np.testing.assert_array_equal(np.vectorize(float)(g), [[0, 2 * 2, 3 * 4], [2 * 3 * 2, 2 * 4 * 4, 3 * 5 * 4]])


def test_layout_all_is_one_sample():
    q = _toy("all")
    x = np.arange(6.0).reshape(2, 3)  # flattened in C order: weights 1..6
    ref = spec.Reference(q)
    assert ref.output_shape({"x": x}) == () and ref.shapes({"x": x}) == ((), 6)
    assert ref.value(x=x) == sum((i + 1) * i * i for i in range(6))
    g, _ = ref.vjp({"x": x}, np.array(2.0), "x")
    np.testing.assert_array_equal(np.vectorize(float)(g), 2 * 2 * (np.arange(6.0) * np.arange(1, 7)).reshape(2, 3))


def test_layout_all_with_labels():
    q = _toy("all", labels=True)
    x, labels = np.array([[0.25, 0.75], [0.5, 1.5], [2.0, 3.0]]), np.array([1, 0, 1])
    ref = spec.Reference(q)
    assert ref.value(x=x, labels=labels) == 0.75 ** 2 + 0.5 ** 2 + 3.0 ** 2
    g, _ = ref.vjp({"x": x, "labels": labels}, np.array(1.0), "x")
    np.testing.assert_array_equal(np.vectorize(float)(g), [[0, 1.5], [1.0, 0], [0, 6.0]])
    assert ref.value(x=np.array([0.5, 2.0]), labels=np.array(1)) == 4.0  # a 0-d label: one row


@pytest.mark.parametrize("layout", ["last", "first", "all"])
def test_layout_draws(layout):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from losscheck.properties.strategies import arguments
    q = _toy(layout, labels=layout == "all")

    @settings(max_examples=25, database=None, deadline=None)
    @given(st.data())
    def check(data):
        a = data.draw(arguments(q))
        shape = a["x"].shape
        want = {"last": shape[:-1], "first": shape[1:], "all": ()}[layout]
        assert spec.Reference(q).output_shape(a) == want
        if layout == "all":
            assert a["x"].size <= q.max_size and a["labels"].shape == shape[:-1]
            assert ((0 <= a["labels"]) & (a["labels"] < shape[-1])).all()
    check()


def test_the_shapes_drawn_respect_each_quantity():
    """strategies.SHAPES as each quantity takes them: boxes keep their 4 coordinates, a row of binary
    labels at least 2 entries (both classes), lovasz_softmax's batches at least its min_rows rows, and
    every batch shape of BATCH_SHAPES and the longest row occur."""
    from losscheck.properties.strategies import BATCH_SHAPES, shapes_of
    for q in spec.QUANTITIES.values():
        shapes = shapes_of(q, q.max_n)
        assert len(shapes) == len(set(shapes)) <= 8
        assert all(int(np.prod(b, dtype=int)) >= q.min_rows for b, _ in shapes)
        if q.fixed_length is not None:
            assert {n for _, n in shapes} == {q.fixed_length} and {b for b, _ in shapes} == set(BATCH_SHAPES)
        elif any(a.kind == "binary" for a in q.args):
            assert min(n for _, n in shapes) == 2
        else:
            assert {1, q.max_n} <= {n for _, n in shapes}


def test_a_second_unit_argument_is_drawn_related_to_the_first():
    """Targets beside probabilities are drawn independently, as a copy (a perfect prediction) or as the
    probabilities' hard labels, the flags before everything else (see strategies.arguments)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from losscheck.properties.strategies import arguments
    q, seen = spec.get("dice"), set()

    @settings(max_examples=60, database=None, deadline=None)
    @given(st.data())
    def check(data):
        a = data.draw(arguments(q))
        p, t = a["probs"], a["targets"]
        if p.any():
            seen.add("identical" if np.array_equal(p, t) else "hard" if np.array_equal(t, (p >= 0.5) * 1.0) else "other")
        seen.add(("squared", a["squared"]))
    check()
    assert {"identical", "hard", "other", ("squared", True), ("squared", False)} <= seen


def test_reference_overlap_closed_forms():
    # independent closed forms, by hand
    p, t = np.array([[0.5, 1.0], [0.25, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]])
    # I = 1.5, P = 1.75, T = 2
    assert _ref("dice", probs=p, targets=t, smooth=0.0, squared=False) == 3.0 / 3.75
    assert _ref("dice", probs=p, targets=t, smooth=1.0, squared=True) == 4.0 / (1.3125 + 2 + 1)
    assert _ref("jaccard", probs=p, targets=t, smooth=0.0) == 1.5 / 2.25
    # columns over axis 0: (p, t) = ((.5, .25), (1, 0)) and ((1, 0), (1, 0))
    np.testing.assert_array_equal(_ref("soft_f1", probs=p, targets=t, eps=0.0), [1.0 / 1.75, 1.0])
    z = np.zeros((2, 2))
    assert _ref("dice", probs=z, targets=z, smooth=0.0, squared=False) == 1.0
    assert _ref("jaccard", probs=z, targets=z, smooth=0.0) == 1.0
    np.testing.assert_array_equal(_ref("soft_f1", probs=z, targets=z, eps=0.0), [1.0, 1.0])
    np.testing.assert_array_equal(_ref("soft_f1", probs=z, targets=z, eps=0.5), [0.0, 0.0])
    g, _ = spec.Reference(spec.get("dice")).vjp({"probs": z, "targets": z, "smooth": 0.0, "squared": False},
                                                np.array(1.0), "probs")
    assert g.shape == (2, 2) and all(v == 0 for v in g.ravel())  # empty sets: zero gradient
    # ∂dice/∂p_ij = (2 t_ij·A − 2I)/A² with A = 3.75, I = 1.5
    g, _ = spec.Reference(spec.get("dice")).vjp({"probs": p, "targets": t, "smooth": 0.0, "squared": False},
                                                np.array(1.0), "probs")
    np.testing.assert_allclose(np.vectorize(float)(g), (2 * t * 3.75 - 3.0) / 3.75 ** 2, rtol=1e-15)


def test_probes_from_a_base_match_full_evaluations():
    """Compiled.moved (the sensitivity probes) re-evaluates only the steps that depend on what moved;
    it must give exactly what a full evaluation with that input or intermediate scaled gives."""
    args = {"x": np.array([0.3, -2.0, 5.0, 1.0, 0.7]), "topk": 4, "k": 1.3}
    ref = spec.Reference(spec.get("soft_topk"))
    row = next(ref.rows(args))[1]
    c = ref._compiled(row)
    assert c.inner > 10
    with mpmath.workdps(70):
        xs, f = ref._flat(c, row), 1 + mpmath.mpf("1e-7")
        base = c.environment(xs)
        for k in range(len(xs)):
            assert c.moved(base, c.symbols[k], f) == c.values_only(xs[:k] + [xs[k] * f] + xs[k + 1:])
        for t in range(c.inner):
            assert c.moved(base, c.steps[t].symbol, f) == c.values_only(xs, factors={t: f})


def test_jacobian_probes_from_a_base_match_full_evaluations():
    """Compiled.moved_jacobian (the gradient's rounding probes) re-evaluates only the steps that depend
    on the moved intermediate; it must give exactly the Jacobian of a full evaluation in which that
    step's value is scaled and its own derivatives are not."""
    import dataclasses
    args = {"x": np.array([0.3, -2.0, 5.0, 1.0, 0.7]), "topk": 4, "k": 1.3}
    ref = spec.Reference(spec.get("soft_topk"))
    row = next(ref.rows(args))[1]
    c = ref._compiled(row)
    with mpmath.workdps(70):
        xs, f = ref._flat(c, row), 1 + mpmath.mpf("1e-7")
        env, D = c.jacobian(xs)
        assert [D[o] for o in c.outputs] == [c.run(xs, with_steps=False)[4][o] for o in c.outputs]
        for t in range(c.inner):
            st = c.steps[t]
            scaled = dataclasses.replace(st, value=lambda vals, v=st.value: v(vals) * f)
            whole = dataclasses.replace(c, steps=c.steps[:t] + (scaled,) + c.steps[t + 1:])
            _, Dw = whole.jacobian(xs)
            assert c.moved_jacobian(env, D, t, f) == [Dw[o] for o in c.outputs]


def test_a_probe_that_leaves_the_rows_definition_is_not_taken():
    """A half-precision probe moves an input by up to ~19 % (rel_step of bfloat16 at n = 4): here
    b's left edge 48 × 1.1875 = 57 lands on its right edge, the union of the row's compiled branch
    is 0, and the division raised (every box quantity's value[bfloat16] ended in an error).  That
    side is not probed; the other side and the first-order sensitivity still are."""
    from losscheck.properties.dtypes import rel_step
    args = {"a": np.array([54.0, 0.0, 55.0, 7.78125]), "b": np.array([48.0, -33.5, 57.0, 18.5])}
    for qname in ("box_iou", "giou", "diou", "ciou"):
        ref = spec.Reference(spec.get(qname))
        val, sens = ref.evaluate(args, rel_step("bfloat16", 4, native=True))
        exact, first = ref.evaluate(args)
        assert val[()] == exact[()] and sens[()] >= first[()] > 0, qname
