"""Hypothesis strategies, one per argument kind and input regime.

Every strategy draws float64 NumPy values that are *exact* in the target
dtype (drawn, then rounded to it), so the reference sees exactly what the
implementation sees.  Arrays stay small (correctness, not speed): at most two
batch axes of size ≤ 3 and n ≤ ``MAX_N`` entries.

Regimes:
- ``moderate``: |x| ≤ 64, k in [1/8, 8] — values and gradients.
- ``extreme``: |x| anywhere up to the dtype's largest finite value, k in
  [1e-6, 1e6] — stability (overflow, underflow, cancellation).
- ``masked``: moderate values with -inf entries, whole rows included.
- ``claim``: float64 values on a dyadic grid (multiples of 2^-10, |x| ≤ 2^10)
  with distinct entries per row, so shifts by grid values are exact.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .dtypes import max_finite, round_to

MAX_N = 6
REGIMES = ("moderate", "extreme", "masked", "claim")

#: extra draws a numerical claim may ask for (NumericalClaim.extra)
EXTRA_KINDS = {
    "shift": st.integers(-2 ** 20, 2 ** 20).map(lambda m: m / 1024.0),
}


def _elements(regime, dtype):
    if regime == "extreme":
        m = max_finite(dtype)
        return st.floats(-m, m, allow_nan=False, allow_infinity=False, width=64)
    if regime == "claim":
        return st.integers(-2 ** 20, 2 ** 20).map(lambda v: v / 1024.0)
    return st.floats(-64, 64, allow_nan=False, allow_infinity=False)


@st.composite
def vectors(draw, regime="moderate", dtype="float64", max_n=MAX_N, n=None, batch=None, maskable=False):
    """A float64 array of shape batch + (n,), exact in ``dtype``."""
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2))) if batch is None else batch
    n = draw(st.integers(1, max_n)) if n is None else n
    size = int(np.prod(batch, dtype=int)) * n
    unique = regime == "claim"
    rows = []
    for _ in range(size // n):
        rows.append(draw(st.lists(_elements(regime, dtype), min_size=n, max_size=n, unique=unique)))
    x = round_to(np.array(rows, dtype=np.float64).reshape(batch + (n,)), dtype)
    if regime == "masked" and maskable:
        mask = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool).reshape(x.shape)
        if x.ndim > 1 and draw(st.booleans()):
            mask.reshape(-1, n)[draw(st.integers(0, size // n - 1))] = True  # one all-masked row
        mask.reshape(-1)[draw(st.integers(0, size - 1))] = True  # at least one masked entry
        x = np.where(mask, -np.inf, x)
    return x


def positives(regime="moderate", dtype="float64"):
    """A positive scalar (Python float), exact in ``dtype``."""
    if regime == "extreme":
        top = min(6.0, math.log10(max_finite(dtype)) - 0.5)  # 1e6, or below float16's 65504
        s = st.floats(-6, top).map(lambda e: 10.0 ** e)
    elif regime == "claim":
        s = st.sampled_from([0.125, 0.5, 1.0, 2.0, 8.0])
    else:
        s = st.floats(0.125, 8.0)
    return s.map(lambda v: float(round_to(v, dtype)))


def cotangents(shape, dtype):
    n = int(np.prod(shape, dtype=int))
    return st.lists(st.floats(-2, 2), min_size=n, max_size=n).map(
        lambda v: round_to(np.array(v, dtype=np.float64).reshape(shape), dtype))


@st.composite
def arguments(draw, quantity, regime="moderate", dtype="float64"):
    """Keyword arguments for ``quantity`` (NumPy float64 arrays / Python scalars)."""
    args = {}
    maskable = quantity.masking is not None
    max_n = 5 if any(a.kind == "count" for a in quantity.args) else MAX_N  # recursion depth bounds the reference's size
    first = None
    for a in quantity.args:
        if a.kind == "vector":
            if first is None:
                first = draw(vectors(regime, dtype, max_n=max_n, maskable=maskable))
                args[a.name] = first
            else:
                args[a.name] = draw(vectors(regime, dtype, n=first.shape[-1], batch=first.shape[:-1]))
    n = first.shape[-1]
    for a in quantity.args:
        if a.kind == "positive":
            args[a.name] = draw(positives(regime, dtype))
        elif a.kind == "count":
            args[a.name] = draw(st.integers(1, n))
    return {a.name: args[a.name] for a in quantity.args}
