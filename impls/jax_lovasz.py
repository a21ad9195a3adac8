"""The Lovász losses in JAX (catalogue section 4).

Berman, Rannen Triki and Blaschko, "The Lovász-Softmax loss: a tractable
surrogate for the optimization of the intersection-over-union measure in
neural networks", CVPR 2018 (arXiv:1705.08790). The Jaccard loss of a set M
of mispredicted elements against a ground truth G is the set function
``Delta(M) = |M| / |G u M|``; its Lovász extension at an error vector ``e``
is ``sum_t g_t e_(t)`` with ``e`` sorted in decreasing order and ``g_t`` the
increase of ``Delta`` when the t-th largest error joins the set. It is
convex and piecewise linear, and equals ``Delta`` where ``e`` is 0/1.

Conventions shared by both functions:

* Both reduce over ALL elements of their inputs and return a 0-d array of
  the input's dtype (the reference code's ``per_image=False``).
* float16 and bfloat16 inputs are computed in float32 and the result is cast
  back.
* The sort only chooses the order: ``argsort`` of the errors under
  ``stop_gradient``, then ``take_along_axis`` of the errors, so the
  derivative of the loss with respect to an error is its increment ``g_t``
  (at tied errors, that of one of the adjacent linear pieces: a subgradient).
* Pure and ``jax.jit``-able (shapes are static; nothing depends on values
  except through array operations). Value checks (labels in range,
  probabilities in [0, 1]) are made only on concrete arguments and skipped
  for traced ones.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._jax_checks import compute_dtype, floating, is_concrete

__all__ = ["lovasz_hinge", "lovasz_softmax"]


def _increments(gt_sorted, dtype):
    """The Lovász increments along the last axis of ``gt_sorted`` (bool, the
    ground truth in the order of decreasing errors).

    With I_t = |G minus the first t| and U_t = |G u the first t| counted in
    integers, g_t = 1 / U_t when the t-th element is in G (I drops by 1) and
    (I_{t-1} / U_{t-1}) / U_t when it is not (U grows by 1): the difference
    of consecutive Jaccard losses 1 - I/U written out, a few roundings
    relative to g_t (the reference code's difference of two rounded values
    near 1 loses ~log2(U^2) bits for small g_t). I_0 / U_0 = 0 / 0 (no
    ground truth) is taken as 1, giving g = (1, 0, ..., 0).
    """
    gt = gt_sorted.astype(jnp.int32)
    gts = gt.sum(axis=-1, keepdims=True)
    inter = gts - jnp.cumsum(gt, axis=-1)
    union = gts + jnp.cumsum(1 - gt, axis=-1)
    inter_prev = jnp.concatenate([gts, inter[..., :-1]], axis=-1)
    union_prev = jnp.concatenate([gts, union[..., :-1]], axis=-1)
    ratio_prev = jnp.where(union_prev > 0, inter_prev.astype(dtype) / jnp.maximum(union_prev, 1).astype(dtype), 1)
    return jnp.where(gt_sorted, 1, ratio_prev).astype(dtype) / union.astype(dtype)


def lovasz_hinge(logits, labels):
    """Binary Lovász hinge loss over all elements.

    Catalogue section 4; Berman et al. 2018, eq. (10)::

        e = 1 - logits * (2 labels - 1)                 (hinge errors)
        lovasz_hinge = sum_t g_t relu(e_(t))            (e sorted decreasingly)
        g_t = Delta(first t) - Delta(first t - 1),  Delta(M) = |M| / |G u M|

    with G the elements labelled 1. With no element labelled 1 the loss is
    ``max(0, 1 + max(logits))`` (g = (1, 0, ..., 0): the reference code's
    gts = 0 case). Convex in ``logits``.

    Args:
        logits: floating array of any shape (float16, bfloat16, float32 or
            float64).
        labels: array of the shape of ``logits``, integer, bool or floating,
            values in {0, 1} (checked when concrete).

    Returns:
        0-d array of the dtype of ``logits`` (0 for an empty input),
        differentiable with respect to ``logits``; works under ``jax.jit``.

    Algorithm, O(n log n) for n elements: one stable argsort of the margins
    ``logits * (2 labels - 1)`` (increasing margin = decreasing error; a
    sign flip is exact in every dtype, so ties are exactly the tied errors),
    increments from integer counts (``_increments``; int32, exact below 2^31
    elements), one dot product.

    Raises:
        ValueError: ``logits`` not a floating array; ``labels`` of another
            shape or dtype, or (when concrete) not in {0, 1}.
    """
    logits = floating(logits, "logits")[0]
    dtype = compute_dtype(logits.dtype)
    if not isinstance(labels, (jax.Array, np.ndarray)):
        raise ValueError(f"labels must be a jax or numpy array, got {type(labels).__name__}")
    if not (jnp.issubdtype(labels.dtype, jnp.integer) or jnp.issubdtype(labels.dtype, jnp.floating)
            or labels.dtype == jnp.bool_):
        raise ValueError(f"labels must be integer, bool or floating (0 or 1), got dtype {labels.dtype}")
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(f"labels must have the shape of logits {tuple(logits.shape)}, got {tuple(labels.shape)}")
    if is_concrete(labels) and labels.dtype != jnp.bool_:
        values = np.asarray(labels)
        if not bool(np.all((values == 0) | (values == 1))):
            raise ValueError("labels must be 0 or 1 (or bool)")
    labels = jnp.asarray(labels)
    fg = (labels if labels.dtype == jnp.bool_ else labels == 1).reshape(-1)
    x = logits.reshape(-1).astype(dtype)
    margins = jnp.where(fg, x, -x)
    order = jnp.argsort(jax.lax.stop_gradient(margins), stable=True)  # increasing margin = decreasing error
    errors = 1 - jnp.take(margins, order)
    loss = jnp.dot(jax.nn.relu(errors), _increments(jnp.take(fg, order), dtype))
    return loss.astype(logits.dtype)


def lovasz_softmax(probs, labels):
    """Multi-class Lovász-Softmax loss, averaged over the classes present.

    Catalogue section 4; Berman et al. 2018, eq. (12) with classes='present'::

        e_c = |1[labels = c] - probs[..., c]|            (errors of class c)
        loss_c = sum_t g^c_t e_c,(t)                    (e_c sorted decreasingly)
        lovasz_softmax = mean of loss_c over the classes c occurring in labels

    with g^c the increments of the Jaccard loss against G_c = {labels = c}.
    Absent classes are skipped (the reference code's classes='present').
    Convex in ``probs``.

    Args:
        probs: floating array of shape ``(N, C)`` -- or any ``(..., C)``, the
            leading axes flattened to N -- with entries in [0, 1] (checked
            when concrete; rows summing to 1 are not required).
        labels: integer array of shape ``probs.shape[:-1]``, values in
            0..C-1 (checked when concrete).

    Returns:
        0-d array of the dtype of ``probs`` (0 for N = 0), differentiable with
        respect to ``probs``; works under ``jax.jit``.

    Algorithm, O(C N log N): the errors of every class in a (C, N) array,
    ONE batched stable argsort along N (no loop over classes), increments
    from integer counts per class, a weighted sum masked to the present
    classes. Errors are 1 - p on the class's rows and p elsewhere (p lies in
    [0, 1]); the sort uses them rounded in the compute dtype, so two errors
    within one rounding may come out in either order (same value; the
    gradient of either adjacent piece).

    Raises:
        ValueError: ``probs`` not a floating array, 0-d, or (when concrete)
            outside [0, 1]; ``labels`` not an integer array, of a shape other
            than ``probs.shape[:-1]``, or (when concrete) outside 0..C-1.
    """
    probs = floating(probs, "probs")[0]
    dtype = compute_dtype(probs.dtype)
    if probs.ndim == 0:
        raise ValueError("probs must have at least one dimension (the class axis is the last one)")
    if is_concrete(probs):
        values = np.asarray(probs, dtype=np.float64)
        if not bool(np.all((values >= 0) & (values <= 1))):
            raise ValueError("probs must lie in [0, 1]")
    if not isinstance(labels, (jax.Array, np.ndarray)):
        raise ValueError(f"labels must be a jax or numpy array, got {type(labels).__name__}")
    if not jnp.issubdtype(labels.dtype, jnp.integer):
        raise ValueError(f"labels must be an integer array of class indices, got dtype {labels.dtype}")
    if tuple(labels.shape) != tuple(probs.shape[:-1]):
        raise ValueError(f"labels must have the shape probs.shape[:-1] = {tuple(probs.shape[:-1])}, "
                         f"got {tuple(labels.shape)}")
    classes = probs.shape[-1]
    if is_concrete(labels) and labels.size > 0:
        values = np.asarray(labels)
        if not bool(np.all((values >= 0) & (values < classes))):
            raise ValueError(f"labels must be class indices in 0..{classes - 1}")
    p = probs.reshape(-1, classes).astype(dtype).T  # (C, N)
    fg = jnp.asarray(labels).reshape(1, -1) == jnp.arange(classes)[:, None]
    errors = jnp.where(fg, 1 - p, p)
    order = jnp.argsort(jax.lax.stop_gradient(errors), axis=-1, stable=True, descending=True)
    per_class = jnp.sum(jnp.take_along_axis(errors, order, axis=-1)
                        * _increments(jnp.take_along_axis(fg, order, axis=-1), dtype), axis=-1)
    present = fg.any(axis=-1)
    loss = jnp.sum(jnp.where(present, per_class, 0)) / jnp.maximum(jnp.sum(present), 1).astype(dtype)
    return loss.astype(probs.dtype)
