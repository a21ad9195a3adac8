"""Known deviations of third-party code: one table, each row with its reason.

A row names an adapter, a property pattern (``fnmatch``: ``"value[*]"``) and a
predicate on the failing result (the typed fields of its counterexample,
:class:`properties.results.Counterexample`: what was compared, the arguments,
the failing index, what came back; never the message text), and says
why the library does this and where upstream discusses it.  A matching
failure keeps its verdict ("fails": the behaviour is real) and carries the
row, so the report can say "known: ..." instead of presenting it as news.
A row that matches nothing in a run where its adapter was audited is stale:
the report warns, so the table cannot rot (array-api-tests' xfails file,
with the staleness check it lacks).
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from losscheck.properties.results import Counterexample


@dataclass(frozen=True)
class Deviation:
    adapter: str
    property: str  # fnmatch pattern over property names
    matches: Callable[[dict], bool]  # the failing result record -> does this row explain it?
    reason: str
    upstream: str = ""  # an issue, a PR or the documentation that states the behaviour

    @property
    def key(self) -> str:
        return f"{self.adapter} :: {self.property} :: {self.reason[:60]}"


def _ce(r) -> Counterexample:
    """The failing result's counterexample, typed (empty where there is none)."""
    return Counterexample.from_record(r.get("counterexample")) or Counterexample("")


def _check(r, prefix: str) -> bool:
    """What failed is ``prefix`` ("value", "gradient", "gradient d/dp", "claim ...")."""
    return _ce(r).check.startswith(prefix)


def _got_nan(r) -> bool:
    """The call gave NaN where the reference is not NaN."""
    g = _ce(r).got_value
    return g is not None and math.isnan(g)


def _no_nan(r) -> bool:
    """The failure is not a NaN (a value-level explanation never covers one)."""
    return not _got_nan(r)


def _finite(r) -> bool:
    """Neither a NaN nor an infinity came back (a bias, not a breakdown)."""
    g = _ce(r).got_value
    return g is None or math.isfinite(g)


def _raised(r) -> bool:
    return _ce(r).exception is not None


def _got_expected(r) -> tuple[float, float] | None:
    c = _ce(r)
    return None if c.got_value is None or c.expected_value is None else (c.got_value, c.expected_value)


def _arg(r, name):
    """The values of argument ``name`` in the result's counterexample, flattened (None if absent)."""
    args = _ce(r).args or {}
    if name not in args:
        return None
    return [float(v) for v in np.ravel(np.asarray(args[name], dtype=object))]


def _boxes(r):
    """The counterexample's box pair (a, b) at the failing index, as two lists of 4 (None if unreadable)."""
    a, b = _arg(r, "a"), _arg(r, "b")
    if not a or not b or len(a) % 4 or len(b) % 4:
        return None
    index = _ce(r).index
    i = index[0] if index else 0
    pick = lambda v: v[4 * min(i, len(v) // 4 - 1):][:4]  # noqa: E731 (broadcast: a single box serves every row)
    return pick(a), pick(b)


def _degenerate_box(r):
    """A box of the counterexample's pair has zero (or negative) width or height."""
    pair = _boxes(r)
    return pair is not None and any(x2 <= x1 or y2 <= y1 for x1, y1, x2, y2 in pair)


def _box_eps_bias(r):
    """A finite value within the bias of an eps = 1e-7 added to the union, the enclosing box's area and its
    squared diagonal: |loss − loss_eps| ≤ eps·(1/|a ∪ b| + 1/|C| + 1/c²) to first order (GIoU, DIoU; CIoU's
    α = v/(1 − IoU + v + eps) changes α·v by at most v·eps/(1 − IoU + v)), taken three times over; any finite
    value once an area is ≲ eps, where eps dominates."""
    values, pair = _got_expected(r), _boxes(r)
    if not _check(r, "value") or values is None or pair is None:
        return False
    got, exp = values
    if not (math.isfinite(got) and math.isfinite(exp)):
        return False
    (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = pair
    inter = max(0.0, min(ax2, bx2) - max(ax1, bx1)) * max(0.0, min(ay2, by2) - max(ay1, by1))
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    cw, ch = max(ax2, bx2) - min(ax1, bx1), max(ay2, by2) - min(ay1, by1)
    terms = [union, cw * ch, cw * cw + ch * ch]
    if min(terms) <= 0:
        return False  # a degenerate box: not this row's business
    return abs(got - exp) <= 3 * 1e-7 * sum(1 / t for t in terms)


def _halved_at_one(r):
    """The failing gradient entry is half the reference's, at an entry where ``p`` is exactly 1."""
    pair, p, index = _got_expected(r), _arg(r, "p"), _ce(r).index
    if pair is None or p is None or not index:
        return False
    got, exp = pair
    return p[int(np.ravel_multi_index(index, np.shape(_ce(r).args["p"])))] == 1.0 and math.isclose(got, exp / 2, rel_tol=1e-2)


def _empty(*names):
    """A predicate: the counterexample's ``names`` are all zero (an empty mask), and no NaN is reported."""
    def pred(r):
        vals = [_arg(r, n) for n in names]
        return not _got_nan(r) and all(v is not None and not any(v) for v in vals)
    return pred


def _soft_or_tied(r):
    """The counterexample has a soft target (strictly between 0 and 1), or, for a gradient, an entry with p = t."""
    p, t = _arg(r, "probs"), _arg(r, "targets")
    if p is None or t is None or _got_nan(r):
        return False
    return any(0 < v < 1 for v in t) or (_check(r, "gradient") and any(a == b for a, b in zip(p, t)))


#: the box losses that add eps = 1e-7 to their denominators, with where they do
_BOX_EPS = (("torchvision.generalized_box_iou_loss", "torchvision/ops/giou_loss.py, eps=1e-7"),
            ("torchvision.distance_box_iou_loss", "torchvision/ops/diou_loss.py, eps=1e-7"),
            ("torchvision.complete_box_iou_loss", "torchvision/ops/ciou_loss.py, eps=1e-7"),
            ("fvcore.giou_loss", "fvcore/nn/giou_loss.py, eps=1e-7"))

DEVIATIONS: list[Deviation] = [
    Deviation("seed001.soft_f1_score", "*", _got_nan,
              "no guard for an empty column: 2·tp / (2·tp + fn + fp + eps) is 0/0 at eps = 0 (the snippet's default "
              "eps = 1e-6 avoids the NaN but scores an empty column 0, the worst, where the catalogue says 1)"),
    Deviation("seed001.dice_loss", "*", lambda r: bool(r.get("conventions")) and r.get("verdict") == "fails",
              "A_sum = Σ t·p where V-Net's denominator has Σ p²: a prediction's false positives never enter the "
              "denominator, so predicting all ones on an empty target costs nothing (the seed's mistake)"),
    Deviation("seed001.get_iou", "stability[float16]", lambda r: _ce(r).got_value == 0.0 or _got_nan(r),
              "the areas (x2 − x1 + 1)·(y2 − y1 + 1) are formed in the input dtype and overflow for large boxes "
              "(float16 from 256 px): IoU inter/inf = 0, or inf/inf = NaN, where it is positive"),
    *[Deviation(lib, prop, _finite,
                "eps = 1e-7 is added to the union and to the enclosing box's area (its default): a bias of about "
                "1e-7/area in values and gradients, visible in float64 and for small boxes (GIoU(a, a) = 0.905 "
                "for a box of area 9.5e-7, so the identity, nesting and scale claims fail there)", doc)
      for prop in ("gradient[float64]", "claim:*")  # values: the row below checks the bias's size
      for lib, doc in _BOX_EPS],
    *[Deviation(lib, "*", _box_eps_bias,
                "eps = 1e-7 in the denominators (its default) biases values by up to ~1e-7·(1/|a ∪ b| + 1/|C| + "
                "1/c²): 3e-13 at a union of 567 (float64), 5e-5 for two equal boxes of area 0.002 (float32), and "
                "any value once the boxes' areas are ≲ 1e-7 (GIoU loss 1 where it is 1.76)", doc)
      for lib, doc in _BOX_EPS],
    Deviation("torchvision.complete_box_iou_loss", "*", _degenerate_box,
              "torchvision requires 0 ≤ x1 < x2 and 0 ≤ y1 < y2 and does not guard degenerate boxes (atan(w/h) of a "
              "box with w = h = 0 is 0/0: NaN), where the catalogue asks for a finite value; maintainers declined an "
              "eps for that", "https://github.com/pytorch/vision/issues/3404, https://github.com/pytorch/vision/pull/3405 "
              "(closed: 'we don't allow those'), https://github.com/pytorch/vision/issues/7746 (open)"),
    Deviation("torchvision.box_iou", "*", lambda r: _degenerate_box(r) and _got_nan(r),
              "inter / union with no guard: two boxes of zero area (points or lines) have union 0, so IoU is 0/0 = NaN "
              "where the catalogue gives 0; maintainers: degenerate boxes are not allowed (no check either, to avoid "
              "a device sync)", "https://github.com/pytorch/vision/issues/3404, https://github.com/pytorch/vision/pull/3405 "
              "(closed), https://github.com/pytorch/vision/issues/6974 (closed)"),
    Deviation("torch.nn.functional.soft_margin_loss", "*",
              lambda r: not _finite(r),
              "log(1 + exp(−l·f)) is formed as written: exp overflows from l·f = −12 in float16 (−89 in float32, "
              "−710 in float64), giving a loss of +inf and a gradient of inf/inf = NaN where both are finite",
              "https://github.com/pytorch/pytorch/issues/77529 (open: 'softmarginloss should use log1p')"),
    Deviation("optax.softmax_cross_entropy", "masked[*]", lambda r: _check(r, "value") and _got_nan(r),
              "−Σ labels·log_softmax(logits): a masked class (logit −inf) with label 0 gives 0·(−inf) = NaN, where "
              "the catalogue (and xlogy) counts it 0", "https://github.com/google-deepmind/optax/issues/896"),
    *[Deviation(name, "masked[*]", lambda r: _check(r, "value") and _got_nan(r),
                "−Σ target·log_softmax(logits) with probability targets: a masked class (logit −inf) with target 0 "
                "gives 0·(−inf) = NaN, where the catalogue (and xlogy) counts it 0 (integer labels are not affected)",
                src)
      for name, src in (("torch.nn.functional.cross_entropy",
                         "aten/src/ATen/native/LossNLL.cpp: cross_entropy_loss_prob_target (-(input * target).sum)"),
                        ("keras.CategoricalCrossentropy", "keras/src/losses/losses.py: categorical_crossentropy "
                         "(-sum(y_true * log_softmax(y_pred)))"))],
    *[Deviation(name, "masked[*]", _got_nan,
                "a row whose entries are all −inf (fully masked) is 0/0 = NaN; the catalogue gives it 0 (no mass). "
                "PyTorch's maintainers chose NaN on purpose (only SDPA got a safe softmax)", ref)
      for name, ref in (("torch.softmax", "https://github.com/pytorch/pytorch/issues/25110 (closed: expected); "
                                          "https://github.com/pytorch/pytorch/issues/55056 (open: safe softmax)"),
                        ("jax.nn.softmax", "jax.nn.softmax documents `where=` for masking; plain −inf rows give NaN"))],
    *[Deviation(name, "*", _finite,
                "max + log(Σ exp(x − max)): the log of a sum near 1 (log1p of the terms but the largest would keep "
                "them), so a result near 0 loses relative accuracy: logsumexp([0, −9]) = 1.2340e-4 comes out "
                "1.2337e-4 in float32 (2e-4 relative, 121 ULPs of the 50 its condition allows)",
                "https://github.com/jax-ml/jax/issues/1205 (closed: TensorFlow and SciPy compute it the same way)")
      for name in ("torch.logsumexp", "jax.nn.logsumexp")],
    *[Deviation(name, "*", _finite,
                "−Σ t·log_softmax(x) with log_softmax = x − logsumexp(x): a loss near 0 is the difference of two "
                "nearly equal numbers, so it keeps only absolute accuracy (1.1e-50 comes out 0 in float64, 9.11e-4 "
                "is 250 ULPs off in float32), as logsumexp near 0 does",
                "https://github.com/jax-ml/jax/issues/1205 (logsumexp without log1p; closed)")
      for name in ("optax.softmax_cross_entropy", "keras.CategoricalCrossentropy", "torch.nn.functional.cross_entropy")],
    Deviation("torch.nn.functional.binary_cross_entropy_with_logits", "*", _finite,
              "max(x, 0) − x·z + log(exp(−max) + exp(−x − max)): the log of a sum near 1 where log1p would keep the "
              "small term, so a loss near 0 keeps only absolute accuracy (9.11e-4 is 250 ULPs off in float32), and "
              "ℓ(f, l) and ℓ(−f, −l) may differ in the last bit (the catalogue's exact symmetry claim)",
              "aten/src/ATen/native/Loss.cpp: binary_cross_entropy_with_logits"),
    Deviation("optax.dice_loss", "*", lambda r: _got_nan(r) and _arg(r, "smooth") == [0.0],
              "smooth = 0 (optax's default is 1, 'to avoid division by zero'): an empty mask, or one whose products "
              "underflow, is 0/0 = NaN in value and gradient, where the catalogue's Dice is 1 with a zero gradient",
              "optax/losses/_segmentation.py: dice_loss (smooth)"),
    *[Deviation(name, "masked[*]", lambda r: _check(r, "gradient") and _got_nan(r),
                "a fully masked row (all −inf) has the right value, −inf, but its gradient is the softmax of that "
                "row, 0/0 = NaN; the catalogue gives a masked row a zero gradient")
      for name in ("torch.logsumexp", "jax.nn.logsumexp")],
    *[Deviation(name, "masked[*]", lambda r: _check(r, "gradient d/dp") and _got_nan(r),
                "d/dp of −p log p at p = 0 is the one-sided +inf (NaN times a zero cotangent); the catalogue gives "
                "an entry with p = 0 a zero gradient (0·log 0 = 0 as a branch)")
      for name in ("torch.special.entr", "jax.scipy.special.entr")],
    Deviation("torch.nn.functional.kl_div", "masked[*]", lambda r: _check(r, "gradient d/dp"),
              "the target's gradient at p = 0 is that of xlogy(p, p): log 0 + 1 − log q = −inf (NaN times a zero "
              "cotangent), where the catalogue gives a class with p = 0 a zero gradient (0·log 0 = 0 as a branch); "
              "maintainers: p log p is not differentiable at 0", "https://github.com/pytorch/pytorch/issues/89558"),
    Deviation("optax.kl_divergence", "masked[*]", lambda r: _check(r, "gradient d/dp") and _got_nan(r),
              "where(targets == 0, 0, log(targets)) differentiates the untaken log branch: a NaN gradient at "
              "every zero target (the jnp.where pitfall)", "https://github.com/google-deepmind/optax/pull/1786 (open)"),
    Deviation("monai.box_pair_giou", "*", _no_nan,
              "box_pair_giou computes in float32 (COMPUTE_DTYPE) and adds float32 eps (1.2e-7) to the union and "
              "the enclosing area: float64 inputs get float32 accuracy, and boxes of area ≲ 1e-5 a visible bias "
              "(GIoU(a, a) = 0.889 for a box of area 1e-6)", "monai/data/box_utils.py: COMPUTE_DTYPE, _get_eps"),
    Deviation("monai.BoxGIoULoss", "*", _no_nan,
              "BoxGIoULoss calls box_pair_giou in float32 (COMPUTE_DTYPE) and casts 1 − GIoU back: float64 inputs get "
              "float32 accuracy, small boxes the float32 eps bias (as monai.box_pair_giou)",
              "monai/losses/giou_loss.py; monai/data/box_utils.py: COMPUTE_DTYPE, _get_eps"),
    Deviation("torchmetrics.binary_auroc", "*", _no_nan,
              "scores outside [0, 1] go through a sigmoid first (normalization='sigmoid', its default): strictly "
              "increasing, but it rounds distinct scores to ties (both 1 for s ≳ 9 in float16 and 17 in float32, "
              "both 0 below about −88 in float32); and the ROC curve is formed from counts cast to float32, so float64 "
              "scores get a float32 AUC (1/3 as 0.33333331)",
              "torchmetrics/functional/classification/precision_recall_curve.py: _binary_precision_recall_curve_format "
              "(normalize_logits_if_needed); torchmetrics/utilities/compute.py: _safe_divide"),
    Deviation("kornia.lovasz_softmax_loss", "*", lambda r: "N > 1" in (_ce(r).exception_message or ""),  # the library's own message
              "lovasz_softmax_loss only supports C > 1 classes (its note: 'For binary labels please use the "
              "Lovasz-Hinge loss'): one class raises ValueError", "kornia/losses/lovasz_softmax.py: lovasz_softmax_loss"),
    Deviation("kornia.lovasz_softmax_loss", "*", lambda r: not _raised(r) and not _got_nan(r),
              "the loss is the mean over all C classes, not over the classes present in the labels (its Convention "
              "block: 'a class absent from the image enters it with that image's largest probability for the class'); "
              "with every class present it agrees with the catalogue to rounding",
              "kornia/losses/lovasz_softmax.py: lovasz_softmax_loss"),
    Deviation("toolbelt.LovaszLoss", "*", lambda r: "only with 1 class" in (_ce(r).exception_message or ""),  # its own message
              "one class (C = 1) raises ValueError('Sigmoid output possible only with 1 class'): _lovasz_softmax_flat "
              "tests len(classes) > 1, and classes is the string 'present' (its default), of length 7; the check "
              "comes from the reference implementation's lovasz_softmax_flat",
              "pytorch_toolbelt/losses/lovasz.py: _lovasz_softmax_flat; bermanmaxim/LovaszSoftmax "
              "pytorch/lovasz_losses.py: lovasz_softmax_flat"),
    *[Deviation(name, "*", lambda r: "same dtype" in (_ce(r).exception_message or ""),  # torch.dot's message
                "float64 input raises RuntimeError (torch.dot: 'expected both vectors to have same dtype'): the "
                "Lovász gradient is built from gt_sorted.float(), float32 whatever the input, and dotted with the "
                "float64 errors", src)
      for name, src in (("smp.LovaszLoss", "segmentation_models_pytorch/losses/lovasz.py: _lovasz_grad"),
                        ("toolbelt.BinaryLovaszLoss", "pytorch_toolbelt/losses/lovasz.py: _lovasz_grad"),
                        ("toolbelt.LovaszLoss", "pytorch_toolbelt/losses/lovasz.py: _lovasz_grad"))],
    Deviation("toolbelt.soft_micro_f1", "*", _got_nan,
              "no guard for an empty column: 2·tp / (2·tp + fn + fp + eps) is 0/0 at eps = 0 (its default eps = 1e-6 "
              "avoids the NaN but scores an empty column 0, the worst, where the catalogue says 1)",
              "pytorch_toolbelt/losses/soft_f1.py: soft_micro_f1"),
    # smp and pytorch-toolbelt (smp took its losses from toolbelt): an empty target's loss is set to 0
    *[Deviation(name, "*", _empty("targets"),
                "the loss of a channel whose target is empty is set to 0 whatever the prediction (mask = "
                "y_true.sum(dims) > 0; 'Dice loss is undefined for empty images'): predicting foreground on an "
                "empty mask costs nothing, where the catalogue's Dice / Jaccard of a nonempty prediction and an empty "
                "target is 0 (loss 1)", src)
      for name, src in (("smp.DiceLoss", "segmentation_models_pytorch/losses/dice.py: DiceLoss.forward"),
                        ("smp.JaccardLoss", "segmentation_models_pytorch/losses/jaccard.py: JaccardLoss.forward"),
                        ("toolbelt.DiceLoss", "pytorch_toolbelt/losses/dice.py: DiceLoss.forward"),
                        ("toolbelt.JaccardLoss", "pytorch_toolbelt/losses/jaccard.py: JaccardLoss.forward"))],
    *[Deviation(name, "*", _soft_or_tied,
                "smp 0.6.0 computes the intersection as (Σp + Σt − ‖p − t‖₁)/2 = Σ min(p, t) (soft_tversky_score, "
                "after the 'Jaccard metric losses' of arXiv 2302.05666): Σ p·t only at binary targets; soft targets "
                "score higher (dice(t, t) = 1), and the gradient at p = t is that of min with torch's sign(0) = 0, "
                "half the product's (−1 instead of 0 at p = t = 0)",
                "segmentation_models_pytorch/losses/_functional.py: soft_tversky_score")
      for name in ("smp.DiceLoss", "smp.JaccardLoss")],
    Deviation("keras.Dice", "*", lambda r: not _got_nan(r) and (
                  _empty("probs", "targets")(r) or r.get("property", "").endswith("[float64]")
                  or sum((_arg(r, "probs") or [1.0]) + (_arg(r, "targets") or [1.0])) < 1.0),
              "backend.epsilon() = 1e-7 is added to the denominator only: two empty masks score Dice 0 (loss 1) where "
              "the catalogue says 1, and every value and gradient carries a bias of about 1e-7/(Σp + Σt), visible in "
              "float64 and, in float32, where Σp + Σt < 1 (at p = t = 2^-100 it is the whole value)",
              "keras/src/losses/losses.py: dice"),
    Deviation("keras.KLDivergence", "*", lambda r: not _check(r, "gradient") and (
                  r.get("property") == "claim:support" or min((_arg(r, "p") or [1.0]) + (_arg(r, "q") or [1.0])) < 1e-7),
              "p and q are clipped to [1e-7, 1] (backend.epsilon()): a zero p_i contributes 1e-7·log(1e-7/q_i) "
              "instead of 0, and p > 0 = q gives 16.1·p (log 1e7) instead of +inf",
              "keras/src/losses/losses.py: kl_divergence"),
    Deviation("keras.KLDivergence", "*", lambda r: _check(r, "gradient d/dp") and _halved_at_one(r),
              "p is clipped to [1e-7, 1] by ops.clip, whose derivative at the bound itself is 1/2 on the jax backend "
              "(jnp.clip is min(max(p, lo), hi), and jax splits a tie of min evenly): the gradient of an entry with "
              "p = 1 exactly, every one-hot target's, is half of log(p/q) + 1",
              "keras/src/losses/losses.py: kl_divergence; jax.numpy.minimum (ties split the derivative)"),
]


def _property_matches(name: str, pattern: str) -> bool:
    """fnmatch with ``*`` and ``?`` only: the brackets of ``value[float64]`` are literal (to fnmatch
    they would be a character class, and ``stability[*]`` would match no property at all)."""
    return fnmatch.fnmatchcase(name, pattern.replace("[", "[[]"))


def annotate(audit: dict) -> None:
    """Attach to each failing result of ``audit`` the first row that explains it (``result["known"]``)."""
    for r in audit.get("results", []):
        if r.get("verdict") not in ("fails", "error"):
            continue
        for d in DEVIATIONS:
            if d.adapter == audit.get("label") and _property_matches(r.get("property", ""), d.property) and d.matches(r):
                r["known"] = {"reason": d.reason, "upstream": d.upstream}
                break


def stale(audits: list[dict]) -> list[str]:
    """Rows whose adapter was audited in ``audits`` but that explained no result: they no longer apply."""
    audited = {a.get("label") for a in audits}
    used = {(a.get("label"), r["known"]["reason"]) for a in audits for r in a.get("results", []) if r.get("known")}
    return [d.key for d in DEVIATIONS if d.adapter in audited and (d.adapter, d.reason) not in used]
