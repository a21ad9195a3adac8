"""Hypothesis strategies, one per argument kind and input regime.

Every strategy draws float64 NumPy values that are *exact* in the target
dtype (drawn, then rounded to it), so the reference sees exactly what the
implementation sees.  Arrays stay small (correctness, not speed): one of the
eight (batch shape, n) pairs of ``SHAPES`` (three of them, ``FEW_SHAPES``, in
float16 and bfloat16 and for the ``jit`` property), n ≤ ``MAX_N`` entries.

Regimes:
- ``moderate``: |x| ≤ 64, k in [1/8, 8] — values and gradients; on the typical
  domain (properties.domain): magnitudes below its bottom (1e-30) are drawn as 0.
- ``extreme``: |x| anywhere up to the dtype's largest finite value, k in
  [1e-6, 1e6] — stability (overflow, underflow, cancellation).  Half of its
  draws (and the shrinker's target) are ``large``: the typical domain's large
  magnitudes (properties.domain: |x| ≤ 1e4, k in [0.01, 100], boxes up to
  8192 px), where a failure is a bug, not a range finding.
- ``masked``: moderate values with -inf entries, whole rows included.
- ``claim``: float64 values on a dyadic grid (multiples of 2^-10, |x| ≤ 2^10)
  with distinct entries per row, so shifts by grid values are exact.

Layouts (``Quantity.layout``, see spec.quantity): :func:`arguments` draws
every quantity in the "last" layout (batch + (n,), each kind's constraint per
row along the last axis) and then maps the arrays to the quantity's layout:
"first" moves the last axis to axis 0 (the drawn rows become the reduced
columns); "all" keeps the drawn batch + (n,) shape as one sample, with at most
``Quantity.max_size`` elements (labels (batch,) beside probabilities batch +
(n,), as lovasz_softmax takes them).  ``unit`` arguments share zero samples:
in about one sample in four every ``unit`` argument is 0 throughout (the two
empty sets of dice and jaccard, a class with no positives).

Boxes (kind ``box``, rows (x1, y1, x2, y2)): moderate coordinates |x| ≤ 64 with
widths and heights in [1, 64]; extreme coordinates and lengths anywhere in the
dtype's range, a quarter of the widths/heights exactly 0 (degenerate boxes);
claim boxes on the dyadic grid with positive lengths.  A second box argument
is drawn in relation to the first (see ``BOX_RELATIONS``).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from . import domain
from .dtypes import HALF, max_finite, round_to, tiny

MAX_N = 6
REGIMES = ("moderate", "large", "extreme", "masked", "claim")

#: extra draws a numerical claim may ask for (NumericalClaim.extra)
EXTRA_KINDS = {
    "shift": st.integers(-2 ** 20, 2 ** 20).map(lambda m: m / 1024.0),
    "power_of_two": st.integers(-8, 8).map(lambda e: 2.0 ** e),  # an exact scale factor
    "eta": st.floats(0.01, 0.99),  # a class probability for calibration claims
    "seed": st.integers(0, 2 ** 32 - 1),  # seeds a second random input (convexity along random pairs)
}


def _typical_floats(kind, dtype, lo=None, top=None):
    """Floats of the typical domain of ``kind``: |v| ≤ its top (or ``top``); magnitudes below its
    bottom become 0 (Hypothesis likes to draw the smallest subnormal), or the bottom where ``lo``
    is given (a positive length)."""
    b = domain.bound_for(kind)
    bottom, top = b.lo[dtype], min(b.hi[dtype], top or math.inf)
    if lo is not None:
        return st.floats(0, top, exclude_min=True, allow_nan=False, allow_infinity=False, width=64).map(
            lambda v: max(v, bottom))
    return st.floats(-top, top, allow_nan=False, allow_infinity=False, width=64).map(
        lambda v: 0.0 if abs(v) < bottom else v)


def _elements(regime, dtype):
    if regime == "large":
        return _typical_floats("vector", dtype)
    if regime == "extreme":
        m = max_finite(dtype)
        return st.floats(-m, m, allow_nan=False, allow_infinity=False, width=64)
    if regime == "claim":
        return st.integers(-2 ** 20, 2 ** 20).map(lambda v: v / 1024.0)
    return _typical_floats("vector", dtype, top=64.0)


#: Batch shapes: none, a singleton axis (broadcasting's edge case), one axis and
#: two axes.
BATCH_SHAPES = ((), (1,), (3,), (2, 3))

#: The (batch shape, row length) pairs the properties draw, simplest first (Hypothesis shrinks
#: towards the first; "max" is the quantity's ``max_n``): one entry and a pair, a long row alone,
#: a singleton batch, a batch of one-entry rows, the common 2-D case, and two batch axes with
#: short and long rows.  Every batch shape and the row lengths 1, 2, 3, 4 and the longest occur,
#: but only eight pairs rather than all 24: jax compiles a program per shape and dtype, and a
#: property draws ~10 distinct pairs of 24, a different ~10 for each property, so that every
#: dtype compiled ~20 shapes for each of its programs — compilation, not arithmetic, was most of
#: a jax audit's time (session 14: 155 programs for zlpr, 225 for cross_entropy).
SHAPES = (((), 1), ((), 2), ((), "max"), ((1,), 3), ((3,), 1), ((3,), 4), ((2, 3), 2), ((2, 3), "max"))

#: The pairs of :data:`SHAPES` that float16 and bfloat16 draw, and the ``jit`` property: a short
#: row, the longest row and a batch.  Shape handling (broadcasting, a singleton axis, two batch
#: axes, rows of one entry) is the same code whatever the dtype, and the float32/float64 values and
#: gradients draw all eight; what half precision adds is rounding, and what the ``jit`` property adds
#: is a fresh ``jax.jit`` of the forward pass, which these carry (the longest sums included).  Each
#: shape × dtype is an XLA program of its own: all eight in half precision were ~16 programs per
#: property family of a jax audit (~0.1–1 s each to compile) for no behaviour the wider dtypes do not
#: draw; small shapes keep the reference's cost (per entry, and per entry squared for a Jacobian).
FEW_SHAPES = (((), 2), ((), "max"), ((3,), 4))


#: How a second ``unit`` argument relates to the first (see :func:`arguments`); "independent" first
#: (Hypothesis shrinks towards it) and twice as likely as each of the others
UNIT_RELATIONS = ("independent", "independent", "identical", "hard")


def batch_shapes():
    return st.sampled_from(BATCH_SHAPES)


def shapes_of(quantity, max_n, dtype="float64", menu=None) -> tuple:
    """``menu`` (default :data:`SHAPES`, :data:`FEW_SHAPES` for float16 and bfloat16) as
    ``quantity`` can take it: its fixed row length (boxes: 4), at least 2 entries where a row needs
    both classes, at most ``max_n``, batches of at least its ``min_rows`` rows (duplicates dropped,
    the order kept)."""
    binary = any(a.kind == "binary" for a in quantity.args)
    enough = [b for b in BATCH_SHAPES if int(np.prod(b, dtype=int)) >= quantity.min_rows]
    out = []
    for batch, n in menu or (FEW_SHAPES if dtype in HALF else SHAPES):
        n = max_n if n == "max" else min(n, max_n)
        if quantity.fixed_length is not None:
            n = quantity.fixed_length
        elif binary:
            n = max(n, 2)
        if int(np.prod(batch, dtype=int)) < quantity.min_rows:
            batch = enough[0]
        if quantity.min_rows > 1 and quantity.layout == "all":
            n = min(n, max(1, quantity.max_size // quantity.min_rows))
        out.append((batch, n))
    return tuple(dict.fromkeys(out))


@st.composite
def vectors(draw, regime="moderate", dtype="float64", max_n=MAX_N, n=None, batch=None):
    """A float64 array of shape batch + (n,), exact in ``dtype``."""
    batch = draw(batch_shapes()) if batch is None else batch
    n = draw(st.integers(1, max_n)) if n is None else n
    size = int(np.prod(batch, dtype=int)) * n
    unique = regime == "claim"
    rows = []
    for _ in range(size // n):
        rows.append(draw(st.lists(_elements(regime, dtype), min_size=n, max_size=n, unique=unique)))
    return round_to(np.array(rows, dtype=np.float64).reshape(batch + (n,)), dtype)


@st.composite
def masks(draw, shape, empty_rows):
    """A boolean mask of ``shape`` with at least one masked entry; with
    ``empty_rows`` possibly one all-masked row, without it every row keeps
    one entry unmasked."""
    n = shape[-1]
    size = int(np.prod(shape, dtype=int))
    mask = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool).reshape(-1, n)
    mask[draw(st.integers(0, size // n - 1)), draw(st.integers(0, n - 1))] = True  # at least one masked entry
    if empty_rows and len(mask) > 1 and draw(st.booleans()):
        mask[draw(st.integers(0, len(mask) - 1))] = True  # one all-masked row
    if not empty_rows:
        for r in range(len(mask)):
            if mask[r].all():
                mask[r, draw(st.integers(0, n - 1))] = False
    return mask.reshape(shape)


def _unit_elements(regime, dtype="float64"):
    """Entries in [0, 1] with exact 0s and 1s (hard labels) among them; below the typical domain's
    bottom (properties.domain: 1e-30) only in the extreme regime."""
    if regime == "extreme":
        return st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1))
    lo = domain.bound_for("unit").lo[dtype]
    return st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0, 1).map(lambda v: 0.0 if v < lo else v))


@st.composite
def unit_arrays(draw, shape, dtype, regime="moderate"):
    size = int(np.prod(shape, dtype=int))
    v = draw(st.lists(_unit_elements(regime, dtype), min_size=size, max_size=size))
    return round_to(np.array(v, dtype=np.float64).reshape(shape), dtype)


@st.composite
def simplex_arrays(draw, shape, dtype, zeros=None):
    """Rows of nonnegative weights normalised to sum 1 (then rounded to
    ``dtype``, so sums are 1 up to rounding); ``zeros`` forces entries to 0."""
    size = int(np.prod(shape, dtype=int))
    w = np.array(draw(st.lists(st.floats(1 / 64, 1), min_size=size, max_size=size)), dtype=np.float64).reshape(shape)
    if zeros is not None:
        w = np.where(zeros, 0.0, w)
    total = w.sum(axis=-1, keepdims=True)
    return round_to(np.divide(w, total, out=np.zeros_like(w), where=total > 0), dtype)


@st.composite
def sign_arrays(draw, shape, dtype):
    size = int(np.prod(shape, dtype=int))
    return np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=size, max_size=size)), dtype=np.float64).reshape(shape)


@st.composite
def binary_arrays(draw, shape):
    """0/1 int64 rows with at least one 0 and one 1 each (n >= 2)."""
    n = shape[-1]
    rows = []
    for _ in range(int(np.prod(shape[:-1], dtype=int))):
        row = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
        i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        row[i], row[j] = 1, 0
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(shape)


@st.composite
def labels(draw, batch, n, forbidden=None):
    """int64 class labels of shape ``batch``; never at a ``forbidden`` (masked) entry."""
    out = np.zeros(batch, dtype=np.int64)
    for idx in np.ndindex(*batch):
        allowed = [c for c in range(n) if forbidden is None or not forbidden[idx + (c,)]]
        out[idx] = draw(st.sampled_from(allowed))
    return out


def nonnegatives(regime="moderate", dtype="float64"):
    """A real ≥ 0 (Python float) exact in ``dtype``: 0 (the common smoothing constant) or a positive."""
    return st.one_of(st.just(0.0), positives(regime, dtype))


def positives(regime="moderate", dtype="float64"):
    """A positive scalar (Python float), exact in ``dtype``."""
    if regime == "large":
        b = domain.bound_for("positive")
        s = st.floats(math.log10(b.lo[dtype]), math.log10(b.hi[dtype])).map(lambda e: 10.0 ** e)
    elif regime == "extreme":
        top = min(6.0, math.log10(max_finite(dtype)) - 0.5)  # 1e6, or below float16's 65504
        s = st.floats(-6, top).map(lambda e: 10.0 ** e)
    elif regime == "claim":
        s = st.sampled_from([0.125, 0.5, 1.0, 2.0, 8.0])
    else:
        s = st.floats(0.125, 8.0)
    return s.map(lambda v: float(round_to(v, dtype)))


#: Smallest nonzero cotangent magnitude.  A weight near the underflow threshold
#: makes reverse mode flush w·p to zero (XLA's FTZ) before later factors (k up
#: to 1e6) scale it back up — seen: soft_argmax in jax with w = 1.18e-38 gave 0
#: for −3.9e-36 — an error no bound in ULPs of the result describes.
MIN_COTANGENT = 2.0 ** -20


def cotangents(shape, dtype):
    """Weights in [-2, 2], each 0 or of magnitude ≥ ``MIN_COTANGENT``."""
    n = int(np.prod(shape, dtype=int))

    def make(v):
        w = round_to(np.array(v, dtype=np.float64).reshape(shape), dtype)
        return np.where(np.abs(w) < MIN_COTANGENT, 0.0, w)
    return st.lists(st.floats(-2, 2), min_size=n, max_size=n).map(make)


#: How a second box argument relates to the first, row by row.  "independent"
#: first (Hypothesis shrinks towards it).  An array is drawn either *generic*
#: (relations without exact ties, interior fractions, no degenerate box: the
#: gradient is compared with the reference) or *special* (every relation,
#: shared edges, identical and touching boxes, and — in the extreme regime —
#: zero widths and heights: kinks and degenerate boxes, where values are
#: compared and gradients must be finite).
GENERIC_RELATIONS = ("independent", "inside", "around", "disjoint")
BOX_RELATIONS = GENERIC_RELATIONS + ("identical", "touching")


def _box_scale(regime, dtype):
    """(coordinate, positive length) strategies of a regime, as float64."""
    if regime == "large":  # pixel-scale boxes up to the typical image size
        return _typical_floats("box", dtype), _typical_floats("box", dtype, lo=True)
    if regime == "extreme":
        m = max_finite(dtype)
        return (st.floats(-m, m, allow_nan=False, allow_infinity=False, width=64),
                st.floats(0, m, exclude_min=True, allow_nan=False, allow_infinity=False, width=64))
    if regime == "claim":  # the dyadic grid: coordinates, differences and areas stay exact in float64
        return (st.integers(-2 ** 20, 2 ** 20).map(lambda v: v / 1024.0),
                st.integers(1, 2 ** 20).map(lambda v: v / 1024.0))
    # moderate: lengths ≥ 1 stay > 0 after rounding coordinates ≤ 128 to bfloat16 (spacing ≤ 1)
    return _typical_floats("box", dtype, top=64.0), st.floats(1, 64)


def _clip(v, dtype):
    m = max_finite(dtype)
    return min(max(v, -m), m)


def _interval(lo, w, dtype, positive):
    """[lo, lo + w] rounded to ``dtype``; with ``positive`` widened (downwards at the top of
    the range) until its length survives the rounding."""
    lo = float(round_to(lo, dtype))
    hi = float(round_to(_clip(lo + w, dtype), dtype))
    while positive and hi <= lo:
        w = max(2 * w, abs(lo) * 2.0 ** -5, 4 * tiny(dtype))
        hi = float(round_to(_clip(lo + w, dtype), dtype))
        if hi <= lo:
            lo = float(round_to(_clip(hi - w, dtype), dtype))
    return lo, hi


@st.composite
def _box(draw, regime, dtype, special):
    """One box (x1, y1, x2, y2) exact in ``dtype``; degenerate (zero width and/or
    height) only in special arrays of the extreme regime."""
    coord, length = _box_scale(regime, dtype)
    out = []
    for _ in range(2):
        zero = special and regime in ("extreme", "large") and draw(st.integers(0, 3)) == 0
        out.append(_interval(draw(coord), 0.0 if zero else draw(length), dtype, positive=not special))
    (x1, x2), (y1, y2) = out
    return [x1, y1, x2, y2]


@st.composite
def _related_box(draw, first, relation, regime, dtype, special):
    """A box in ``relation`` to ``first``."""
    coord, length = _box_scale(regime, dtype)
    if relation == "independent":
        return draw(_box(regime, dtype, special))
    if relation == "identical":
        return list(first)
    fractions = st.floats(0, 1) if special else st.floats(1 / 64, 63 / 64)
    out = [0.0] * 4
    axis = draw(st.integers(0, 1))  # the axis on which disjoint / touching boxes are apart
    for k in range(2):
        lo, hi = first[k], first[k + 2]
        if relation == "inside" or (relation in ("disjoint", "touching") and k != axis):
            t = sorted(draw(fractions) for _ in range(2))
            ends = [min(max(lo * (1 - u) + hi * u, lo), hi) for u in t]  # no overflow, stays in [lo, hi]
            if regime == "claim":  # stay on the dyadic grid (a shift must be exact), ends distinct where lo < hi
                ends = [min(max(round(e * 1024) / 1024, lo), hi) for e in ends]
                if ends[0] == ends[1] and lo < hi:
                    ends = [ends[0], ends[0] + 1 / 1024] if ends[0] < hi else [ends[0] - 1 / 1024, ends[0]]
        elif relation == "around":
            ends = [lo - draw(length), hi + draw(length)]
        else:  # apart along this axis, on either side; "touching" shares the edge exactly
            gap = 0.0 if relation == "touching" else draw(length)
            w = draw(length)
            ends = [hi + gap, hi + gap + w] if draw(st.booleans()) else [lo - gap - w, lo - gap]
        ends = sorted(float(round_to(_clip(e, dtype), dtype)) for e in ends)
        out[k], out[k + 2] = _interval(ends[0], ends[1] - ends[0], dtype, positive=not special) if not special \
            else (ends[0], ends[1])
    return out


@st.composite
def box_arrays(draw, batch, regime="moderate", dtype="float64", relative_to=None, special=None):
    """Boxes of shape batch + (4,), exact in ``dtype``.  With ``relative_to`` (the
    first box argument) each row is drawn in a relation to that row: one
    relation for the whole array or one per row.  ``special`` (drawn when
    None): see GENERIC_RELATIONS."""
    special = draw(st.booleans()) if special is None else special
    relations = BOX_RELATIONS if special else GENERIC_RELATIONS
    rows = int(np.prod(batch, dtype=int))
    if relative_to is None:
        out = [draw(_box(regime, dtype, special)) for _ in range(rows)]
    else:
        first = np.asarray(relative_to).reshape(rows, 4)
        shared = draw(st.one_of(st.none(), st.sampled_from(relations)))
        out = [draw(_related_box([float(t) for t in first[i]], shared or draw(st.sampled_from(relations)),
                                 regime, dtype, special)) for i in range(rows)]
    return np.array(out, dtype=np.float64).reshape(batch + (4,))


@st.composite
def arguments(draw, quantity, regime="moderate", dtype="float64", menu=None):
    """Keyword arguments for ``quantity`` (NumPy float64 / int64 arrays, Python scalars), of a
    shape from ``menu`` (see :func:`shapes_of`).

    The first array argument fixes the batch shape and n; the others follow
    it.  In the ``masked`` regime the quantity's ``Masking.arg`` gets masked
    entries and its ``Masking.weights`` argument weight 0 there."""
    args = {}
    if regime == "extreme" and not draw(st.booleans()):
        # half the extreme draws, and the shrinker's target, stay in the typical domain's large
        # magnitudes (properties.domain), where a failure is a bug rather than a range finding
        regime = "large"
    m = quantity.masking if regime == "masked" else None
    if m is not None and quantity.layout != "last":
        raise NotImplementedError("masking is defined for layout 'last' only")
    max_n = quantity.max_n
    if any(a.kind == "count" for a in quantity.args):
        max_n = min(max_n, 5)  # recursion depth bounds the reference's size
    # flags first: Hypothesis explores the first choices of a draw systematically (each new example
    # a prefix not seen yet), the later ones at random, so a flag drawn last was True only beside
    # all-zero arrays in 50 examples of dice (squared=True, where a Dice ignoring it differs)
    flags = {a.name: draw(st.booleans()) for a in quantity.args if a.kind == "flag"}
    # a second unit argument (targets beside probabilities) drawn independently of the first, or
    # as its copy (a perfect prediction: the overlap is 1, the loss 0) or as its hard labels (the
    # prediction rounded): independent draws almost never overlap that much (a Jaccard that counts
    # Σ p·t twice exceeds 1 only where 3·Σ p·t > Σ p + Σ t)
    units = [a.name for a in quantity.args if a.kind == "unit"]
    relation = draw(st.sampled_from(UNIT_RELATIONS)) if len(units) > 1 else "independent"
    batch, n = draw(st.sampled_from(shapes_of(quantity, max_n, dtype, menu)))
    limit = quantity.max_rows if quantity.layout != "all" else quantity.max_size // n
    while int(np.prod(batch, dtype=int)) > limit and int(np.prod(batch[1:], dtype=int)) >= quantity.min_rows:
        batch = batch[1:]
    shape = batch + (n,)
    mask = draw(masks(shape, m.empty is not None)) if m is not None else None
    # zero samples shared by every unit argument: a row ("last"), a column ("first") or all ("all")
    # (drawn only for quantities with unit arguments: the others' derandomised draws stay as they were)
    zero = np.zeros(shape, dtype=bool)
    if any(a.kind == "unit" for a in quantity.args):
        rows = 1 if quantity.layout == "all" else int(np.prod(batch, dtype=int))
        z = np.array(draw(st.lists(st.sampled_from([False, False, False, True]), min_size=rows, max_size=rows)))
        zero = np.broadcast_to(z.reshape(() if quantity.layout == "all" else batch + (1,)), shape)
    special = None  # box arguments: generic or special (see box_arrays), shared by all of them
    unlaid = {}  # the arguments as drawn, before the layout moves an axis
    for a in quantity.args:
        masked_here = m is not None and a.name == m.arg
        if a.kind == "vector":
            v = draw(vectors("moderate" if regime == "masked" else regime, dtype, n=n, batch=batch))
        elif a.kind == "simplex":
            v = draw(simplex_arrays(shape, dtype, zeros=mask if m is not None and a.name in (m.arg, m.weights) else None))
        elif a.kind == "unit":
            first = unlaid.get(units[0])
            if first is None or relation == "independent":
                v = np.where(zero, 0.0, draw(unit_arrays(shape, dtype, regime)))
            else:
                v = first.copy() if relation == "identical" else np.where(first >= 0.5, 1.0, 0.0)
            if m is not None and a.name == m.weights:
                v = np.where(mask, 0.0, v)
        elif a.kind == "sign":
            v = draw(sign_arrays(shape, dtype))
        elif a.kind == "binary":
            v = draw(binary_arrays(shape))
        elif a.kind == "label":
            v = draw(labels(batch, n, mask if m is not None and a.name == m.weights else None))
        elif a.kind == "target":
            zeros = mask if m is not None and a.name == m.weights else None
            v = draw(st.one_of(labels(batch, n, zeros), simplex_arrays(shape, dtype, zeros=zeros)))
        elif a.kind == "box":
            first = next((args[b.name] for b in quantity.args if b.kind == "box" and b.name in args), None)
            if first is None:
                special = draw(st.booleans())
            v = draw(box_arrays(batch, "moderate" if regime == "masked" else regime, dtype, relative_to=first,
                                special=special))
        elif a.kind == "positive":
            drawn = positives("moderate" if regime == "masked" else regime, dtype)
            if isinstance(a.default, float) and regime != "claim":  # the signature's default (k = 1) too: code
                drawn = st.one_of(st.just(float(round_to(a.default, dtype))), drawn)  # special-cased there is common
            v = draw(drawn)
        elif a.kind == "nonnegative":  # its 0 (the default of smooth and eps) is drawn already
            v = draw(nonnegatives("moderate" if regime == "masked" else regime, dtype))
        elif a.kind == "flag":
            v = flags[a.name]
        else:  # count
            v = draw(st.integers(1, n))
        if masked_here and a.kind != "simplex":
            v = np.where(mask, m.value, v)
        unlaid[a.name] = v
        if quantity.layout == "first" and isinstance(v, np.ndarray):
            v = np.moveaxis(v, -1, 0)  # the drawn rows become the reduced axis 0
        args[a.name] = v
    return args
