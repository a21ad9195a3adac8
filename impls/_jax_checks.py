"""Argument validation shared by the ``jax_*`` modules (never by ``torch_*``).

Every check raises ``ValueError`` naming the argument (``name``). Shape and
dtype checks are static and always done; checks of VALUES are done only on
concrete arguments and skipped for tracers (arguments of a function under
``jax.jit``, ``vmap`` or ``grad``), where they would need a device
synchronisation. jax and numpy arrays are accepted.

The leading underscore keeps this module out of the registry in
``impls/__init__.py``, which imports ``jax_*`` modules only.
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

_ARRAY = (jax.Array, np.ndarray, np.generic)


def is_concrete(x) -> bool:
    """Whether the value of ``x`` can be read (``x`` is not a tracer)."""
    return not isinstance(x, jax.core.Tracer)


def is_array(x) -> bool:
    """A jax array, a numpy array or a numpy scalar."""
    return isinstance(x, _ARRAY)


def compute_dtype(dtype):
    """The dtype to compute in: float32 for float16 and bfloat16, else ``dtype``."""
    return jnp.float32 if dtype in (jnp.float16, jnp.bfloat16) else dtype


def floating(x, name: str, axis: str | None = None, nonempty: bool = True):
    """A floating array; return it as a jax array and its copy in the compute dtype.

    With ``axis`` (e.g. ``"class"``) ``x`` needs at least one dimension, the
    last one being that axis, which must be non-empty unless ``nonempty`` is
    False; without it any shape is accepted (elementwise functions).
    """
    if not is_array(x):
        raise ValueError(f"{name} must be a jax or numpy array, got {type(x).__name__}")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise ValueError(f"{name} must be a floating-point array, got dtype {x.dtype}")
    if axis is not None:
        if x.ndim == 0:
            raise ValueError(f"{name} must have at least one dimension (the {axis} axis is the last one)")
        if nonempty and x.shape[-1] == 0:
            raise ValueError(f"{name} must have a non-empty last ({axis}) axis")
    x = jnp.asarray(x)
    return x, x.astype(compute_dtype(x.dtype))


def unit_interval(x, name: str) -> None:
    """Entries in [0, 1] (NaN rejected); concrete arrays only."""
    if is_concrete(x) and x.size:
        v = np.asarray(x, dtype=np.float64)
        if not np.all((v >= 0) & (v <= 1)):
            raise ValueError(f"{name} must have entries in [0, 1]")


def class_labels(labels, name: str, scores, scores_name: str):
    """Integer class labels for the rows of ``scores`` (argument ``scores_name``).

    Shape ``scores.shape[:-1]``, any integer dtype (not bool), values in
    ``0..n-1`` with ``n = scores.shape[-1]`` (concrete arrays only).
    Returned as a jax array.
    """
    if not is_array(labels):
        raise ValueError(f"{name} must be a jax or numpy array of integer class labels, got {type(labels).__name__}")
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise ValueError(f"{name} must be an integer array of class labels, got dtype {labels.dtype}")
    batch, n = tuple(scores.shape[:-1]), scores.shape[-1]
    if tuple(labels.shape) != batch:
        raise ValueError(f"{name} must have shape {scores_name}.shape[:-1] = {batch}, got {tuple(labels.shape)}")
    if is_concrete(labels) and labels.size > 0:
        values = np.asarray(labels)
        lo, hi = int(values.min()), int(values.max())
        if lo < 0 or hi >= n:
            raise ValueError(f"{name} must hold class labels in 0..{n - 1} (n = {scores_name}.shape[-1]), "
                             f"got values in {lo}..{hi}")
    return jnp.asarray(labels)


def positive_scalar(value, name: str, dtype):
    """A scalar > 0 and finite: a Python number, a numpy scalar or a 0-d array.

    Its value is checked only when concrete. Returned as a 0-d array of
    ``dtype``.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, *_ARRAY)):
        raise ValueError(f"{name} must be > 0 and a real number (a Python number or an array), "
                         f"got {type(value).__name__}")
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a scalar, got shape {np.shape(value)}")
    if is_array(value) and not (jnp.issubdtype(value.dtype, jnp.floating) or jnp.issubdtype(value.dtype, jnp.integer)):
        raise ValueError(f"{name} must be > 0 and a real number, got dtype {value.dtype}")
    if is_concrete(value):
        v = float(value)
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be > 0 and finite, got {v!r}")
    return jnp.asarray(value, dtype=dtype)
