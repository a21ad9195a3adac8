"""Overlap measures in PyTorch (catalogue section 4, seed 001): soft F1,
Dice, Jaccard.

With ``I = sum p*t``, ``P = sum p``, ``T = sum t``:

    soft_f1(p, t, eps)      = 2 I / (P + T + eps)          per column over axis 0
    dice(p, t, smooth)      = (2 I + smooth) / (P + T + smooth)      over all elements
    dice(..., squared=True) = (2 I + smooth) / (sum p^2 + sum t^2 + smooth)   (V-Net)
    jaccard(p, t, smooth)   = (I + smooth) / (P + T - I + smooth)    over all elements

References: seed 001 ("optimizing directly for the metric", soft F1 and
Dice loss); Milletari, Navab & Ahmadi, "V-Net: Fully Convolutional Neural
Networks for Volumetric Medical Image Segmentation", 3DV 2016 (squared Dice).
The loss a user minimises is ``1 - value``.

Conventions shared by every function here:

* ``probs`` (floating, in [0, 1]) and ``targets`` (in [0, 1]: binary masks
  or soft targets; any real or bool dtype) have the same shape.  ``dice``
  and ``jaccard`` reduce over ALL elements and return a 0-d tensor;
  ``soft_f1`` reduces over axis 0 and returns ``probs.shape[1:]``.
* Empty sets: where the denominator is 0 (``probs`` and ``targets`` all 0
  and ``smooth`` = 0, or an all-zero column with ``eps`` = 0) the value is 1
  and the gradient 0, never NaN: both branches of the ``where`` are finite
  (the division uses a denominator replaced by 1 there), so no NaN reaches
  the backward pass.  With ``eps > 0`` an empty soft_f1 column is the
  formula's ``0 / eps = 0``.
* float16 and bfloat16 are computed in float32 (sums of many half-precision
  terms would lose everything past 2^11 elements) and cast back: the output
  dtype is the dtype of ``probs``.
* Numerical notes: every sum is of nonnegative terms and
  ``P + T - I >= (P + T) / 2``, so no value cancels; values lie in [0, 1].
  The gradients of soft_f1, dice and jaccard would (autodiff's
  ``2 t_k / D - 2 I / D^2`` cancels ``t_k p_k`` against itself where ``p_k``
  dominates its column; dice's and jaccard's alike): they are computed in
  closed form, a dominant entry's from sums that leave it out
  (``_overlap_partial``).  Squared dice has no such term: autodiff.
* Tiny inputs: each column is scaled by a power of two (exact) so that the
  products p·t do not underflow where the value does not (``_column_scale``).
* Bad input raises ``ValueError`` naming the argument.  The range checks of
  ``probs`` and ``targets`` read the data: they run for CPU tensors only and
  are skipped on other devices (no device synchronisation); shapes, dtypes
  and the scalar arguments are always checked.
"""

from __future__ import annotations

import math
import numbers

import torch

from ._torch_checks import unit_interval

__all__ = ["soft_f1", "dice", "jaccard"]

_HALF = (torch.float16, torch.bfloat16)


def _check_pair(probs, targets, min_ndim: int = 0):
    """(probs, targets) in the compute dtype, the output dtype and, where known, the maxima of
    each over the whole array (``min_ndim = 0``: one column; from ``unit_interval``), else None."""
    if not isinstance(probs, torch.Tensor):
        raise ValueError(f"probs must be a torch.Tensor, got {type(probs).__name__}")
    if not probs.is_floating_point():
        raise ValueError(f"probs must be a floating-point tensor, got dtype {probs.dtype}")
    if not isinstance(targets, torch.Tensor):
        raise ValueError(f"targets must be a torch.Tensor, got {type(targets).__name__}")
    if targets.is_complex() or probs.is_complex():
        raise ValueError("probs and targets must be real")
    if probs.shape != targets.shape:
        raise ValueError(f"targets shape {tuple(targets.shape)} does not match probs shape {tuple(probs.shape)}")
    if probs.ndim < min_ndim:
        raise ValueError(f"probs must have at least {min_ndim} dimension(s) (axis 0 is reduced)")
    mp, mt = unit_interval(probs, "probs"), unit_interval(targets, "targets")
    ct = torch.float32 if probs.dtype in _HALF else probs.dtype
    # the maxima of the whole arrays are the column maxima only where there is one column (dice,
    # jaccard); per column, aminmax over axis 0 of a (4096, 1000) array took ~8 ms, not kept
    maxima = None if mp is None or mt is None or min_ndim != 0 else (mp.to(ct), mt.to(device=mp.device, dtype=ct))
    return probs.to(ct), targets.to(device=probs.device, dtype=ct), probs.dtype, maxima


def _check_nonnegative(v, name: str) -> float:
    if isinstance(v, torch.Tensor):
        if v.numel() != 1:
            raise ValueError(f"{name} must be a scalar, got shape {tuple(v.shape)}")
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"{name} must be a real number >= 0, got {v!r}")
    v = float(v)
    if not (v >= 0) or math.isinf(v):
        raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    return v


def _ratio(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    """num / den, and 1 where den == 0 (empty sets), with finite branches on both sides."""
    empty = den == 0
    return torch.where(empty, torch.ones_like(num), num / torch.where(empty, torch.ones_like(den), den))


def _overlap_partial(x: torch.Tensor, y: torch.Tensor, c_den, w: float, c_num,
                     scale: torch.Tensor | None = None, x_max: torch.Tensor | None = None,
                     sums=None) -> torch.Tensor:
    """``(w (y_k D - I) - c_num) / S^2`` per column over axis 0, with ``I = sum x y``,
    ``D = sum x + sum y + c_den`` and ``S`` = ``scale`` (default ``D``); 0 where ``S`` = 0 (empty
    sets: ``x = y = 0``).  The derivative d/dx_k of every measure here has this form:

        soft_f1  2 I / D              w = 2, c_den = eps, c_num = 0,      S = D
        dice     (2 I + s) / D        w = 2, c_den = s,   c_num = s,      S = D
        jaccard  (I + s) / E          w = 1, c_den = 2 s, c_num = s,      S = E = P + T - I + s
                 (d/dx_k = (y_k E - (I + s)(1 - y_k)) / E^2 = (y_k (P + T + 2 s) - I - s) / E^2)

    Autodiff's ``w y_k / D - (w I + c_num) / D^2`` (jaccard's alike) rounds ``D`` and ``I``
    before subtracting, an error of ``eps * y_k * D``; the derivative's own sensitivity to its
    inputs is at least ``y_k (D - x_k)``, so that is accurate except where ``x_k`` carries most
    of ``D``: there the ``y_k x_k`` in ``y_k D`` and in ``I`` cancel exactly (p = [0, 1],
    t = [0, 1.19e-7]: soft_f1's and dice's 2 t^2 / D^2 = 2.8e-14 came out 9e5 ULPs off, and
    jaccard's t^2 / E^2 alike).  An entry above ``h D`` (h = 1/2 + n eps, at most 3/4, for the n
    terms of D) is the only one of its column (the computed D is at least ``(1 - n eps) D``); its
    numerator is taken as ``w (y_m (D - x_m) - (I - x_m y_m)) - c_num``, with both differences
    summed directly with entry m left out (no subtraction).  The others keep the plain form,
    within a factor ``1 / (1 - h) <= 4`` of their sensitivity.  The terms are divided by S before
    subtracting (``D <= 2 S``, ``w I + c_num <= w S``) and the difference by S after it, so
    nothing overflows or underflows that the derivative does not.  ``x_max``: the column maxima
    of ``x``, where known (one pass less); ``sums``: ``(sum x, sum y, x y, sum x y)``, where the
    caller has them (four passes less).
    """
    h = min(0.5 + (x.shape[0] + 2) * torch.finfo(x.dtype).eps, 0.75)
    if sums is None:
        xy = x * y
        sums = x.sum(dim=0), y.sum(dim=0), xy, xy.sum(dim=0)
    sum_x, sum_y, xy, sum_xy = sums
    den = sum_x + sum_y + c_den
    s = den if scale is None else scale
    s = torch.where(s == 0, torch.ones_like(s), s)  # empty: x = y = 0 and c_num = 0, so the result is 0
    if x.device.type == "cpu" and x.shape[0] and \
            not bool(((x.amax(dim=0) if x_max is None else x_max) > den * h).any()):
        # no dominant entry in any column (the rule): the plain form everywhere, no masked sums
        return torch.addcmul((sum_xy * w + c_num) / -s, y, den / s, value=w).div_(s)
    top = x > den * h
    den_rest = torch.where(top, 0.0, x).sum(dim=0) + sum_y + c_den  # D - x_m
    inter_rest = torch.where(top, 0.0, xy).sum(dim=0)  # I - x_m y_m
    a = torch.where(top, den_rest / s, den / s)
    b = torch.where(top, inter_rest, sum_xy)
    b = (b * w + c_num) / s
    return torch.addcmul(-b, y, a, value=w) / s


def _column_scale(p: torch.Tensor, t: torch.Tensor, c: float, maxima=None):
    """``(p·2^k, t·2^k, 2^-k, 2^k)`` per column (axis 0): ``2^k`` brings the column's largest entry
    to [1/2, 1) where it is smaller, so that the products ``p·t`` of a column of tiny entries do
    not underflow (p = t = 2e-225: I = Σ p t is 0 in float64, the value 2.2e-225).  Powers of two
    scale exactly.  ``k`` is at most ``maxexp − 8`` (``2^-k`` stays normal) and, for ``c > 0``, small
    enough that ``c·2^(2k)`` is finite; where that binds, the column's products are below ``c``'s
    precision anyway.  The measures are rewritten in the scaled sums (I' = 2^(2k) I, P' = 2^k P):
    e.g. ``(2 I + c) / (P + T + c) = (2 I' 2^-k + c 2^k) / (P' + T' + c 2^k)``.  ``maxima``: the
    column maxima ``(max p, max t)`` where known (from ``unit_interval``), which saves two passes."""
    maxexp = math.frexp(torch.finfo(p.dtype).max)[1]  # 128, 1024: max < 2^maxexp
    if p.shape[0] == 0:
        one = p.new_ones(p.shape[1:])
        return p, t, one, one
    m = torch.maximum(*maxima) if maxima is not None else torch.maximum(p.amax(dim=0), t.amax(dim=0))
    cap = maxexp - 8 if c == 0 else (maxexp - 8 - math.frexp(c)[1]) // 2
    k = (-torch.frexp(m).exponent).clamp(min=0, max=max(cap, 0))  # frexp: m = f 2^e, f in [1/2, 1)
    scale = torch.ldexp(torch.ones_like(m), k)
    if m.device.type == "cpu" and not bool(k.any()):  # no column needs scaling (the rule): no pass over p, t
        return p, t, scale, scale
    return p * scale, t * scale, 1 / scale, scale


def _overlap_value(p: torch.Tensor, t: torch.Tensor, kind: str, c: float, maxima=None) -> torch.Tensor:
    """soft_f1 (``c`` = eps), dice or jaccard (``c`` = smooth) per column over axis 0, from the
    scaled sums of :func:`_column_scale`."""
    p, t, u, scale = _column_scale(p, t, c, maxima)
    inter = (p * t).sum(dim=0) * u  # 2^k I
    size = p.sum(dim=0) + t.sum(dim=0)
    cs = c * scale
    if kind == "soft_f1":
        return _ratio(2 * inter, size + cs)
    if kind == "dice":
        return _ratio(2 * inter + cs, size + cs)
    return _ratio(inter + cs, size - inter + cs)  # jaccard: P + T - I >= (P + T)/2, no cancellation


def _overlap_grad(x: torch.Tensor, y: torch.Tensor, kind: str, c: float, maxima=None) -> torch.Tensor:
    """d/dx of :func:`_overlap_value` (``x`` is ``p`` or ``t``, ``y`` the other: every measure
    here is symmetric in them), through :func:`_overlap_partial` on the scaled columns of
    :func:`_column_scale`: with ``x' = 2^k x`` (and y', D' = 2^k D, S' = 2^k S, I' = 2^(2k) I)
    the form ``(w (y'_k D' − I') − c_num 2^(2k)) / S'^2``.  ``maxima``: ``(max x, max y)`` per
    column, where known."""
    x, y, u, scale = _column_scale(x, y, c, maxima)
    x_max = None if maxima is None else maxima[0] * scale  # exact: a power of two
    cs = c * scale
    if kind == "soft_f1":
        return _overlap_partial(x, y, cs, 2.0, 0.0, x_max=x_max)
    if kind == "dice":
        return _overlap_partial(x, y, cs, 2.0, cs * scale, x_max=x_max)
    xy = x * y
    sums = x.sum(dim=0), y.sum(dim=0), xy, xy.sum(dim=0)  # once, for E and for the partial
    inter = sums[3] * u
    return _overlap_partial(x, y, 2 * cs, 1.0, cs * scale, scale=sums[0] + sums[1] - inter + cs,
                            x_max=x_max, sums=sums)


class _Overlap(torch.autograd.Function):
    """:func:`_overlap_value`, differentiated by :func:`_overlap_grad` (the backward and jvp
    are differentiable operations on the saved inputs, so double backward and ``torch.func``
    transforms work too).  ``kind`` and ``c`` are constants."""

    generate_vmap_rule = True

    @staticmethod
    def forward(p, t, kind, c, maxima):
        return _overlap_value(p, t, kind, c, maxima)

    @staticmethod
    def setup_context(ctx, inputs, output):
        p, t, kind, c, maxima = inputs
        ctx.save_for_backward(p, t)
        ctx.save_for_forward(p, t)
        ctx.kind, ctx.c, ctx.maxima = kind, c, maxima

    @staticmethod
    def _grads(ctx, p, t, want_p, want_t):
        m = ctx.maxima
        return (_overlap_grad(p, t, ctx.kind, ctx.c, m) if want_p else None,
                _overlap_grad(t, p, ctx.kind, ctx.c, None if m is None else m[::-1]) if want_t else None)

    @staticmethod
    def backward(ctx, grad):
        p, t = ctx.saved_tensors
        gp, gt = _Overlap._grads(ctx, p, t, ctx.needs_input_grad[0], ctx.needs_input_grad[1])
        return (None if gp is None else grad * gp, None if gt is None else grad * gt, None, None, None)

    @staticmethod
    def jvp(ctx, dp, dt, dkind, dc, dmaxima):
        p, t = ctx.saved_tensors
        out = torch.zeros(p.shape[1:], dtype=p.dtype, device=p.device)
        gp, gt = _Overlap._grads(ctx, p, t, dp is not None, dt is not None)
        if dp is not None:
            out = out + (gp * dp).sum(dim=0)
        if dt is not None:
            out = out + (gt * dt).sum(dim=0)
        return out


def soft_f1(probs: torch.Tensor, targets: torch.Tensor, eps: float = 0.0) -> torch.Tensor:
    """Soft F1 per column: ``2 sum_i p_i t_i / (sum_i p_i + sum_i t_i + eps)`` over axis 0.

    Args:
        probs: (N, ...) predicted probabilities in [0, 1]; differentiable.
        targets: (N, ...) targets in [0, 1], same shape.
        eps: constant >= 0 added to the denominator only (seed 001 uses 1e-6).
    Returns:
        ``probs.shape[1:]``, dtype of ``probs``.  Equal to seed 001's
        ``2 tp / (2 tp + fn + fp + eps)``.  A column with no mass (all p and
        t zero) scores 1 when ``eps`` = 0 and 0 when ``eps`` > 0, with a zero gradient.

    The gradient is computed in closed form (see :func:`_overlap_partial`):
    autodiff's ``2 t_k / D - 2 I / D^2`` cancels catastrophically when one entry
    carries most of a column.
    """
    p, t, out_dtype, maxima = _check_pair(probs, targets, min_ndim=1)
    eps = _check_nonnegative(eps, "eps")
    return _Overlap.apply(p, t, "soft_f1", eps, maxima).to(out_dtype)


def dice(probs: torch.Tensor, targets: torch.Tensor, smooth: float = 0.0, squared: bool = False) -> torch.Tensor:
    """Soft Dice over all elements: ``(2 sum p t + smooth) / (sum p + sum t + smooth)``.

    Args:
        probs: predicted probabilities in [0, 1], any shape; differentiable.
        targets: targets in [0, 1], same shape (binary masks or soft).
        smooth: constant >= 0 added to numerator and denominator.
        squared: use ``sum p^2 + sum t^2`` in the denominator (V-Net).
    Returns:
        A 0-d tensor of the dtype of ``probs``, in [0, 1]; 1 for two empty
        sets (all zeros, smooth = 0).  For binary targets ``1 - dice`` is 0
        only at ``probs == targets``; for soft targets only the squared form
        is (the plain one gives ``dice(t, t) = sum t^2 / sum t < 1``).
    """
    p, t, out_dtype, maxima = _check_pair(probs, targets)
    smooth = _check_nonnegative(smooth, "smooth")
    if not isinstance(squared, bool):
        raise ValueError(f"squared must be a bool, got {squared!r}")
    if not squared:  # closed-form gradient, as soft_f1's (the same formula with smooth in the numerator)
        return _Overlap.apply(p.reshape(-1), t.reshape(-1), "dice", smooth, maxima).to(out_dtype)
    # squared: autodiff's d/dp_k = 2 (t_k Q - p_k (2 I + smooth)) / Q^2 has no self-cancelling term:
    # t_k p_k^2 in t_k Q meets 2 p_k^2 t_k, not itself, so its rounding stays within about 3x of the
    # derivative's own sensitivity (t_k R, t_k^3, t_k p_k^2, p_k (2 J + smooth) with R, J the sums
    # without entry k).  Where it cancels (p_k = t_k = 1: t_k (t_k^2 - p_k^2)) the derivative itself
    # is that ill-conditioned.
    # Both sums are of degree 2: scaled by 2^k (a constant, see _column_scale) they are 2^(2k) times the
    # true ones, and smooth with them; tiny inputs no longer underflow to the empty branch's 1.
    p, t, _, scale = _column_scale(p.reshape(-1), t.reshape(-1), smooth, maxima)
    inter, cs = (p * t).sum(), smooth * scale * scale
    return _ratio(2 * inter + cs, (p * p).sum() + (t * t).sum() + cs).to(out_dtype)


def jaccard(probs: torch.Tensor, targets: torch.Tensor, smooth: float = 0.0) -> torch.Tensor:
    """Soft Jaccard index (IoU) over all elements: ``(I + smooth) / (P + T - I + smooth)``.

    Args:
        probs: predicted probabilities in [0, 1], any shape; differentiable.
        targets: targets in [0, 1], same shape.
        smooth: constant >= 0 added to numerator and denominator.
    Returns:
        A 0-d tensor of the dtype of ``probs``, in [0, 1]; 1 for two empty sets.
        At smooth = 0, ``dice = 2 J / (1 + J)`` for any soft inputs.
    """
    p, t, out_dtype, maxima = _check_pair(probs, targets)
    smooth = _check_nonnegative(smooth, "smooth")
    return _Overlap.apply(p.reshape(-1), t.reshape(-1), "jaccard", smooth, maxima).to(out_dtype)
