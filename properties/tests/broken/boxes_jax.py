"""Broken jax box-IoU implementations (see __init__.BROKEN)."""

import jax.numpy as jnp
import numpy as np


def giou_single_where(a, b):
    for name, x in (("a", a), ("b", b)):
        if not jnp.issubdtype(x.dtype, jnp.floating) or x.shape[-1] != 4:
            raise ValueError(f"{name} must be floating boxes (..., 4)")
        if isinstance(x, (np.ndarray, jnp.ndarray)) and bool(((x[..., 2] < x[..., 0]) | (x[..., 3] < x[..., 1])).any()):
            raise ValueError(f"{name} has x2 < x1 or y2 < y1")
    a2, b2 = a.astype(jnp.float64), b.astype(jnp.float64)
    iw = jnp.maximum(jnp.minimum(a2[..., 2], b2[..., 2]) - jnp.maximum(a2[..., 0], b2[..., 0]), 0)
    ih = jnp.maximum(jnp.minimum(a2[..., 3], b2[..., 3]) - jnp.maximum(a2[..., 1], b2[..., 1]), 0)
    inter = iw * ih
    union = (a2[..., 2] - a2[..., 0]) * (a2[..., 3] - a2[..., 1]) + (b2[..., 2] - b2[..., 0]) * (b2[..., 3] - b2[..., 1]) - inter
    C = (jnp.maximum(a2[..., 2], b2[..., 2]) - jnp.minimum(a2[..., 0], b2[..., 0])) * \
        (jnp.maximum(a2[..., 3], b2[..., 3]) - jnp.minimum(a2[..., 1], b2[..., 1]))
    # the classic trap: the value is guarded, but the unused branch 0/0 still sends NaN into the gradient
    iou = jnp.where(union > 0, inter / union, 0.0)
    return (iou - jnp.where(C > 0, (C - union) / C, 0.0)).astype(a.dtype)
