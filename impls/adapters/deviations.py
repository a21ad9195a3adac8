"""Known deviations of third-party code: one table, each row with its reason.

A row names an adapter, a property pattern (``fnmatch``: ``"value[*]"``) and a
predicate on the failing result (its message and counterexample), and says
why the library does this and where upstream discusses it.  A matching
failure keeps its verdict ("fails": the behaviour is real) and carries the
row, so the report can say "known: ..." instead of presenting it as news.
A row that matches nothing in a run where its adapter was audited is stale:
the report warns, so the table cannot rot (array-api-tests' xfails file,
with the staleness check it lacks).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Callable


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


def _says(*words):
    """A predicate: the result's message contains every one of ``words``."""
    return lambda r: all(w in (r.get("message") or "") for w in words)


DEVIATIONS: list[Deviation] = [
    Deviation("seed001.soft_f1_score", "*", _says("nan"),
              "no guard for an empty column: 2·tp / (2·tp + fn + fp + eps) is 0/0 at eps = 0 (the snippet's default "
              "eps = 1e-6 avoids the NaN but scores an empty column 0, the worst, where the catalogue says 1)"),
    Deviation("seed001.dice_loss", "*", _says("declared convention(s) applied"),
              "A_sum = Σ t·p where V-Net's denominator has Σ p²: a prediction's false positives never enter the "
              "denominator, so predicting all ones on an empty target costs nothing (the seed's mistake)"),
    Deviation("seed001.get_iou", "stability[*]", _says("got 0.0"),
              "the areas (x2 − x1 + 1)·(y2 − y1 + 1) are formed in the input dtype and overflow for large boxes "
              "(float16 from 256 px): IoU 0 where it is positive"),
    *[Deviation(f"torchvision.{name}", "*[float16]" if half == "16" else "*[bfloat16]", _says("output dtype float32"),
                "torchvision's box ops upcast half precision to float32 (_upcast) and return float32",
                "torchvision/ops/_utils.py: _upcast")
      for name in ("box_iou", "generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss")
      for half in ("16", "b16")],
    *[Deviation(f"{lib}", "value[float64]", lambda r: True,
                "eps = 1e-7 is added to the union and to the enclosing box's area (its default): a bias of about "
                "1e-7/area, visible in float64 and for small boxes", doc)
      for lib, doc in (("torchvision.generalized_box_iou_loss", "torchvision/ops/giou_loss.py, eps=1e-7"),
                       ("torchvision.distance_box_iou_loss", "torchvision/ops/diou_loss.py, eps=1e-7"),
                       ("torchvision.complete_box_iou_loss", "torchvision/ops/ciou_loss.py, eps=1e-7"),
                       ("fvcore.giou_loss", "fvcore/nn/giou_loss.py, eps=1e-7"))],
    Deviation("torch.nn.functional.kl_div", "masked[*]", _says("gradient d/dp"),
              "the target's gradient at p = 0 is that of xlogy(p, p): log 0 + 1 − log q = −inf (NaN times a zero "
              "cotangent), where the catalogue gives a class with p = 0 a zero gradient (0·log 0 = 0 as a branch); "
              "maintainers: p log p is not differentiable at 0", "https://github.com/pytorch/pytorch/issues/89558"),
    Deviation("optax.kl_divergence", "masked[*]", _says("gradient d/dp", "nan"),
              "where(targets == 0, 0, log(targets)) differentiates the untaken log branch: a NaN gradient at "
              "every zero target (the jnp.where pitfall)", "https://github.com/google-deepmind/optax/pull/1786 (open)"),
    Deviation("monai.box_pair_giou", "*", lambda r: True,
              "box_pair_giou computes in float32 (COMPUTE_DTYPE) and adds float32 eps (1.2e-7) to the union and "
              "the enclosing area: float64 inputs get float32 accuracy, and boxes of area ≲ 1e-5 a visible bias "
              "(GIoU(a, a) = 0.889 for a box of area 1e-6)", "monai/data/box_utils.py: COMPUTE_DTYPE, _get_eps"),
]


def annotate(audit: dict) -> None:
    """Attach to each failing result of ``audit`` the first row that explains it (``result["known"]``)."""
    for r in audit.get("results", []):
        if r.get("verdict") not in ("fails", "error"):
            continue
        for d in DEVIATIONS:
            if d.adapter == audit.get("label") and fnmatch.fnmatchcase(r.get("property", ""), d.property) and d.matches(r):
                r["known"] = {"reason": d.reason, "upstream": d.upstream}
                break


def stale(audits: list[dict]) -> list[str]:
    """Rows whose adapter was audited in ``audits`` but that explained no result: they no longer apply."""
    audited = {a.get("label") for a in audits}
    used = {(a.get("label"), r["known"]["reason"]) for a in audits for r in a.get("results", []) if r.get("known")}
    return [d.key for d in DEVIATIONS if d.adapter in audited and (d.adapter, d.reason) not in used]
