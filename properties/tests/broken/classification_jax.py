"""Broken jax classification losses (see __init__.BROKEN)."""

import jax
import jax.numpy as jnp


def ce_log_of_softmax_jax(logits, target):
    if not jnp.issubdtype(target.dtype, jnp.floating):
        target = jax.nn.one_hot(target, logits.shape[-1], dtype=logits.dtype)
    return -(target * jnp.log(jax.nn.softmax(logits, -1))).sum(-1)


def kl_swapped_jax(p, q):
    return (q * (jnp.log(q) - jnp.log(p))).sum(-1)


def hinge_nan_swallowed_jax(f, l):
    """max(0, 1 − l·f) written as where(margin > 0, margin, 0): a NaN margin becomes 0."""
    margin = jnp.where(l > 0, 1 - f, 1 + f)
    return jnp.where(margin > 0, margin, 0.0).astype(f.dtype)
