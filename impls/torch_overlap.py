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
  soft_f1's gradient ``2 (t_k D - I) / D^2`` would (autodiff's
  ``2 t_k / D - 2 I / D^2`` cancels ``t_k p_k`` against itself where ``p_k``
  dominates its column): that entry's is computed from sums that leave it
  out (``_soft_f1_partial``).
* Bad input raises ``ValueError`` naming the argument.  The range checks of
  ``probs`` and ``targets`` read the data: they run for CPU tensors only and
  are skipped on other devices (no device synchronisation); shapes, dtypes
  and the scalar arguments are always checked.
"""

from __future__ import annotations

import math
import numbers

import torch

__all__ = ["soft_f1", "dice", "jaccard"]

_HALF = (torch.float16, torch.bfloat16)


def _check_pair(probs, targets, min_ndim: int = 0):
    """(probs, targets) in the compute dtype, and the output dtype."""
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
    for name, x in (("probs", probs), ("targets", targets)):
        if x.device.type == "cpu" and x.numel() and bool(((x < 0) | (x > 1) | (x != x)).any()):
            raise ValueError(f"{name} must lie in [0, 1]")
    ct = torch.float32 if probs.dtype in _HALF else probs.dtype
    return probs.to(ct), targets.to(device=probs.device, dtype=ct), probs.dtype


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


def _soft_f1_partial(x: torch.Tensor, y: torch.Tensor, eps: float) -> torch.Tensor:
    """d/dx of ``2 I / D`` (``I = sum x y``, ``D = sum x + sum y + eps`` per column over
    axis 0): ``2 (y_k D - I) / D^2``, 0 in empty columns (``x`` is ``p`` or ``t``, ``y`` the other).

    Autodiff's ``2 y_k / D - 2 I / D^2`` rounds ``D`` and ``I`` before subtracting, an error
    of ``eps * y_k * D``; the derivative's own sensitivity to its inputs is at least
    ``y_k (D - x_k)``, so that is accurate except where ``x_k`` carries most of ``D``: there
    the ``y_k x_k`` in ``y_k D`` and in ``I`` cancel exactly (p = [0, 1], t = [0, 1.19e-7]:
    2 t^2 / D^2 = 2.8e-14 came out 9e5 ULPs off).  An entry above ``h D`` (h = 1/2 + n eps,
    at most 3/4, for the n terms of D) is the only one of its column (the computed D is at
    least ``(1 - n eps) D``); its derivative is taken as
    ``2 (y_m (D - x_m) - (I - x_m y_m)) / D^2``, with both differences summed directly with
    entry m left out (no subtraction).  The others keep the plain form, within a factor
    ``1 / (1 - h) <= 4`` of their sensitivity.  The terms are divided by D before
    subtracting and the difference (at most 1 in magnitude) by D after it, so nothing
    overflows or underflows that the derivative does not.
    """
    h = min(0.5 + (x.shape[0] + 2) * torch.finfo(x.dtype).eps, 0.75)
    sum_y, xy = y.sum(dim=0), x * y
    den = x.sum(dim=0) + sum_y + eps
    d = torch.where(den == 0, torch.ones_like(den), den)  # empty columns: x = y = 0, so the result is 0
    top = x > den * h
    den_rest = torch.where(top, 0.0, x).sum(dim=0) + sum_y + eps  # D - x_m
    inter_rest = torch.where(top, 0.0, xy).sum(dim=0)  # I - x_m y_m
    a = torch.where(top, den_rest / d, 1.0)
    b = torch.where(top, inter_rest / d, xy.sum(dim=0) / d)
    return torch.addcmul(-b, y, a) / d * 2


class _SoftF1(torch.autograd.Function):
    """``2 sum p t / (sum p + sum t + eps)`` per column over axis 0, differentiated by
    :func:`_soft_f1_partial` (the backward and jvp are differentiable operations on the
    saved inputs, so double backward and ``torch.func`` transforms work too)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(p, t, eps):
        inter = (p * t).sum(dim=0)
        den = p.sum(dim=0) + t.sum(dim=0) + eps
        return _ratio(2 * inter, den)

    @staticmethod
    def setup_context(ctx, inputs, output):
        p, t, eps = inputs
        ctx.save_for_backward(p, t)
        ctx.save_for_forward(p, t)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad):
        p, t = ctx.saved_tensors
        return (grad * _soft_f1_partial(p, t, ctx.eps) if ctx.needs_input_grad[0] else None,
                grad * _soft_f1_partial(t, p, ctx.eps) if ctx.needs_input_grad[1] else None, None)

    @staticmethod
    def jvp(ctx, dp, dt, deps):
        p, t = ctx.saved_tensors
        out = torch.zeros(p.shape[1:], dtype=p.dtype, device=p.device)
        if dp is not None:
            out = out + (_soft_f1_partial(p, t, ctx.eps) * dp).sum(dim=0)
        if dt is not None:
            out = out + (_soft_f1_partial(t, p, ctx.eps) * dt).sum(dim=0)
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

    The gradient is computed in closed form (see :func:`_soft_f1_partial`):
    autodiff's ``2 t_k / D - 2 I / D^2`` cancels catastrophically when one entry
    carries most of a column.
    """
    p, t, out_dtype = _check_pair(probs, targets, min_ndim=1)
    eps = _check_nonnegative(eps, "eps")
    return _SoftF1.apply(p, t, eps).to(out_dtype)


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
    p, t, out_dtype = _check_pair(probs, targets)
    smooth = _check_nonnegative(smooth, "smooth")
    if not isinstance(squared, bool):
        raise ValueError(f"squared must be a bool, got {squared!r}")
    inter = (p * t).sum()
    size = (p * p).sum() + (t * t).sum() if squared else p.sum() + t.sum()
    return _ratio(2 * inter + smooth, size + smooth).to(out_dtype)


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
    p, t, out_dtype = _check_pair(probs, targets)
    smooth = _check_nonnegative(smooth, "smooth")
    inter = (p * t).sum()
    union = p.sum() + t.sum() - inter  # >= (P + T)/2: no cancellation
    return _ratio(inter + smooth, union + smooth).to(out_dtype)
