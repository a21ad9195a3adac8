"""jax's own functions in the catalogue's signatures.  The sharpness k, which jax's functions do not
have, is pinned to 1 (``Adapter.fixed``): scaling x by k here would overflow where jax does not."""

from __future__ import annotations

from . import Adapter

DOCS = "jax {} (https://docs.jax.dev/)"


def logsumexp(x, k=1.0):
    """jax.nn.logsumexp(x, axis=-1); the sharpness k is pinned to 1 (jax has no such parameter)."""
    import jax
    return jax.nn.logsumexp(x, axis=-1)


def softmax(x, k=1.0):
    """jax.nn.softmax(x, axis=-1); k pinned to 1."""
    import jax
    return jax.nn.softmax(x, axis=-1)


def entropy(p):
    import jax
    return jax.scipy.special.entr(p).sum(-1)


ADAPTERS = [
    Adapter("jax.nn.logsumexp", "logsumexp", "jax", logsumexp, ("jax",), DOCS.format("jax.nn.logsumexp"),
            note="jax.nn.logsumexp(x, axis=-1)", fixed={"k": 1.0}),
    Adapter("jax.nn.softmax", "softmax", "jax", softmax, ("jax",), DOCS.format("jax.nn.softmax"),
            note="jax.nn.softmax(x, axis=-1)", fixed={"k": 1.0}),
    Adapter("jax.scipy.special.entr", "entropy", "jax", entropy, ("jax",), DOCS.format("jax.scipy.special.entr"),
            note="jax.scipy.special.entr(p).sum(-1)"),
]
