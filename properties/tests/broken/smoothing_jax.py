"""Broken jax smoothing primitives (see __init__.BROKEN for what each gets wrong)."""

import jax
import jax.numpy as jnp


def lse_concrete_k_check(x, k=1.0):
    if float(k) <= 0:  # concretises a tracer: fails under jax.jit
        raise ValueError("k must be > 0")
    xf = jnp.asarray(x)
    m = jax.lax.stop_gradient(jnp.max(xf, -1, keepdims=True))
    m = jnp.where(jnp.isfinite(m), m, 0)
    s = jnp.sum(jnp.exp(k * (xf - m)), -1)
    return (m[..., 0] + jnp.log(s) / k).astype(xf.dtype)


def softmax_no_max_shift(x, k=1.0):
    if isinstance(k, (int, float)) and k <= 0:
        raise ValueError("k must be > 0")
    e = jnp.exp(k * x)
    return e / jnp.sum(e, -1, keepdims=True)


def soft_argmax_one_based_jax(x, k=1.0):
    if isinstance(k, (int, float)) and k <= 0:
        raise ValueError("k must be > 0")
    p = jax.nn.softmax(k * x.astype(jnp.float64), -1)
    return jnp.sum(p * jnp.arange(1, x.shape[-1] + 1), -1).astype(x.dtype)


def lse_nan_grad_all_masked_jax(x, k=1.0):
    if isinstance(k, (int, float)) and k <= 0:
        raise ValueError("k must be > 0")
    xf = x.astype(jnp.float64)
    return (jax.nn.logsumexp(k * xf, axis=-1) / k).astype(x.dtype)
