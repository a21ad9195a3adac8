"""Argument validation shared by the ``torch_*`` modules (never by ``jax_*``).

Every check raises ``ValueError`` naming the argument (``name``). Checks of
VALUES read the data on the host, so they are done for CPU tensors only and
skipped for tensors on other devices (reading them would force a device
synchronisation); shape and dtype checks are always done.

The leading underscore keeps this module out of the registry in
``impls/__init__.py``, which imports ``torch_*`` modules only.
"""

from __future__ import annotations

import math
import numbers

import torch

_HALF = (torch.float16, torch.bfloat16)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype to compute in: float32 for float16 and bfloat16, else ``dtype``."""
    return torch.float32 if dtype in _HALF else dtype


def floating(x, name: str, axis: str | None = None, nonempty: bool = True) -> torch.dtype:
    """A floating tensor; return the dtype to compute in.

    With ``axis`` (e.g. ``"class"``) ``x`` needs at least one dimension, the
    last one being that axis, which must be non-empty unless ``nonempty`` is
    False; without it any shape is accepted (elementwise functions).
    """
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if axis is not None:
        if x.ndim == 0:
            raise ValueError(f"{name} must have at least one dimension (the {axis} axis is the last one)")
        if nonempty and x.shape[-1] == 0:
            raise ValueError(f"{name} must have a non-empty last ({axis}) axis")
    return compute_dtype(x.dtype)


def unit_interval(x: torch.Tensor, name: str) -> torch.Tensor | None:
    """Entries in [0, 1] (NaN rejected); CPU tensors only (a bool tensor always is).

    Returns the largest entry (0-d, ``x``'s dtype) where the values were read, so that a caller
    can use it instead of a pass of its own (and knows that no entry is NaN); None where they
    were not (another device, an empty or a bool tensor)."""
    if x.device.type == "cpu" and x.numel() and x.dtype != torch.bool:
        lo, hi = torch.aminmax(x.detach())  # one pass; a NaN makes both NaN, which fails the test below
        if not (bool(lo >= 0) and bool(hi <= 1)):
            raise ValueError(f"{name} must have entries in [0, 1]")
        return hi
    return None


def class_labels(labels, name: str, scores: torch.Tensor, scores_name: str) -> torch.Tensor:
    """Integer class labels for the rows of ``scores`` (argument ``scores_name``).

    Shape ``scores.shape[:-1]``, any integer dtype (not bool), values in
    ``0..n-1`` with ``n = scores.shape[-1]`` (CPU tensors only). Returned as
    int64 on ``scores.device``.
    """
    if not isinstance(labels, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor of integer class labels, got {type(labels).__name__}")
    if labels.dtype == torch.bool or labels.is_floating_point() or labels.is_complex():
        raise ValueError(f"{name} must be an integer tensor of class labels (int64 canonically), got dtype {labels.dtype}")
    batch, n = scores.shape[:-1], scores.shape[-1]
    if labels.shape != batch:
        raise ValueError(f"{name} must have shape {scores_name}.shape[:-1] = {tuple(batch)}, got {tuple(labels.shape)}")
    if labels.device.type == "cpu" and labels.numel() > 0:
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0 or hi >= n:
            raise ValueError(f"{name} must hold class labels in 0..{n - 1} (n = {scores_name}.shape[-1]), "
                             f"got values in {lo}..{hi}")
    return labels.to(device=scores.device, dtype=torch.int64)


def positive_scalar(value, name: str, device, dtype: torch.dtype):
    """A scalar > 0 and finite: a Python number, a 0-d numpy array or a 0-d tensor.

    A number comes back as a Python float, a tensor as a 0-d tensor of
    ``dtype`` on ``device`` (its value is checked on the CPU only).
    """
    if isinstance(value, torch.Tensor):
        if value.ndim != 0:
            raise ValueError(f"{name} must be a scalar, got a tensor of shape {tuple(value.shape)}")
        if value.dtype == torch.bool or value.is_complex():
            raise ValueError(f"{name} must be a real number, got dtype {value.dtype}")
        if value.device.type == "cpu":
            v = float(value.detach())
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be > 0 and finite, got {v}")
        return value.to(device=device, dtype=dtype)
    if getattr(value, "ndim", None) == 0 and getattr(getattr(value, "dtype", None), "kind", "") in "fiu":
        value = value.item()  # a 0-d numpy array
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be > 0 and a real number (a Python number or a tensor), "
                         f"got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be > 0 and finite, got {value!r}")
    return v
