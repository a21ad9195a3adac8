"""Deliberately broken implementations: the suite must catch every one.

Each entry of ``BROKEN`` names the quantity, the framework, the callable
and the property expected to catch it (a prefix of the property name).
The meta-tests audit each with that property and assert it fails; our own
implementations are audited by the ordinary tests and must never fail.
"""

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Broken:
    name: str
    quantity: str
    framework: str
    module: str  # module under properties.tests.broken
    caught_by: str  # part of the name of the property expected to fail
    why: str
    #: the gate at which that property fails it (properties.severity): "bug", the default, for a real
    #: bug; "accuracy" for a variant that only loses digits, "range" for one that fails only outside
    #: the typical domain
    gate: str = "bug"

    @property
    def target(self) -> str:
        return f"properties/tests/broken/{self.module}.py:{self.name}"

    def load(self) -> Callable:
        import importlib
        return getattr(importlib.import_module(f"broken.{self.module}"), self.name)


_T, _J = "smoothing_torch", "smoothing_jax"
BROKEN = [
    Broken("lse_no_max_shift", "logsumexp", "torch", _T, "stability", "log Σ exp(k·x) overflows to inf for large x"),
    Broken("lse_forgot_inv_k", "logsumexp", "torch", _T, "value", "returns log Σ exp(k·x), without the 1/k"),
    Broken("lse_nan_all_masked", "logsumexp", "torch", _T, "masked", "max-shift with the -inf max of an all-masked row: NaN"),
    Broken("lse_half_native", "logsumexp", "torch", _T, "[float16]", "accumulates in float16 instead of float32"),
    Broken("lse_shift_in_place", "logsumexp", "torch", _T, "unchanged", "x.sub_(max): the right value, the caller's x shifted"),
    Broken("lse_every_third_call_off", "logsumexp", "torch", _T, "repeatable", "2^-10 off on every third call"),
    Broken("lse_inf_as_empty_row", "logsumexp", "torch", _T, "inf", "a +inf entry taken for an all -inf row: -inf where "
           "the formula gives +inf (a +inf input is outside the typical domain: a range finding)", gate="range"),
    Broken("softmax_wrong_backward", "softmax", "torch", _T, "gradient", "hand-written backward drops the −p·Σ w p term"),
    Broken("softmax_lse_off_by_ulps", "softmax", "torch", _T, "value[float32]",
           "exp(k·x − L) with L 32·eps·|L| above logsumexp: at large, close logits within the comparison's "
           "tolerance entry by entry, but the entries sum to 1 − 32·eps·|L| (the image's row sum)"),
    Broken("softmax_ignores_k", "softmax", "torch", _T, "value", "softmax(x) whatever k"),
    Broken("softmax_nan_all_masked", "softmax", "torch", _T, "masked", "0/0 on an all-masked row"),
    Broken("softmax_accepts_k0", "softmax", "torch", _T, "contract:k", "no validation: k = 0 returns a uniform vector"),
    Broken("soft_argmax_one_based", "soft_argmax", "torch", _T, "value", "indices counted from 1 (seed 004's convention)"),
    Broken("soft_topk_no_min_shift", "soft_topk", "torch", _T, "value", "skips x ← x − min(x): not the seed's recursion"),
    Broken("soft_topk_k_first_pass_only", "soft_topk", "torch", _T, "value", "applies k in the first pass only"),
    Broken("soft_topk_renormalised", "soft_topk", "torch", _T, "claim:sum", "divides each pass by its max: Σ p ≠ topk"),
    Broken("soft_topk_detached_min", "soft_topk", "torch", _T, "gradient",
           "detaches min(x): the recursion is not shift invariant, its gradient flows through the min"),
    Broken("soft_topk_in_input_dtype", "soft_topk", "torch", _T, "stability[float32]",
           "the naive recursion in float32: its derivative (~(k span x)^topk) overflows, inf·0 = NaN — at spans "
           "and sharpness beyond the typical domain, so a range finding", gate="range"),
    Broken("lse_concrete_k_check", "logsumexp", "jax", _J, "jit", "validates k with float(k): fails under jax.jit"),
    Broken("softmax_no_max_shift", "softmax", "jax", _J, "stability", "exp(k·x)/Σ exp(k·x) overflows: NaN"),
    Broken("soft_argmax_one_based_jax", "soft_argmax", "jax", _J, "value", "indices counted from 1"),
    Broken("lse_nan_grad_all_masked_jax", "logsumexp", "jax", _J, "masked", "jax.nn.logsumexp-style: NaN gradient on an all-masked row"),
]

_C, _CJ, _E, _M, _R = "classification_torch", "classification_jax", "exact_torch", "multilabel_torch", "ranking_torch"
BROKEN += [
    Broken("ce_log_of_softmax", "cross_entropy", "torch", _C, "stability", "log(softmax(x)): −inf once a probability underflows"),
    Broken("ce_soft_targets_argmax", "cross_entropy", "torch", _C, "value", "probability targets collapsed to their argmax"),
    Broken("ce_masked_nan", "cross_entropy", "torch", _C, "masked", "0 · (−inf) = NaN at a masked class with weight 0"),
    Broken("entropy_nan_at_zero", "entropy", "torch", _C, "masked", "0 · log 0 = NaN instead of 0"),
    Broken("kl_swapped", "kl_divergence", "torch", _C, "value", "KL(q‖p) instead of KL(p‖q)"),
    Broken("kl_seed003", "kl_divergence", "torch", _C, "claim:self", "seed 003's Σ p log(p + q)"),
    Broken("soft_accuracy_batch_axis", "soft_accuracy", "torch", _C, "value", "softmax over the batch axis"),
    Broken("logistic_naive", "logistic_loss", "torch", _C, "stability", "log(1 + exp(−l·f)) overflows"),
    Broken("hinge_wrong_sign", "hinge_loss", "torch", _C, "value", "max(0, 1 + l·f)"),
    Broken("logistic_no_label_check", "logistic_loss", "torch", _C, "contract:l", "accepts labels other than ±1"),
    Broken("logistic_softplus_threshold", "logistic_loss", "torch", _C, "value[float64]",
           "softplus's threshold of 20 drops e^−20: digits lost, not a bug", gate="accuracy"),
    Broken("exact_coarse_quadrature", "exact_accuracy", "torch", _E, "value[float64]", "4-node Gauss–Hermite: ~1e-3 error"),
    Broken("exact_monte_carlo", "exact_accuracy", "torch", _E, "value[float64]", "samples 4096 noise draws instead of integrating"),
    Broken("exact_sigma_ignored", "exact_accuracy", "torch", _E, "value",
           "uses mu instead of mu/sigma — seen only where the probabilities are below 1e-30 in the few examples "
           "EXACT's costly reference affords (Quantity.budget), so a range finding", gate="range"),
    Broken("zlpr_clip_log", "zlpr", "torch", _M, "masked", "seed 002's clip-then-log with −1e7 / −inf masks"),
    Broken("zlpr_naive", "zlpr", "torch", _M, "stability", "log(1 + Σ e^s) overflows"),
    Broken("zlpr_probability_sigma_s", "zlpr_probability", "torch", _M, "value", "σ(s) instead of σ(2s)"),
    Broken("auc_ties_zero", "auc", "torch", _R, "value", "ties counted as 0 instead of ½"),
    Broken("auc_swapped", "auc", "torch", _R, "value", "positives and negatives swapped: 1 − AUC"),
    Broken("auc_pairs_nan_swallowed", "auc", "torch", _R, "nan", "a NaN score compares False: a finite AUC "
           "(NaN input is outside the typical domain: a range finding)", gate="range"),
    Broken("hinge_nan_swallowed_jax", "hinge_loss", "jax", _CJ, "nan", "where(margin > 0, margin, 0) turns a NaN margin "
           "into 0 (a range finding)", gate="range"),
    Broken("soft_auc_ignores_tau", "soft_auc", "torch", _R, "value", "σ(s_i − s_j) whatever tau"),
    Broken("ce_log_of_softmax_jax", "cross_entropy", "jax", _CJ, "stability", "log(softmax(x)) in jax"),
    Broken("kl_swapped_jax", "kl_divergence", "jax", _CJ, "value", "KL(q‖p) in jax"),
]

_O, _OJ = "overlap_torch", "overlap_jax"
BROKEN += [
    Broken("jaccard_union_no_subtract", "jaccard", "torch", _O, "value", "union Σp + Σt without subtracting Σp·t"),
    Broken("jaccard_intersection_twice", "jaccard", "torch", _O, "claim:bounds", "Σp·t counted twice: 2I/(P + T − I) exceeds 1"),
    Broken("soft_f1_last_axis", "soft_f1", "torch", _O, "value", "reduces over axis −1 instead of per column over axis 0"),
    Broken("dice_no_empty_guard", "dice", "torch", _O, "value", "no guard for two empty sets: 0/0 = NaN instead of 1"),
    Broken("dice_smooth_numerator_only", "dice", "torch", _O, "value", "smooth added to the numerator only"),
    Broken("dice_ignores_squared", "dice", "torch", _O, "value", "squared=True computes the plain Dice"),
    Broken("dice_seed001", "dice", "torch", _O, "claim:loss_identity",
           "seed 001's dice_loss: Σ t·p in place of Σ p and smooth = 1, so predicting all ones scores 1"),
    Broken("dice_accepts_negative_smooth", "dice", "torch", _O, "contract:smooth", "smooth = −1 accepted silently"),
    Broken("dice_where_nan_grad", "dice", "jax", _OJ, "gradient", "jnp.where(den == 0, 1, num/den): NaN gradient at two empty sets"),
    Broken("soft_f1_last_axis_jax", "soft_f1", "jax", _OJ, "value", "reduces over axis −1 in jax"),
]

_LT, _LJ = "lovasz_torch", "lovasz_jax"
BROKEN += [
    Broken("lovasz_hinge_unsorted", "lovasz_hinge", "torch", _LT, "value", "increments taken in the unsorted order"),
    Broken("lovasz_hinge_ascending", "lovasz_hinge", "torch", _LT, "value", "errors sorted increasingly"),
    Broken("lovasz_hinge_ascending_concave", "lovasz_hinge", "torch", _LT, "claim:convex",
           "errors sorted increasingly: the minimum over orders of the linear pieces, not convex"),
    Broken("lovasz_hinge_no_relu", "lovasz_hinge", "torch", _LT, "value", "relu forgotten: negative errors count"),
    Broken("lovasz_hinge_cumsum_off_by_one", "lovasz_hinge", "torch", _LT, "claim:jaccard_at_binary",
           "exclusive cumsums: the increments of the set one element short"),
    Broken("lovasz_hinge_relu_straight_through", "lovasz_hinge", "torch", _LT, "gradient",
           "right value, relu's derivative taken as 1 at negative errors"),
    Broken("lovasz_softmax_all_classes", "lovasz_softmax", "torch", _LT, "value",
           "averages over all classes instead of the present ones"),
    Broken("lovasz_softmax_ascending_jax", "lovasz_softmax", "jax", _LJ, "value", "errors sorted increasingly"),
    Broken("lovasz_softmax_unchecked_jax", "lovasz_softmax", "jax", _LJ, "contract:probs",
           "no validation: probabilities outside [0, 1] accepted"),
]

_B, _BJ = "boxes_torch", "boxes_jax"
BROKEN += [
    Broken("iou_union_not_minus_inter", "box_iou", "torch", _B, "value", "union = |a| + |b|: the intersection counted twice"),
    Broken("iou_pixel_plus_one", "box_iou", "torch", _B, "value", "seed 001's +1 pixel convention on widths and heights"),
    Broken("iou_no_clamp", "box_iou", "torch", _B, "value", "intersection width not clamped at 0: negative overlap of disjoint boxes"),
    Broken("iou_no_degenerate_guard", "box_iou", "torch", _B, "stability", "0/0 = NaN when both boxes are degenerate"),
    Broken("iou_accepts_x2_lt_x1", "box_iou", "torch", _B, "contract:a", "x2 < x1 accepted silently"),
    Broken("iou_half_native", "box_iou", "torch", _B, "stability[float16]",
           "areas formed in float16 overflow for pixel-scale boxes (256 px and up): NaN on the typical domain"),
    Broken("giou_wrong_corners", "giou", "torch", _B, "value", "enclosing box from the wrong corners (the intersection's)"),
    Broken("giou_divides_by_union", "giou", "torch", _B, "value", "(|C| − |a ∪ b|) divided by |a ∪ b| instead of |C|"),
    Broken("diou_rho_not_squared", "diou", "torch", _B, "value", "ρ/c² instead of ρ²/c²"),
    Broken("ciou_alpha_in_gradient", "ciou", "torch", _B, "gradient", "α differentiated (no stop-gradient)"),
    Broken("giou_single_where", "giou", "jax", _BJ, "stability", "jnp.where guards the value only: NaN gradient at degenerate boxes"),
]
