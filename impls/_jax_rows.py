"""Row helpers shared by the ``jax_*`` modules (the leading underscore keeps it out of the registry)."""

from __future__ import annotations

import jax.numpy as jnp


def exact_ones(e):
    """``(one, count)``: ``one_i = [e_i = 1]`` in ``e``'s dtype and, per row (last axis), their
    number ``count`` (shape ``e.shape[:-1]``).

    For a softmax-type sum of exponentials ``e_i = exp(x_i - max)`` this removes the maximum's 1
    exactly, without locating the maximum: ``sum_i (e_i - one_i) + (count - 1)`` is the sum of all
    ``e_i`` but one 1 (each entry with ``e_i = 1`` contributes ``e_i - 1 = 0`` termwise, keeping its
    derivative, and 1 through the count).  The count is summed over a view of the row as
    ``(a, n / a)``: on XLA:CPU a sum over the row itself would be fused with the other sum into
    one variadic reduction, which XLA does not vectorise (15 ms against 2.4 ms for logsumexp at
    4096 x 1000 float32; locating the first maximum with a min reduction took 3.3 ms).  The
    count is exact: float32 sums of 0s and 1s are exact below 2^24 entries.
    """
    n = e.shape[-1]
    one = (e == 1).astype(e.dtype)
    a = next((a for a in (8, 4, 2) if n % a == 0 and n >= 2 * a), 1)
    return one, jnp.sum(one.reshape(one.shape[:-1] + (a, n // a)), axis=(-2, -1))
