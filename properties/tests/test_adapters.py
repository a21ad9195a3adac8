"""Adapters and declared conventions (impls/adapters): the mechanism, and the
verdicts on seed 001's snippets, each pinned to the property and the input
that shows it (the findings the report states)."""

import numpy as np
import pytest

from losscheck import impls, spec
from losscheck.impls import adapters
from losscheck.impls.adapters import Adapter, Convention
from losscheck.properties import frameworks
from losscheck.properties.engine import audit
from losscheck.reports.cli import check_signature

torch = pytest.importorskip("torch")

SEED = {a.name: a for a in adapters.adapters()}


def _audit(ad, only, **kw):
    res = audit(ad.fn, ad.quantity, ad.framework, label=ad.name, target_spec=ad.target, only=only,
                conventions=ad.conventions, complement=ad.complement, differentiable=ad.differentiable, **kw)
    return {r["property"]: r for r in res["results"]}


@pytest.mark.parametrize("ad", adapters.adapters(), ids=lambda a: a.name)
def test_adapter_presents_the_catalogue_signature(ad):
    q = spec.get(ad.quantity)
    check_signature(ad.fn, q)
    assert ad.framework in frameworks.NAMES
    assert ad.target.split(":")[0].startswith("losscheck.impls.adapters.")
    assert len({c.name for c in ad.conventions}) == len(ad.conventions)


def test_adapters_are_not_our_implementations():
    for fw in impls.FRAMEWORKS:
        assert not any(".adapters" in m for m in impls.modules(fw))


# -- the mechanism, on our own dice presented the way libraries present it -----------------
def _our_dice_with_smooth_one(probs, targets, smooth=0.0, squared=False):
    return impls.get("dice", "torch")(probs, targets, smooth=1.0, squared=squared)


def _our_dice_loss(probs, targets, smooth=0.0, squared=False):
    return 1 - impls.get("dice", "torch")(probs, targets, smooth=smooth, squared=squared)


SMOOTH_ONE = Convention("smooth = 1", "fixed smoothing constant", lambda a: {**a, "smooth": 1.0})


def test_a_declared_convention_explains_a_value_offset():
    ad = Adapter("test.smooth_one", "dice", "torch", _our_dice_with_smooth_one, ("torch",), "test",
                 conventions=(SMOOTH_ONE,))
    r = _audit(ad, "value[float64]", max_examples=10)["value[float64]"]
    assert r["verdict"] == "deviates", r["message"]
    assert r["conventions"] == "smooth = 1"
    assert r["counterexample"] and "fn(" in r["counterexample"]["snippet"]  # what the convention changes


def test_without_the_declaration_the_offset_is_a_failure():
    ad = Adapter("test.smooth_one", "dice", "torch", _our_dice_with_smooth_one, ("torch",), "test")
    assert _audit(ad, "value[float64]", max_examples=10)["value[float64]"]["verdict"] == "fails"


def test_a_convention_does_not_explain_a_nan():
    def nan_when_empty(probs, targets, smooth=0.0, squared=False):
        return _our_dice_with_smooth_one(probs, targets) * (probs.sum() + targets.sum()) / (probs.sum() + targets.sum())
    ad = Adapter("test.nan", "dice", "torch", nan_when_empty, ("torch",), "test", conventions=(SMOOTH_ONE,))
    r = _audit(ad, "value[float64]", max_examples=30)["value[float64]"]
    assert r["verdict"] == "fails" and "nan" in r["message"], r["message"]


def test_the_loss_form_is_compared_with_one_minus_the_reference():
    ad = Adapter("test.loss", "dice", "torch", _our_dice_loss, ("torch",), "test", complement=True)
    res = _audit(ad, "[float64]", max_examples=10)
    assert {k: r["verdict"] for k, r in res.items()} == {k: "holds" for k in res}
    assert {"value[float64]", "gradient[float64]", "stability[float64]"} <= set(res)


def test_the_loss_form_is_allowed_the_rounding_of_one_minus_q():
    """1 − q formed in float32 from q ≈ 1 is off by up to eps·|q| absolute, whatever the loss's own size:
    at p = t = [2^-100] with smooth 1e-5 (MONAI's default) the loss is (P + T − 2I)/(P + T + s) ≈ 1.6e-25,
    with a sensitivity of the same size, and 1 − fl(q) is 0 (q rounds to 1).  The loss form is charged
    that rounding (its sensitivity gets |q|); without it this fails by 3.2e6 ULPs."""
    from losscheck.properties.checks import Target, check_value
    target = Target(_our_dice_loss, spec.get("dice"), "torch", complement=True)
    args = {"probs": np.array([2.0 ** -100]), "targets": np.array([2.0 ** -100]), "smooth": 1e-5, "squared": False}
    out = check_value(target, {"args": args, "dtype": "float32"})
    assert float(_our_dice_loss(torch.tensor(args["probs"], dtype=torch.float32),
                                torch.tensor(args["targets"], dtype=torch.float32), smooth=1e-5)) == 0.0
    assert out.ok, out.message


def test_a_convention_applies_to_claims_too():
    ad = Adapter("test.smooth_one", "dice", "torch", _our_dice_with_smooth_one, ("torch",), "test",
                 conventions=(SMOOTH_ONE,))
    r = _audit(ad, "claim:binary_sets", max_examples=10)["claim:binary_sets"]
    assert r["verdict"] == "deviates", r["message"]


def _softmax_rounding_every_step(x, k=1.0):
    """softmax computed natively in the input dtype: each bfloat16 operation rounds its result."""
    z = x * k
    e = (z - z.max(-1, keepdim=True).values).exp()
    return e / e.sum(-1, keepdim=True)


def test_half_precision_computed_natively_is_judged_by_the_half_dtype_bound():
    """The catalogue lets half precision be computed in float32 or natively.  Code that rounds every
    step to bfloat16 is outside the float32-compute bound our implementations meet (0.64 ULPs of
    bfloat16 against 0.50 allowed, here) and inside the native one (the third-party default)."""
    strict = audit(_softmax_rounding_every_step, "softmax", "torch", only="value[bfloat16]", max_examples=15,
                   native_half=False)["results"][0]
    native = audit(_softmax_rounding_every_step, "softmax", "torch", only="value[bfloat16]", max_examples=15)
    assert strict["verdict"] == "fails" and "ULPs of bfloat16" in strict["message"]
    assert native["half"] == "native" and native["results"][0]["verdict"] == "holds"


# -- seed 001: what the audit finds ----------------------------------------------------
def test_seed_dice_loss_calls_a_wrong_prediction_perfect():
    """dice_loss's A_sum = Σ t·p (not Σ p²): a predicted foreground on an empty target costs nothing.
    With its own conventions (smooth = 1, the squared form its B_sum = Σ t² implies) the loss of
    probs = [1], targets = [0] is 1 − 1/(1 + 0 + 1) = 0.5; the snippet returns 0."""
    ad = SEED["seed001.dice_loss"]
    r = _audit(ad, "value[float64]", max_examples=15)["value[float64]"]
    assert r["verdict"] == "fails" and "declared convention(s) applied" in r["message"]
    out = ad.fn(torch.tensor([1.0], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64))
    assert float(out) == 0.0
    assert _audit(ad, "claim:loss_identity", max_examples=15)["claim:loss_identity"]["verdict"] == "fails"


def test_seed_get_iou_deviates_by_its_pixel_convention_only_in_moderate_inputs():
    ad = SEED["seed001.get_iou"]
    res = _audit(ad, "[float64]", max_examples=15)
    assert res["value[float64]"]["verdict"] == "deviates"
    assert res["value[float64]"]["conventions"] == "+1 pixel"
    assert res["gradient[float64]"]["verdict"] == "skipped"
    # a skip is the target's declaration, not a finding: one call decides it, nothing is shrunk
    assert res["gradient[float64]"]["calls"] <= 1
    # the union's area overflows for huge boxes (a·b beyond the largest float): IoU 0 instead of ~1e-306
    assert res["stability[float64]"]["verdict"] == "fails"
    a = torch.tensor([0.0, 0.0, 1.0, 2251799813685392.0], dtype=torch.float64)
    b = torch.tensor([0.0, 2251799813685248.0, 2.554675596204405e+294, 2322168557862912.0], dtype=torch.float64)
    assert float(ad.fn(a, b)) == 0.0


def test_seed_soft_f1_score_is_nan_on_an_empty_column():
    """No guard for an empty column: 0/0 at eps = 0 (the catalogue's F1 is 1 there, loss 0)."""
    ad = SEED["seed001.soft_f1_score"]
    r = _audit(ad, "value[float64]", max_examples=15)["value[float64]"]
    assert r["verdict"] == "fails" and "nan" in r["message"]
    zero = torch.zeros(3, 1, dtype=torch.float64)
    assert np.isnan(float(ad.fn(zero, zero)))


# -- reproduction snippets: the library's own API, without losscheck -----------------------
@pytest.mark.parametrize("ad", adapters.adapters(), ids=lambda a: a.name)
def test_every_adapter_inlines_into_a_snippet_without_losscheck(ad):
    src = adapters.standalone_source(ad.fn)
    compile(src, ad.name, "exec")
    assert "impls" not in src and "losscheck" not in src and f"def {ad.fn.__name__}(" in src


def test_the_seed_dice_failure_snippet_reproduces_in_a_fresh_interpreter():
    """The report's counterexample for seed001.dice_loss, run as a user would paste it (a new Python
    process that never imports losscheck), prints the value the record says it got; ``replay``
    says so, and says "no", quoting what it printed, for a result the snippet does not print."""
    import copy

    from losscheck.reports.thirdparty import replay
    r = _audit(SEED["seed001.dice_loss"], "value[float64]", max_examples=15)["value[float64]"]
    assert "from impls" not in r["counterexample"]["snippet"]
    record = {"results": [r, copy.deepcopy(r)]}
    record["results"][1]["counterexample"]["got"] = "0.25"
    replay(record)
    assert record["results"][0]["counterexample"]["replayed"].startswith("yes")
    printed = record["results"][0]["counterexample"]["got"]  # what the snippet prints: "yes" above
    assert record["results"][1]["counterexample"]["replayed"].startswith(f"no: a fresh interpreter printed {printed}")
    # a finding about the output's dtype is replayed from the snippet's last line (dtype and shape)
    record["results"][1].update(message="value: output dtype float64, expected float32")
    record["results"][1]["counterexample"].update(got=None, got_value=None, output_dtype="float64")
    replay(record)
    assert record["results"][1]["counterexample"]["replayed"].startswith("yes: a fresh interpreter running the "
                                                                          "snippet printed dtype and shape")
    # a claim that raised is reproduced by its snippet raising the same exception; a record written before claims'
    # snippets made all their calls (no "printed") is not replayed
    claims = {"results": [{"property": "claim:convex", "verdict": "fails", "message": "claim convex: raised RuntimeError: dot",
                           "counterexample": {"snippet": "raise RuntimeError('dot : expected both vectors')", "got": None,
                                              "exception": "RuntimeError"}},
                          {"property": "claim:scale", "verdict": "fails", "message": "claim scale: got 0.97, expected 0.91",
                           "counterexample": {"snippet": "print(0.97)", "got": "0.97"}}]}
    replay(claims)
    assert claims["results"][0]["counterexample"]["replayed"].startswith("yes: a fresh interpreter running the snippet "
                                                                         "raised the same exception")
    assert claims["results"][1]["counterexample"]["replayed"].startswith("not replayed")


def test_a_claim_snippet_makes_every_call_of_the_claim_and_replays():
    """seed001.dice_loss fails the claim that binary inputs give 2|P∩T|/(|P| + |T|) (its A_sum = Σ t·p
    misses the false positives): the snippet makes the claim's calls, each printing its output, and a
    fresh interpreter prints the same numbers."""
    from losscheck.reports.thirdparty import replay
    r = _audit(SEED["seed001.dice_loss"], "claim:binary_sets", max_examples=15)["claim:binary_sets"]
    assert r["verdict"] == "fails", r
    c = r["counterexample"]
    assert "# call 1 of" in c["snippet"] and "from impls" not in c["snippet"] and c["printed"]
    replay({"results": [r]})
    assert c["replayed"].startswith("yes: a fresh interpreter running the snippet printed what each of the claim's "
                                    "calls returned"), c["replayed"]


# -- isolation: one process per adapter (reports.thirdparty) -----------------------------
def test_a_target_that_times_out_is_an_error_verdict_and_the_run_goes_on(tmp_path):
    from losscheck.reports.thirdparty import run_isolated
    rec = run_isolated(SEED["seed001.get_iou"], max_examples=2, timeout=1, echo=False)  # not even torch imports in 1 s
    assert rec["third_party"] and rec["label"] == "seed001.get_iou"
    assert rec["results"][-1]["verdict"] == "error" and "timed out after 1 s" in rec["results"][-1]["message"]


@pytest.mark.slow  # 78 s of one core (session 11): audit-all end to end, one process per adapter (tiers.py)
def test_audit_all_writes_the_third_party_report_after_each_target(tmp_path):
    from losscheck.reports.thirdparty import audit_all
    res = audit_all(tmp_path, max_examples=6, only="seed001.dice", echo=False)  # 6: the empty target is drawn
    assert [a["label"] for a in res["audits"]] == ["seed001.dice_loss"]
    verdicts = {r["property"]: r["verdict"] for r in res["audits"][0]["results"]}
    assert verdicts["value[float64]"] == "fails"  # the seed's dice_loss finding, found in the child process
    md = (tmp_path / "thirdparty.md").read_text()
    assert "### seed001.dice_loss" in md and "smooth = 1" in md and "fails even with the declared convention" in md
    assert (tmp_path / "thirdparty.html").exists() and (tmp_path / "thirdparty.json").exists()


def test_audit_all_in_parallel_keeps_the_adapters_in_order(tmp_path, monkeypatch):
    """--jobs 2: two children at once; the report lists the adapters in the registry's order
    whatever order they finish in (children faked: the mechanism, not the audits)."""
    import time

    from losscheck.reports import thirdparty

    def fake(ad, max_examples, seed, timeout, echo):
        time.sleep(0.2 if ad.name.endswith("dice_loss") else 0.0)  # the first one finishes last
        rec = thirdparty.metadata(ad)
        rec["results"], rec["seconds"] = [], 0.0
        return rec
    monkeypatch.setattr(thirdparty, "run_isolated", fake)
    res = thirdparty.audit_all(tmp_path, only="seed001", echo=False, jobs=2)
    assert [a["label"] for a in res["audits"]] == [a.name for a in adapters.adapters() if "seed001" in a.name]
    assert (tmp_path / "thirdparty.md").read_text().index("### seed001.soft_f1_score") > 0
    # --update --only: one adapter audited again, the others' records kept, the order unchanged
    again = thirdparty.audit_all(tmp_path, only="seed001.get_iou", echo=False, update=True)
    assert [a["label"] for a in again["audits"]] == [a["label"] for a in res["audits"]]


# -- the known-deviations table ----------------------------------------------------------
def _failed(prop, check, got=None, expected=None, index=(0,), **args):
    """A failing result as the engine records it: the typed fields of its counterexample
    (properties.checks.facts); the message says the same for a person, and no row reads it."""
    c = {"snippet": "fn(...)", "check": check, "args": args, "index": list(index)}
    if got is not None:
        c["got_value"] = got
    if expected is not None:
        c["expected_value"] = expected
    return {"property": prop, "verdict": "fails", "message": "(not read)", "counterexample": c}


def test_known_deviations_annotate_failures_and_stale_rows_are_named():
    from losscheck.impls.adapters import deviations
    names = {a.name for a in adapters.adapters()}
    assert {d.adapter for d in deviations.DEVIATIONS} <= names, "a row names an adapter that does not exist"
    nan = _failed("value[float64]", "value", got=float("nan"), expected=0.0)
    fine = {"property": "value[float32]", "verdict": "holds", "message": ""}
    audit_f1 = {"label": "seed001.soft_f1_score", "results": [nan, dict(fine)]}
    deviations.annotate(audit_f1)
    assert "empty column" in audit_f1["results"][0]["known"]["reason"]
    assert "known" not in audit_f1["results"][1]  # only failures are explained
    # the dice row did not match anything in an audit of seed001.dice_loss that found nothing: stale
    audit_dice = {"label": "seed001.dice_loss", "results": [dict(fine)]}
    deviations.annotate(audit_dice)
    stale = deviations.stale([audit_f1, audit_dice])
    assert any(k.startswith("seed001.dice_loss") for k in stale)
    assert not any(k.startswith("seed001.soft_f1_score :: * :: no guard") for k in stale)  # it explained the NaN
    assert not any(k.startswith("monai") for k in stale)  # not audited in this run: not stale
    # a row's property pattern keeps its brackets literal: "stability[*]" matches stability[float16]
    iou = {"label": "seed001.get_iou", "results": [_failed("stability[float16]", "value", got=0.0, expected=0.003),
                                                   _failed("stability[float16]", "value", got=float("nan"), expected=0.1),
                                                   _failed("stability[float32]", "value", got=0.0, expected=0.003)]}
    deviations.annotate(iou)
    assert ["overflow" in r.get("known", {}).get("reason", "") for r in iou["results"]] == [True, True, False]
    # values as the child process's JSON returns them: NaN as "nan"
    stored = _failed("value[float64]", "value", got="nan", expected=0.0)
    assert deviations._got_nan(stored) and not deviations._finite(stored)


def test_deviation_predicates_read_the_counterexample():
    """The rows for smp / toolbelt / keras pick their failures by the counterexample's arguments."""
    from losscheck.impls.adapters import deviations
    rec = _failed("value[float64]", "value", got=0.0, expected=1.0, probs=[[0.0, 0.5], [1.0, 0.25]], targets=[0.0, 0.0, 0.0],
                  smooth=0.0)
    assert deviations._arg(rec, "probs") == [0.0, 0.5, 1.0, 0.25]
    assert deviations._arg(rec, "smooth") == [0.0] and deviations._arg(rec, "eps") is None
    assert deviations._empty("targets")(rec) and not deviations._empty("probs", "targets")(rec)
    assert not deviations._soft_or_tied(rec)
    soft = _failed("value[float64]", "value", got=0.0, expected=0.5, probs=[0.5], targets=[0.5])
    tied = _failed("gradient[float64]", "gradient d/dprobs", got=-1.0, expected=0.0, probs=[0.0, 0.0], targets=[0.0, 1.0])
    nan = _failed("gradient[float64]", "gradient d/dprobs", got=float("nan"), expected=0.0, probs=[0.0], targets=[0.0])
    assert deviations._soft_or_tied(soft) and deviations._soft_or_tied(tied)
    assert not deviations._empty("probs", "targets")(nan)  # a NaN is never explained away
    # a counterexample of any size: every entry is kept (printed text would summarise past 1000 with "...")
    big = _failed("value[float64]", "value", got=0.0, expected=1.0, probs=[0.0] * 2000, targets=[0.0] * 2000)
    assert deviations._empty("probs", "targets")(big)


def test_deviation_rows_for_box_iou_lovasz_kl_and_masked_ce_match_their_failures_only():
    """Each row matches the failure it was written for, read from typed fields, and not a neighbour."""
    from losscheck.impls.adapters import deviations

    def known(label, rec):
        audit = {"label": label, "results": [rec]}
        deviations.annotate(audit)
        return rec.get("known", {}).get("reason", "")
    # keras's clip(p, 1e-7, 1) halves d/dp at p = 1 exactly; the same gradient at p = 0.5 is news
    half = _failed("gradient[float32]", "gradient d/dp", got=0.5, expected=1.0, p=[1.0], q=[1.0])
    assert "1/2" in known("keras.KLDivergence", half)
    assert not known("keras.KLDivergence", _failed("gradient[float32]", "gradient d/dp", got=0.5, expected=1.0,
                                                   p=[0.5], q=[1.0]))
    # torchvision's box_iou: NaN for two zero-area boxes only
    point = [1.0, 1.0, 1.0, 1.0]
    assert "union 0" in known("torchvision.box_iou", _failed("stability[float32]", "value", got=float("nan"),
                                                           expected=0.0, a=[point], b=[point]))
    assert not known("torchvision.box_iou", _failed("stability[float32]", "value", got=float("nan"), expected=0.5,
                                                    a=[[0.0, 0.0, 2.0, 2.0]], b=[[1.0, 1.0, 3.0, 3.0]]))
    # an exception is explained by the library's own message, not by its type
    one_class = _failed("value[float32]", "value")
    one_class["counterexample"].update(exception="ValueError", exception_message="Sigmoid output possible only with 1 class")
    assert "C = 1" in known("toolbelt.LovaszLoss", one_class)
    other = _failed("value[float32]", "value")
    other["counterexample"].update(exception="ValueError", exception_message="something else")
    assert not known("toolbelt.LovaszLoss", other)
    # cross-entropy with probability targets: a NaN value at a masked class, never a NaN gradient
    masked = _failed("masked[float32]", "value", got=float("nan"), expected=0.0, logits=[1.0, "-inf"], target=[1.0, 0.0])
    assert "0·(−inf)" in known("torch.nn.functional.cross_entropy", masked)
    assert not known("torch.nn.functional.cross_entropy", _failed("masked[float32]", "gradient d/dlogits",
                                                                  got=float("nan"), expected=0.0))


# -- third-party findings, pinned on the libraries themselves (skipped where not installed) ------
def _lib(name):
    if name == "keras" and "keras" not in __import__("sys").modules:
        __import__("os").environ.setdefault("KERAS_BACKEND", "jax")
        pytest.importorskip("jax")
    return pytest.importorskip(name)


@pytest.mark.parametrize("name", ["smp.LovaszLoss", "toolbelt.BinaryLovaszLoss"])
def test_binary_lovasz_of_smp_and_toolbelt_rejects_float64(name):
    """_lovasz_grad casts the sorted labels to float32 (.float()), and torch.dot refuses float64 · float32."""
    _lib("segmentation_models_pytorch" if name.startswith("smp") else "pytorch_toolbelt")
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        SEED[name].fn(x, torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64))
    assert SEED[name].fn(x.float(), torch.tensor([1.0, 0.0, 1.0])).dtype == torch.float32


def test_torch_cross_entropy_with_probability_targets_is_nan_at_a_masked_class():
    """−Σ t·log_softmax(x): 0·(−inf) = NaN at a class with logit −inf and target 0 (integer labels: finite)."""
    import torch.nn.functional as F
    x = torch.tensor([[1.0, float("-inf")]])
    assert torch.isnan(F.cross_entropy(x, torch.tensor([[1.0, 0.0]]))).all()
    assert float(F.cross_entropy(x, torch.tensor([0]))) == 0.0


def test_toolbelt_lovasz_softmax_raises_for_one_class():
    """_lovasz_softmax_flat tests len(classes) > 1 with classes = 'present' (a string of length 7)."""
    _lib("pytorch_toolbelt")
    probs, labels = torch.ones(3, 1), torch.zeros(3, dtype=torch.long)
    with pytest.raises(ValueError, match="only with 1 class"):
        SEED["toolbelt.LovaszLoss"].fn(probs, labels)


def test_keras_kl_divergence_halves_the_target_gradient_at_one():
    """clip(p, 1e-7, 1) on the jax backend: jnp.minimum splits the derivative of a tie, so d/dp at p = 1 is 1/2
    where d/dp [p log(p/q)] = log(p/q) + 1 = 1."""
    _lib("keras")
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    g = jax.grad(lambda p: SEED["keras.KLDivergence"].fn(p, jnp.asarray([1.0])).sum())(jnp.asarray([1.0]))
    assert float(g[0]) == 0.5


def test_torchvision_box_iou_is_nan_for_two_point_boxes():
    _lib("torchvision")
    point = torch.tensor([[1.0, 1.0, 1.0, 1.0]])
    assert torch.isnan(SEED["torchvision.box_iou"].fn(point, point)).all()


def test_smp_dice_intersection_is_the_minimum_and_its_smooth_counts_twice():
    _lib("segmentation_models_pytorch")
    fn = SEED["smp.DiceLoss"].fn
    f = lambda *v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    assert float(fn(f(0.5), f(0.5))) == 0.0  # Σ min(p, t) = 0.5: dice 1; the catalogue's 2·0.25/1 = 0.5
    assert float(fn(f(0.0), f(1.0), smooth=1.0)) == pytest.approx(1 - 2 / 3)  # (0 + 2)/(1 + 2): smooth 2
    assert float(fn(f(1.0), f(0.0))) == 0.0  # empty target: loss 0 whatever the prediction
    p = f(0.0, 0.0).requires_grad_(True)
    fn(p, f(0.0, 1.0)).backward()
    assert p.grad.tolist() == [-1.0, -2.0]  # the catalogue's gradient is [0, −2]: min's kink at p = t = 0


def test_keras_categorical_crossentropy_label_smoothing_is_ce_at_the_smoothed_target():
    """label_smoothing=ε is CE against (1 − ε)·t + ε/C: the catalogue's cross_entropy with that target."""
    keras = _lib("keras")
    jnp = pytest.importorskip("jax.numpy")
    x, t, eps = jnp.array([[2.0, -1.0, 0.5]]), jnp.array([[0.0, 1.0, 0.0]]), 0.1
    smoothed = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=eps, reduction=None)(t, x)
    ad = SEED["keras.CategoricalCrossentropy"]
    np.testing.assert_allclose(np.asarray(smoothed), np.asarray(ad.fn(x, (1 - eps) * t + eps / 3)), rtol=1e-6)


def test_keras_kl_divergence_halves_the_gradient_at_p_one_and_dice_is_nan_in_float16():
    _lib("keras")
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    kl = SEED["keras.KLDivergence"].fn
    g = jax.grad(kl)(jnp.array([0.0, 1.0]), jnp.array([0.5, 0.5]))
    assert float(g[1]) == pytest.approx((np.log(2) + 1) / 2, rel=1e-6)  # clip(p, 1e-7, 1): jax splits the tie at 1
    dice = SEED["keras.Dice"].fn
    z = jnp.zeros(2, jnp.float16)
    assert float(dice(z, z)) == 1.0  # two empty masks: 1 − 0/(0 + 1e-7)
    assert np.isnan(np.asarray(jax.grad(lambda p: dice(p, z))(z), np.float64)).all()  # (1e-7)² underflows


def test_monai_squared_dice_gradient_cancels_in_the_polarization_identity():
    """MONAI's squared form takes tp = (‖p‖² + ‖t‖² − ‖p − t‖²)/2 through vector_norm: ∂tp/∂p_k (exactly t_k)
    comes out a difference of two rounded 2p_k, so a small gradient entry keeps only absolute accuracy.
    At p = [0, 1], t = [0, 0], smooth 1e-5: ∂(1 − dice)/∂p_1 = 2s/(1 + s)², by hand."""
    _lib("monai")
    torch = pytest.importorskip("torch")
    fn, s = SEED["monai.DiceLoss"].fn, 1e-5
    exact = 2 * s / (1 + s) ** 2  # the adapter returns the loss 1 − (2I + s)/(Σp² + Σt² + s): ∂/∂p_1 = 2s/(1 + s)²
    # measured: 1.4e-3 (float32) and 4.7e-11 (float64) relative with torch 2.14.1, 4.7e-12 in float64 with 2.13;
    # the bounds are ~800 and ~450 eps, far beyond the few roundings of the closed form
    for dtype, off in ((torch.float32, 1e-4), (torch.float64, 1e-13)):
        p = torch.tensor([0.0, 1.0], dtype=dtype, requires_grad=True)
        t = torch.zeros(2, dtype=dtype)
        fn(p, t, 0.0, True).sum().backward()
        err = abs(float(p.grad[1]) - exact) / exact
        assert err > off, err  # far beyond eps (1.2e-7, 2.2e-16): the cancellation, not rounding
        p.grad = None
        fn(p, t, 0.0, False).sum().backward()  # the plain form (ord 1) sums p·t directly: accurate
        assert float(p.grad[1]) == pytest.approx(s / (1 + s) ** 2, rel=1e3 * torch.finfo(dtype).eps)


def test_box_rows_check_the_eps_bias_and_degenerate_boxes_by_the_counterexample():
    """The eps row explains a value only within eps's bias at the failing boxes; the degenerate-box row
    only boxes of zero width or height (torchvision's documented domain excludes them)."""
    from losscheck.impls.adapters import deviations

    def rec(check, got, expected, a, b, index=(0,)):
        return _failed("value[float64]", check, got=got, expected=expected, index=index, a=a, b=b)
    # 1 − 1/567 against 1 − 1/(567 + 1e-7): 3.1e-13 apart, a bias of 1e-7/567²
    assert deviations._box_eps_bias(rec("value", 0.9982363315699759, 0.9982363315696648, [[-1., -1., 6., 80.]], [[0., 0., 1., 1.]]))
    # the same boxes, 1e-6 off: far beyond the bias, a finding
    assert not deviations._box_eps_bias(rec("value", 0.9982373315696648, 0.9982363315696648, [[-1., -1., 6., 80.]],
                                            [[0., 0., 1., 1.]]))
    assert not deviations._box_eps_bias(rec("value", float("nan"), 2.5, [0., 0., 1., 1.], [0., 0., 1., 1.]))
    assert not deviations._box_eps_bias(rec("gradient d/da", 0.5, 0.25, [0., 0., 1., 1.], [0., 0., 1., 1.]))
    # the second row of a batch is the failing one
    batch = rec("value", 1.0e-7, 0.0, [[0., 0., 1e-9, 1e-9], [0., 0., 1., 1.]], [0., 0., 1., 1.], index=(1,))
    assert deviations._boxes(batch) == ([0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]) and deviations._box_eps_bias(batch)
    assert deviations._degenerate_box(rec("value", float("nan"), 2.5, [[0., 0.125, 1e-45, 0.125]], [[0., 0., 0., 0.]]))
    assert not deviations._degenerate_box(rec("value", float("nan"), 2.5, [0., 0., 1., 1.], [0., 0., 2., 1.]))
    # soft_margin_loss's row explains its overflow (inf, and the NaN gradient inf/inf), not an ordinary value error
    margin = {"label": "torch.nn.functional.soft_margin_loss",
              "results": [_failed("stability[float32]", "value", got=float("inf"), expected=89.0),
                          _failed("value[float32]", "value", got=0.5, expected=0.4)]}
    deviations.annotate(margin)
    assert "77529" in margin["results"][0]["known"]["upstream"] and "known" not in margin["results"][1]


@pytest.mark.skipif(not frameworks.get("torch").available(), reason="torch is not installed")
def test_the_report_runs_our_audits_the_proofs_and_the_adapters_in_one_pool():
    """``losscheck report --jobs N``: one process pool for our audits, the symbolic claims and the
    adapters' audits (each adapter still in a child process of its own); results in the plan's order."""
    from losscheck.reports.build import audit_report, build_results, plan_ours
    ours, proofs, theirs = audit_report(max_examples=2, jobs=2, quantities=["hinge_loss"], adapters=["seed001.dice_loss"])
    assert [(a["framework"], a["quantity"]) for a in ours] == [(fw, q) for fw, _, q in plan_ours(["hinge_loss"])]
    assert all(a["results"] and not a.get("third_party") for a in ours)
    assert set(proofs) == {"hinge_loss"} and {r["status"] for r in proofs["hinge_loss"].values()} == {"proved"}
    (record,) = theirs
    assert record["label"] == "seed001.dice_loss" and record["third_party"] and record["results"]
    results = build_results(ours, proofs=proofs, quantities=["hinge_loss"])
    kinds = {c["name"]: c["kind"] for c in results["quantities"]["hinge_loss"]["claims"]}
    assert set(proofs["hinge_loss"]) <= {k for k, v in kinds.items() if v == "symbolic"}
