"""optax's losses in the catalogue's signatures."""

from __future__ import annotations

from . import Adapter, Convention

DOCS = "optax.losses.{} (https://optax.readthedocs.io/)"


def cross_entropy(logits, target):
    """softmax_cross_entropy_with_integer_labels for integer labels, softmax_cross_entropy for probabilities."""
    import jax.numpy as jnp
    import optax
    if jnp.issubdtype(target.dtype, jnp.integer):
        return optax.losses.softmax_cross_entropy_with_integer_labels(logits, target)
    return optax.losses.softmax_cross_entropy(logits, target)


def kl_divergence(p, q):
    import jax.numpy as jnp
    import optax
    return optax.losses.kl_divergence(jnp.log(q), p)


def hinge_loss(f, l):
    import optax
    return optax.losses.hinge_loss(f, l)


def logistic_loss(f, l):
    import optax
    return optax.losses.sigmoid_binary_cross_entropy(f, (1 + l) / 2)


def dice(probs, targets, smooth=0.0, squared=False):
    """optax's dice_loss on the whole array as one sample, two classes (1 − p, p) given as
    probabilities (apply_softmax=False, which requires rows summing to 1), background ignored:
    its (I + s)/(I + ½(P − I) + ½(T − I) + s) is the catalogue's Dice with smooth = 2s."""
    import jax.numpy as jnp
    import optax
    p, t = probs.reshape(1, -1), targets.reshape(1, -1)
    two_p, two_t = jnp.stack([1 - p, p], -1), jnp.stack([1 - t, t], -1)
    return optax.losses.dice_loss(two_p, two_t, smooth=smooth / 2, apply_softmax=False,
                                  ignore_background=True).reshape(())


ADAPTERS = [
    Adapter("optax.softmax_cross_entropy", "cross_entropy", "jax", cross_entropy, ("optax", "jax"),
            DOCS.format("softmax_cross_entropy(_with_integer_labels)"),
            note="softmax_cross_entropy_with_integer_labels(logits, labels), or softmax_cross_entropy(logits, probs)"),
    Adapter("optax.kl_divergence", "kl_divergence", "jax", kl_divergence, ("optax", "jax"), DOCS.format("kl_divergence"),
            note="kl_divergence(log_predictions=log q, targets=p)"),
    Adapter("optax.hinge_loss", "hinge_loss", "jax", hinge_loss, ("optax", "jax"), DOCS.format("hinge_loss"),
            note="hinge_loss(f, l)"),
    Adapter("optax.sigmoid_binary_cross_entropy", "logistic_loss", "jax", logistic_loss, ("optax", "jax"),
            DOCS.format("sigmoid_binary_cross_entropy"), note="sigmoid_binary_cross_entropy(f, (1 + l)/2)"),
    Adapter("optax.dice_loss", "dice", "jax", dice, ("optax", "jax"), DOCS.format("dice_loss"), complement=True,
            conventions=(Convention("no squared form", "dice_loss has only the plain denominator Σp + Σt",
                                    lambda a: {**a, "squared": False}),),
            note="dice_loss(stack([1 − p, p], -1), stack([1 − t, t], -1), smooth=smooth/2, apply_softmax=False, "
                 "ignore_background=True) over the flattened array"),
]
