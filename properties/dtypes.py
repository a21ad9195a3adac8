"""Floating dtypes, ULPs and the error bound every value/gradient property uses.

Errors are measured in ULPs of the output dtype against the 60-digit reference:
``ulps = |got − ref| / spacing(max(|ref|, tiny))`` where spacing(v) is the gap
between v and the next representable number of that dtype (so values below
the smallest normal count as zero: flushing subnormals to zero costs ≤ 1).

The allowed error follows from backward stability: an implementation that
rounds each intermediate in precision eps_c behaves like the exact function
of inputs perturbed by O(eps_c) relative, plus an O(eps_c) relative error on
the output.  To first order that gives

    |got − ref| ≤ C(n) · eps_c · (|ref| + S)  (+ one output rounding for half precision)

with S = Σ_v |∂ref/∂v|·|v| the sensitivity from the reference (S/|ref| is the
relative condition number).  C(n) = 4·(n + 8) allows ~n roundings for a sum
of n terms plus ~8 elementwise operations (max, subtract, multiply, exp, log,
divide, select), each within 4 ULPs (libm and XLA exp/log are within 1-4 ULPs).
eps_c is the dtype's own epsilon, except float16/bfloat16, which the catalogue
lets implementations compute in float32: for a target that does (ours, which
are held to it), eps_c = float32 eps and the bound adds one ULP for the final
rounding to half precision.  The catalogue also allows computing half
precision natively; a target audited with ``native=True`` (third-party code,
by default) gets eps_c = the half dtype's own epsilon.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

DTYPES = ("float16", "bfloat16", "float32", "float64")
HALF = ("float16", "bfloat16")

# (mantissa bits, smallest normal, largest finite)
_INFO = {
    "float16": (10, 2.0 ** -14, 65504.0),
    "bfloat16": (7, 2.0 ** -126, 3.3895313892515355e38),
    "float32": (23, 2.0 ** -126, 3.4028234663852886e38),
    "float64": (52, 2.0 ** -1022, 1.7976931348623157e308),
}


def mantissa_bits(dtype: str) -> int:
    return _INFO[dtype][0]


def compute_dtype(dtype: str, native: bool = False) -> str:
    """The precision ``dtype`` is computed in: float32 for half precision unless ``native``."""
    return "float32" if dtype in HALF and not native else dtype


def compute_bits(dtype: str, native: bool = False) -> int:
    """Significand bits (implicit bit included) of the precision ``dtype`` is computed in:
    53 for float64, 24 for float32 and for the half-precision dtypes computed in float32."""
    return mantissa_bits(compute_dtype(dtype, native)) + 1


def eps(dtype: str) -> float:
    return 2.0 ** -_INFO[dtype][0]


def tiny(dtype: str) -> float:
    return _INFO[dtype][1]


def max_finite(dtype: str) -> float:
    return _INFO[dtype][2]


def round_to(values, dtype: str) -> np.ndarray:
    """Round float64 values to the nearest ``dtype`` value (returned as float64)."""
    v = np.asarray(values, dtype=np.float64)
    if dtype == "float64":
        return v.copy()
    if dtype in ("float16", "float32"):
        with np.errstate(over="ignore"):
            return v.astype(dtype).astype(np.float64)
    import ml_dtypes  # installed with jax; bfloat16 rounding without a framework
    with np.errstate(over="ignore"):
        return v.astype(ml_dtypes.bfloat16).astype(np.float64)


def spacing(v: float, dtype: str) -> float:
    """ULP of ``dtype`` at |v| (with |v| clamped below at the smallest normal)."""
    a = max(abs(float(v)), tiny(dtype))
    if not math.isfinite(a):
        return math.inf
    _, e = math.frexp(a)  # a = m·2^e, m in [0.5, 1)
    return math.ldexp(1.0, e - 1 - mantissa_bits(dtype))


def roundings(n: int, passes: int = 1) -> float:
    """C(n): see the module docstring; a recursive definition of T passes
    (Quantity.passes) repeats the computation T times and gets T·C(n)."""
    return 4.0 * (n + 8) * passes


def flush_allowance(dtype: str, n: int, passes: int = 1) -> float:
    """Absolute error allowed for flushing subnormals to zero (XLA on the CPU
    does): each of the C(n) roundings may flush an intermediate below the
    smallest normal, losing at most ``tiny`` each (seen: a softmax gradient
    of −1.5e-38 in float32 returned as −0.0 by jax, its product p·w flushed)."""
    return roundings(n, passes) * tiny(dtype)


def error_bound(ref: float, scale: float, dtype: str, n: int, passes: int = 1, native: bool = False) -> float:
    """Allowed |got − ref|: C(n)·eps_c·(|ref| + S) (+ 1 ULP of the final rounding for half
    precision computed in float32) + the flush-to-zero allowance."""
    ec = eps(compute_dtype(dtype, native))
    final = spacing(ref, dtype) if compute_dtype(dtype, native) != dtype else 0.0
    return roundings(n, passes) * ec * (abs(ref) + scale) + final + flush_allowance(dtype, n, passes)


def practical_bound(ref: float, scale: float, dtype: str, n: int, passes: int = 1, native: bool = False,
                    norm: float | None = None) -> float:
    """The practical tolerance: :func:`error_bound`, or half of the compute precision's digits
    lost, 2^(−p/2)·(|ref| + S) with p its significand bits, whichever is larger.  An error within
    the rounding bound is rounding; between the two it is an *accuracy* finding (correct, digits
    lost: a logsumexp near 0 without log1p, softplus's threshold); beyond this, on the typical
    domain, a *bug* (see properties.severity).  float64 keeps 8 of its 16 digits, float32 3.6 of
    7.2; for half precision computed natively the rounding bound is already the larger.
    ``norm``: the scale the digits are counted of, default this entry's own |ref| + S: for a
    gradient or a vector result the largest of its row (:func:`row_scale`), and at least the result's
    unit (properties.checks): 1 for a value (a loss or probability near 0 is known to eps of the
    unit-sized terms it is formed from: log(1 + e^−19) = 4.8e-9 comes out 0 in float32 without
    log1p), max|w| / max(1, |x|) for a gradient (softmax − onehot with p ≈ 1 rounded)."""
    bits = compute_bits(dtype, native)
    size = abs(ref) + scale if norm is None else max(norm, abs(ref) + scale)
    return max(error_bound(ref, scale, dtype, n, passes, native),
               2.0 ** (-bits / 2) * size + flush_allowance(dtype, n, passes))


def rel_step(dtype: str, n: int, passes: int = 1, native: bool = False) -> float:
    """The relative input perturbation the error bound allows: C(n)·eps_c."""
    return roundings(n, passes) * eps(compute_dtype(dtype, native))


def as_float(values) -> np.ndarray:
    """An object array of mpf as float64 (beyond float64's range: ±inf, without a warning)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.vectorize(float, otypes=[np.float64])(values) if np.size(values) else np.zeros(np.shape(values))


def row_scale(ref, scale, axis):
    """The normwise scale of the practical tolerance: max over ``axis`` of |ref| + S (``"all"``: over
    the whole array; None: each entry's own).  A gradient is judged normwise: an entry that is tiny
    beside the others in its row (a saturated class, a dominant entry's quotient-rule cancellation)
    may lose its own digits as long as the row keeps half of its."""
    size = np.abs(as_float(ref)) + np.asarray(scale, dtype=np.float64)
    size = np.where(np.isfinite(size), size, 0.0)
    if axis is None or size.ndim == 0:
        return size
    if axis == "all":
        return np.full(size.shape, size.max() if size.size else 0.0)
    return np.broadcast_to(size.max(axis=axis, keepdims=True), size.shape) if size.size else size


def compare(got, ref, scale, dtype: str, n: int, passes: int = 1, native: bool = False, practical: bool = False,
            norm=None):
    """Compare ``got`` (float64 array) to ``ref`` (object array of mpf) elementwise.

    ``scale`` is the sensitivity S from the reference.  Errors are counted in
    ULPs of |ref| + S, the magnitude the result is made of (plain ULPs of
    |ref| explode where the true value is a tiny remainder of cancelling
    terms, as in a saturated softmax gradient), so the allowed error is
    about C(n) ULPs everywhere and a larger figure means a real loss.

    ``native``: half precision computed natively, not in float32 (see the module docstring).
    ``practical``: against :func:`practical_bound` instead of the rounding bound, its digits share
    taken of ``norm`` (from :func:`row_scale`; default each entry's own |ref| + S).

    Returns (ok, max_ulps, allowed_ulps at the worst entry, worst index or a
    message).  Non-finite references must be matched exactly; NaN never passes.
    """
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=object)
    scale = np.asarray(scale, dtype=np.float64)
    if got.shape != ref.shape:
        return False, math.inf, 0.0, f"shape {got.shape}, expected {ref.shape}"
    ok, worst = True, (-1.0, 0.0, 0.0, None)  # (ulps / allowed, ulps, allowed, index)
    for idx in np.ndindex(*got.shape):
        g, r = float(got[idx]), ref[idx]
        if math.isnan(g) or (not mpmath.isfinite(r) and g != float(r)):
            return False, math.inf, 0.0, idx
        if not mpmath.isfinite(r):
            continue
        if abs(float(r)) > max_finite(dtype) and math.isinf(round_to(float(r), dtype)):
            # the correctly rounded result overflows the dtype: ±inf is the right answer
            if g != round_to(float(r), dtype):
                return False, math.inf, 0.0, idx
            continue
        size = abs(float(r)) + float(scale[idx])
        unit = spacing(size, dtype)
        err = float(abs(mpmath.mpf(g) - r)) if math.isfinite(g) else math.inf
        if practical:
            bound = practical_bound(float(r), float(scale[idx]), dtype, n, passes, native,
                                    None if norm is None else float(norm[idx]))
        else:
            bound = error_bound(float(r), float(scale[idx]), dtype, n, passes, native)
        # errors within the flush-to-zero allowance count as 0 ULPs
        ftz = flush_allowance(dtype, n, passes)
        ulps, allowed = max(err - ftz, 0.0) / unit, (bound - ftz) / unit
        ok = ok and err <= bound
        ratio = ulps / allowed if allowed > 0 else (0.0 if ulps == 0 else math.inf)
        if ratio > worst[0] or worst[3] is None:
            worst = (ratio, ulps, allowed, idx)
    return ok, worst[1], worst[2], worst[3]


def between(got, ref, other, scale, dtype: str, n: int, passes: int = 1, native: bool = False, bound=None):
    """Whether each entry of ``got`` lies between ``ref`` and ``other`` (two object arrays of
    mpf: two admissible evaluations of the same quantity), or within :func:`compare`'s bound
    of either; NaN never passes.  Used only where the two evaluations disagree beyond that
    bound, i.e. where the dtype's precision does not determine the result (see
    ``properties.checks``).  Where one of them overflows the dtype and the other does not,
    the entry is a spike whose size and sign depend on the side of a tie that rounding picks
    (soft_topk's gradient at a near-tie amplified by a span near the dtype's maximum: the
    exact 127.5, the definition with its steps rounded to nearest -inf, ours +inf), and any
    result but NaN is accepted there.

    ``bound`` (float64, ``inf`` beyond the range), for a gradient: the larger running-error
    scale Σ_j |w_j|·|J_ji|_abs of the two evaluations, which bounds both of them.  Any result
    within ±bound (rounded to the dtype) is accepted too: where a rounding turns a near-tie
    exact, the intermediates that the next passes multiply by a huge factor hold what is left
    of a cancellation (soft_topk's 1 - p, 1e-16 or 0 by the order of a sum), and every
    evaluation in the dtype gets a gradient of the size of those terms, in no particular
    direction.

    Returns (ok, the first entry that is outside, or None)."""
    got = np.asarray(got, dtype=np.float64)
    ref, other = np.asarray(ref, dtype=object), np.asarray(other, dtype=object)
    scale = np.asarray(scale, dtype=np.float64)
    if got.shape != ref.shape:
        return False, f"shape {got.shape}, expected {ref.shape}"
    bound = None if bound is None else np.broadcast_to(np.asarray(bound, dtype=np.float64), got.shape)
    for idx in np.ndindex(*got.shape):
        g = float(got[idx])
        if math.isnan(g):
            return False, idx
        if bound is not None and abs(g) <= float(round_to(float(bound[idx]), dtype)):
            continue
        ends = []
        for r in (ref[idx], other[idx]):
            if compare(got[idx], r, scale[idx], dtype, n, passes, native)[0]:
                break
            with np.errstate(over="ignore"):  # an mpf beyond float64 is ±inf
                ends.append(float(round_to(float(r), dtype)))
        else:
            if math.isinf(ends[0]) != math.isinf(ends[1]):
                continue
            if not min(ends) <= g <= max(ends):
                return False, idx
    return True, None
