"""Row helpers shared by the ``jax_*`` modules (the leading underscore keeps it out of the registry)."""

from __future__ import annotations

import jax.numpy as jnp


def apart(x):
    """``x`` with its last axis viewed as ``(a, n / a)`` (a = 8, 4 or 2 where that divides n; else
    1), to be reduced over ``axis=(-2, -1)``.

    On XLA:CPU two reductions of one row (a sum and a count, two masked maxima) are fused into one
    variadic reduction, which XLA does not vectorise: two masked row maxima at 4096 x 1000 took
    9.7 ms, against 2.0 ms with one of them over this view (and 1.4 ms for one alone).  A
    reduction over a view of another shape is not fused with them.  Max and min are the same
    whatever the order; a count of 0s and 1s is exact in float32 below 2^24 entries.
    """
    n = x.shape[-1]
    a = next((a for a in (8, 4, 2) if n % a == 0 and n >= 2 * a), 1)
    return x.reshape(x.shape[:-1] + (a, n // a))


def exact_ones(e):
    """``(one, count)``: ``one_i = [e_i = 1]`` in ``e``'s dtype and, per row (last axis), their
    number ``count`` (shape ``e.shape[:-1]``).

    For a softmax-type sum of exponentials ``e_i = exp(x_i - max)`` this removes the maximum's 1
    exactly, without locating the maximum: ``sum_i (e_i - one_i) + (count - 1)`` is the sum of all
    ``e_i`` but one 1 (each entry with ``e_i = 1`` contributes ``e_i - 1 = 0`` termwise, keeping its
    derivative, and 1 through the count).  The count is summed over :func:`apart`'s view, so that
    XLA does not fuse it with the sum (15 ms against 2.4 ms for logsumexp at 4096 x 1000 float32;
    locating the first maximum with a min reduction took 3.3 ms).
    """
    one = (e == 1).astype(e.dtype)
    return one, jnp.sum(apart(one), axis=(-2, -1))
