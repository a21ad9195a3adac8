"""impls/_jax_rows.first_argmax: jnp.argmax's index, from two fast reductions (or argmax itself)."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from losscheck.impls._jax_rows import first_argmax  # noqa: E402


def _rows():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 7)).astype(np.float32)
    x[0] = -np.inf  # every entry maximal: the first
    x[1, [2, 5]] = 9.0  # a tie: the first of the two
    x[2, 4] = np.inf
    x[3] = 1.0
    x[4, 6] = x[4].max() + 1  # the last entry
    return x


@pytest.mark.parametrize("jit", [False, True])
def test_the_first_maximal_entry_as_argmax_gives_it(jit):
    x = _rows()
    fn = jax.jit(first_argmax) if jit else first_argmax
    got = np.asarray(fn(jnp.asarray(x)))
    assert got.shape == (12, 1)
    np.testing.assert_array_equal(got[:, 0], np.argmax(x, axis=-1))
    assert list(got[:5, 0]) == [0, 2, 4, 0, 6]


def test_a_row_without_an_entry_equal_to_its_max_takes_argmax():
    x = _rows()
    x[5, 3] = np.nan  # max is NaN, nothing equals it: argmax's answer (the first NaN), for every row
    got = np.asarray(jax.jit(first_argmax)(jnp.asarray(x)))[:, 0]
    np.testing.assert_array_equal(got, np.asarray(jnp.argmax(jnp.asarray(x), axis=-1)))
    assert got[5] == 3 and got[1] == 2


def test_under_vmap():
    x = jnp.asarray(_rows())
    got = jax.vmap(lambda r: first_argmax(r[None])[0, 0])(x)
    np.testing.assert_array_equal(np.asarray(got), np.argmax(np.asarray(x), axis=-1))
