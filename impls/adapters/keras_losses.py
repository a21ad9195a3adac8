"""Keras 3's losses (jax backend) in the catalogue's signatures (keras 3.15.1, KERAS_BACKEND=jax).

A Keras ``Loss`` computes in its ``dtype``, which defaults to ``floatx()`` = float32: the
adapters pass the input's dtype (``dtype=x.dtype``), as a user who wants float64 must, and
``reduction=None``.  Keras adds ``backend.epsilon()`` = 1e-7 on purpose: to Dice's denominator
(only there), and as a clip of both distributions to [1e-7, 1] in ``kl_divergence`` (and of the
probabilities in ``categorical_crossentropy(from_logits=False)``; the adapter below takes logits,
``from_logits=True``, where no clip applies).  Both are in the known-deviations table.
"""

from __future__ import annotations

from . import Adapter, Convention


def _keras():
    """keras on the jax backend (KERAS_BACKEND must be set before keras is first imported)."""
    import os
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras
    return keras

DOCS = "keras {} (https://keras.io/api/losses/)"


def dice(probs, targets, smooth=0.0, squared=False):
    """keras.losses.Dice()(targets, probs) over every axis (axis=None): 1 − 2Σpt / (Σt + Σp + 1e-7).
    No smooth and no squared form: those are the conventions."""
    keras = _keras()
    return keras.losses.Dice(reduction=None, dtype=probs.dtype)(targets, probs)


def kl_divergence(p, q):
    """keras.losses.KLDivergence()(p, q): Σ p log(p / q) after clipping p and q to [1e-7, 1]."""
    keras = _keras()
    return keras.losses.KLDivergence(reduction=None, dtype=q.dtype)(p, q)


def cross_entropy(logits, target):
    """CategoricalCrossentropy(from_logits=True) against probability targets; integer labels one-hot
    encoded first (keras.ops.one_hot), as its docs ask (SparseCategoricalCrossentropy is the same
    computation).  label_smoothing=ε is CE against (1 − ε)·target + ε/C, which the catalogue takes as
    an explicit probability target: it is left at its default 0 here (see the module's tests)."""
    import jax.numpy as jnp
    keras = _keras()
    if jnp.issubdtype(target.dtype, jnp.integer):
        target = keras.ops.one_hot(target, logits.shape[-1], dtype=logits.dtype)
    loss = keras.losses.CategoricalCrossentropy(from_logits=True, reduction=None, dtype=logits.dtype)
    return loss(target, logits)


_REQ = ("keras", "jax")
ADAPTERS = [
    Adapter("keras.Dice", "dice", "jax", dice, _REQ, DOCS.format("keras.losses.Dice"), complement=True,
            conventions=(Convention("smooth = 0", "Dice has no smoothing constant (it adds 1e-7 to the "
                                    "denominator only)", lambda a: {**a, "smooth": 0.0}),
                         Convention("no squared form", "Dice has only the plain denominator Σp + Σt",
                                    lambda a: {**a, "squared": False})),
            note="keras.losses.Dice(reduction=None, dtype=probs.dtype)(targets, probs) (axis=None: every element; "
                 "+1e-7 in the denominator)"),
    Adapter("keras.KLDivergence", "kl_divergence", "jax", kl_divergence, _REQ, DOCS.format("keras.losses.KLDivergence"),
            note="keras.losses.KLDivergence(reduction=None, dtype=q.dtype)(p, q) (p and q clipped to [1e-7, 1])"),
    Adapter("keras.CategoricalCrossentropy", "cross_entropy", "jax", cross_entropy, _REQ,
            DOCS.format("keras.losses.CategoricalCrossentropy"),
            note="keras.losses.CategoricalCrossentropy(from_logits=True, reduction=None, dtype=logits.dtype)"
                 "(target, logits), integer labels as keras.ops.one_hot(labels, C) (label_smoothing=0)"),
]
