"""jax's own functions in the catalogue's signatures (sharpness k applied to the input)."""

from __future__ import annotations

from . import Adapter

DOCS = "jax {} (https://docs.jax.dev/)"


def logsumexp(x, k=1.0):
    import jax
    return jax.nn.logsumexp(x * k, axis=-1) / k if k != 1.0 else jax.nn.logsumexp(x, axis=-1)


def softmax(x, k=1.0):
    import jax
    return jax.nn.softmax(x * k if k != 1.0 else x, axis=-1)


def entropy(p):
    import jax
    return jax.scipy.special.entr(p).sum(-1)


ADAPTERS = [
    Adapter("jax.nn.logsumexp", "logsumexp", "jax", logsumexp, ("jax",), DOCS.format("jax.nn.logsumexp"),
            note="jax.nn.logsumexp(x·k, axis=-1) / k"),
    Adapter("jax.nn.softmax", "softmax", "jax", softmax, ("jax",), DOCS.format("jax.nn.softmax"),
            note="jax.nn.softmax(x·k, axis=-1)"),
    Adapter("jax.scipy.special.entr", "entropy", "jax", entropy, ("jax",), DOCS.format("jax.scipy.special.entr"),
            note="jax.scipy.special.entr(p).sum(-1)"),
]
