"""Textbook jax implementations (see __init__.py)."""

import jax
import jax.numpy as jnp


def logsumexp_jax(x, k=1.0):
    empty = jnp.all(jnp.isneginf(x), axis=-1, keepdims=True)
    z = jnp.where(empty, 0.0, k * x)  # jax.nn.logsumexp's gradient is NaN on an all -inf row
    return jnp.where(empty[..., 0], -jnp.inf, jax.nn.logsumexp(z, axis=-1) / k)


def softmax_jax(x, k=1.0):
    empty = jnp.all(jnp.isneginf(x), axis=-1, keepdims=True)
    z = jnp.where(empty, 0.0, k * x)  # jax.nn.softmax is NaN on an all -inf row
    return jnp.where(empty, 0.0, jax.nn.softmax(z, axis=-1)).astype(x.dtype)


def cross_entropy_jax(logits, target):
    logp = jax.nn.log_softmax(logits, axis=-1)
    if not jnp.issubdtype(target.dtype, jnp.floating):
        return -jnp.take_along_axis(logp, target[..., None], axis=-1)[..., 0]
    masked = jnp.isneginf(logp) & (target == 0)  # a masked class with weight 0 contributes nothing
    return -(target * jnp.where(masked, 0.0, logp)).sum(axis=-1)


def dice_jax(probs, targets, smooth=0.0, squared=False):
    num = 2 * (probs * targets).sum() + smooth
    den = ((probs ** 2).sum() + (targets ** 2).sum() if squared else probs.sum() + targets.sum()) + smooth
    empty = den == 0
    return jnp.where(empty, 1.0, num / jnp.where(empty, 1.0, den)).astype(probs.dtype)


def giou_jax(a, b):
    dt = jnp.promote_types(a.dtype, b.dtype)
    work = jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt  # pixel areas overflow float16
    a, b = a.astype(work), b.astype(work)
    x1, y1, x2, y2 = jnp.moveaxis(a, -1, 0)
    x1g, y1g, x2g, y2g = jnp.moveaxis(b, -1, 0)
    w = jnp.maximum(jnp.minimum(x2, x2g) - jnp.maximum(x1, x1g), 0)
    h = jnp.maximum(jnp.minimum(y2, y2g) - jnp.maximum(y1, y1g), 0)
    inter = w * h
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    area_c = (jnp.maximum(x2, x2g) - jnp.minimum(x1, x1g)) * (jnp.maximum(y2, y2g) - jnp.minimum(y1, y1g))
    iou = jnp.where(union > 0, inter / jnp.where(union > 0, union, 1.0), 0.0)
    extra = jnp.where(area_c > 0, (area_c - union) / jnp.where(area_c > 0, area_c, 1.0), 0.0)
    return (iou - extra).astype(dt)
