"""The typical domain: the inputs real training and evaluation code feeds a loss, one table.

A finding's *severity* (see :mod:`properties.severity`) depends on where its counterexample
lies.  On the typical domain a wrong value is a bug; outside it (magnitudes near the dtype's
largest value, subnormals, values below ~1e-30, spans of 1e300) it is a *range* finding: true,
reported, but no reason to fail a maintainer's CI.  The properties still draw the whole domain.

Each row: an argument kind, the bound per dtype, and the reason.  Magnitudes are of the entries
(zero is always typical: empty sets, degenerate boxes and masks are part of the definitions);
``-inf`` entries of a masked argument are typical (the masking convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from .dtypes import DTYPES, max_finite, tiny


@dataclass(frozen=True)
class Bound:
    """Typical magnitudes of one argument kind: ``0`` or ``lo ≤ |v| ≤ hi`` (per dtype)."""

    kinds: tuple[str, ...]
    lo: dict  # dtype -> smallest typical nonzero magnitude
    hi: dict  # dtype -> largest typical magnitude
    reason: str


def _per_dtype(v64, v16=None):
    return {"float64": v64, "float32": v64, "bfloat16": v64, "float16": v64 if v16 is None else v16}


#: smallest typical nonzero magnitude: 1e-30, or float16's smallest normal (6.1e-5; 1e-30 is 0 there)
_LO = _per_dtype(1e-30, tiny("float16"))

TABLE = (
    Bound(("vector",), _LO, _per_dtype(1e4, 2.0 ** 8),
          "logits and scores: trained networks reach hundreds, 1e4 leaves margin and still puts exp's "
          "overflow (88.7 in float32, 709.8 in float64) inside, so a missing max-shift is a bug; float16: "
          "|x| ≤ 256 keeps k·x (k ≤ 100), differences over a temperature (s_i − s_j)/τ (τ ≥ 0.01) and sums "
          "of n entries below its largest value 65504, so a native float16 k·x that overflows is a range "
          "finding (with |x| ≤ 1024 a textbook torch.logsumexp(k·x) overflowed at k = 100)"),
    Bound(("simplex", "unit", "target"), _LO, _per_dtype(1.0),
          "probabilities and soft labels: entries in [0, 1]; below 1e-30 a probability is underflow, not data"),
    Bound(("box",), _per_dtype(1e-6, tiny("float16")), _per_dtype(2.0 ** 13),
          "boxes at pixel scale up to 8K images (8192 px) and normalised boxes in [0, 1] down to 1e-6 "
          "(float16: its smallest normal); areas of pixel-scale boxes overflow float16, so a half-precision "
          "box loss must upcast"),
    Bound(("positive",), _per_dtype(1e-2), _per_dtype(1e2),
          "scalars such as k, tau, margin: temperatures and sharpness factors used in practice lie in "
          "[0.01, 100]; beyond, k·x leaves the range of the logits"),
    Bound(("nonnegative",), _per_dtype(1e-6), _per_dtype(1e2),
          "smoothing constants and margins: 0 or in [1e-6, 100] (the common smooth = 1, eps = 1e-6)"),
    Bound(("cotangent",), _LO, _per_dtype(1e4),
          "upstream gradients: of the size of a loss's weights; below 1e-30 reverse mode underflows"),
)

#: kinds always typical: labels, signs, binary targets, counts and flags take their values from a finite set
ALWAYS = ("sign", "binary", "label", "count", "flag")

#: a failed comparison where the reference's scale |ref| + S and the result both lie below this is a
#: *range* finding (a loss of 1e-50 answered by 0): the output analogue of the inputs' lower bound
OUTPUT_FLOOR = _LO

_BY_KIND = {k: b for b in TABLE for k in b.kinds}


def bound_for(kind: str) -> Bound | None:
    return _BY_KIND.get(kind)


def outside(kind: str, value, dtype: str) -> str:
    """Why ``value`` (array or scalar) of argument kind ``kind`` lies outside the typical domain
    in ``dtype``, or "" where it lies inside."""
    if kind in ALWAYS:
        return ""
    b = _BY_KIND.get(kind)
    if b is None or np.asarray(value).dtype.kind in "iub":  # integer labels (a "target" given as classes)
        return ""
    v = np.abs(np.asarray(value, dtype=np.float64))
    v = v[np.isfinite(v) & (v != 0)] if v.size else v  # 0 and masked (-inf) entries are typical
    if not v.size:
        return ""
    lo, hi = b.lo[dtype], b.hi[dtype]
    big, small = float(v.max()), float(v.min())
    if big > hi:
        return f"|{kind}| = {big:.3g} > {hi:.3g}"
    if small < lo:
        return f"|{kind}| = {small:.3g} < {lo:.3g}"
    return ""


def tier(quantity, args, dtype: str, cotangent=None) -> str:
    """"" where every argument (and the cotangent) lies in the typical domain, else the reason
    of the first that does not (e.g. "|vector| = 3e+38 > 1e+04 (x)")."""
    for a in quantity.args:
        if a.name not in args:
            continue
        why = outside(a.kind, args[a.name], dtype)
        if why:
            return f"{why} ({a.name})"
    if cotangent is not None:
        why = outside("cotangent", cotangent, dtype)
        if why:
            return f"{why} (cotangent)"
    return ""


def tiny_output(scale: float, dtype: str) -> bool:
    """Whether a result of scale ``scale`` lies below the typical domain: max(|ref| + S, |got|) of a
    failed comparison (see properties.dtypes.compare), so a tiny result answered by a tiny one."""
    return math.isfinite(scale) and scale < OUTPUT_FLOOR[dtype]


def degenerate_box(quantity, args, index) -> bool:
    """Whether the sample at ``index`` (of the output or of a gradient: its leading batch indices)
    holds a box of zero width or height.  The catalogue leaves such boxes outside the domain and
    asks only for finite values there (§5): a finite result other than the spec's is a range
    finding, a NaN or an inf stays a bug."""
    boxes = [np.asarray(args[a.name], dtype=np.float64) for a in quantity.args if a.kind == "box" and a.name in args]
    if not boxes:
        return False
    both = np.broadcast_arrays(*boxes)
    at = tuple(index or ())[: both[0].ndim - 1]
    return any(bool(np.any((b[at][..., 2] == b[at][..., 0]) | (b[at][..., 3] == b[at][..., 1]))) for b in both)


def huge_output(value, dtype: str) -> bool:
    """Whether the exact result lies beyond ``dtype``'s largest finite value: no answer in the dtype
    is right there (an inf or a NaN is reported, as range, not counted as a bug)."""
    return bool(mpmath.isfinite(value)) and abs(value) > max_finite(dtype)


def rows() -> list[dict]:
    """The table as rows for the README and the report: kinds, bounds per dtype, reason."""
    out = []
    for b in TABLE:
        out.append({"kinds": ", ".join(b.kinds), "reason": b.reason,
                    "bounds": {dt: (b.lo[dt], b.hi[dt]) for dt in DTYPES}})
    return out
