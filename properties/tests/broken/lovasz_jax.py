"""Broken jax Lovász losses (see __init__.BROKEN for what each gets wrong)."""

import jax
import jax.numpy as jnp


def _increments(gt):
    gt = gt.astype(jnp.float64)
    gts = gt.sum(-1, keepdims=True)
    jaccard = 1 - (gts - jnp.cumsum(gt, -1)) / jnp.maximum(gts + jnp.cumsum(1 - gt, -1), 1)
    return jnp.concatenate([jaccard[..., :1], jaccard[..., 1:] - jaccard[..., :-1]], axis=-1)


def lovasz_softmax_ascending_jax(probs, labels):
    """Sorts the errors in increasing order."""
    c = probs.shape[-1]
    p = jnp.asarray(probs).reshape(-1, c).astype(jnp.float64).T
    fg = jnp.asarray(labels).reshape(1, -1) == jnp.arange(c)[:, None]
    errors = jnp.where(fg, 1 - p, p)
    order = jnp.argsort(jax.lax.stop_gradient(errors), axis=-1, stable=True)
    per_class = jnp.sum(jnp.take_along_axis(errors, order, -1) * _increments(jnp.take_along_axis(fg, order, -1)), -1)
    present = fg.any(-1)
    return (jnp.sum(jnp.where(present, per_class, 0)) / jnp.sum(present)).astype(probs.dtype)


def lovasz_softmax_unchecked_jax(probs, labels):
    """Right values, no validation: probabilities outside [0, 1] give a number."""
    c = probs.shape[-1]
    p = jnp.asarray(probs).reshape(-1, c).astype(jnp.float64).T
    fg = jnp.asarray(labels).reshape(1, -1) == jnp.arange(c)[:, None]
    errors = jnp.where(fg, 1 - p, p)
    order = jnp.argsort(jax.lax.stop_gradient(errors), axis=-1, stable=True, descending=True)
    per_class = jnp.sum(jnp.take_along_axis(errors, order, -1) * _increments(jnp.take_along_axis(fg, order, -1)), -1)
    present = fg.any(-1)
    return (jnp.sum(jnp.where(present, per_class, 0)) / jnp.sum(present)).astype(probs.dtype)
