"""Broken jax overlap measures (see __init__.BROKEN for what each gets wrong)."""

import jax.numpy as jnp


def _f(probs, targets):
    ct = jnp.float32 if probs.dtype in (jnp.float16, jnp.bfloat16) else probs.dtype
    return probs.astype(ct), targets.astype(ct)


def dice_where_nan_grad(probs, targets, smooth=0.0, squared=False):
    """The jnp.where trap: the value is guarded but the unselected num/den branch is 0/0 at two
    empty sets, and its gradient (∞·0) poisons the backward pass with NaN."""
    p, t = _f(probs, targets)
    size = jnp.sum(p * p) + jnp.sum(t * t) if squared else jnp.sum(p) + jnp.sum(t)
    num, den = 2 * jnp.sum(p * t) + smooth, size + smooth
    return jnp.where(den == 0, 1.0, num / den).astype(probs.dtype)


def soft_f1_last_axis_jax(probs, targets, eps=0.0):
    p, t = _f(probs, targets)
    den = jnp.sum(p, -1) + jnp.sum(t, -1) + eps
    return jnp.where(den == 0, 1.0, 2 * jnp.sum(p * t, -1) / jnp.where(den == 0, 1.0, den)).astype(probs.dtype)
