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
  ``P + T - I >= (P + T) / 2``, so nothing cancels; values lie in [0, 1].
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


def soft_f1(probs: torch.Tensor, targets: torch.Tensor, eps: float = 0.0) -> torch.Tensor:
    """Soft F1 per column: ``2 sum_i p_i t_i / (sum_i p_i + sum_i t_i + eps)`` over axis 0.

    Args:
        probs: (N, ...) predicted probabilities in [0, 1]; differentiable.
        targets: (N, ...) targets in [0, 1], same shape.
        eps: constant >= 0 added to the denominator only (seed 001 uses 1e-6).
    Returns:
        ``probs.shape[1:]``, dtype of ``probs``.  Equal to seed 001's
        ``2 tp / (2 tp + fn + fp + eps)``.  A column with no mass (all p and
        t zero) scores 1 when ``eps`` = 0 and 0 when ``eps`` > 0.
    """
    p, t, out_dtype = _check_pair(probs, targets, min_ndim=1)
    eps = _check_nonnegative(eps, "eps")
    inter = (p * t).sum(dim=0)
    den = p.sum(dim=0) + t.sum(dim=0) + eps
    return _ratio(2 * inter, den).to(out_dtype)


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
