"""impls/_jax_rows.exact_ones: the count of exact ones per row, for removing a maximum's 1 exactly."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from losscheck.impls._jax_rows import exact_ones  # noqa: E402


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 1000, 1001])
def test_count_and_sum_without_one_one(n):
    rng = np.random.default_rng(n)
    e = rng.random((5, n)).astype(np.float32)
    e[:, 0] = 1.0  # every row has a maximum's 1
    e[1, n // 2] = 1.0  # a tie (n = 1: the same entry)
    e[2, -1] = np.nextafter(np.float32(1), np.float32(0))  # just below 1: not counted
    one, count = jax.jit(exact_ones)(jnp.asarray(e))
    np.testing.assert_array_equal(np.asarray(one), (e == 1).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(count), (e == 1).sum(-1))
    rest = np.asarray(jnp.sum(jnp.asarray(e) - one, axis=-1) + (count - 1), np.float64)
    expected = e.astype(np.float64).sum(-1) - 1  # all but one 1, in exact arithmetic
    np.testing.assert_allclose(rest, expected, rtol=4 * n * np.finfo(np.float32).eps)  # float32 sums of n terms


def test_batched_and_vmapped():
    e = jnp.asarray(np.array([[[1.0, 0.5, 1.0], [0.25, 1.0, 0.0]]], np.float32))
    _, count = exact_ones(e)
    np.testing.assert_array_equal(np.asarray(count), [[2, 1]])
    _, vcount = jax.vmap(exact_ones)(e)
    np.testing.assert_array_equal(np.asarray(vcount), [[2, 1]])
