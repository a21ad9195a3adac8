"""The mixed forward–backward criterion: a result no input near the given one produces.

The comparison with the reference (:func:`properties.dtypes.compare`) allows C(n)·eps·(|ref| + S):
at an ill-conditioned input the sensitivity S is huge, and so is the tolerance.  That excuses the
digits rounding cannot keep there, but not a result that no input within the dtype's rounding of
the given one has: a probability above 1, a negative loss, a softmax summing to 1.01, a
logsumexp gradient whose entries cannot be a softmax.  Every input near x obeys the quantity's
exact range and exact invariances, so a result is held to them up to the rounding of *its own
entries*, whatever S is.  The spec states them once (:class:`spec.quantity.Image`,
:class:`spec.quantity.Shift`); this module measures how far a result breaks them.

Allowances (each with its reason):

- a bound b: C(n)·eps_c·(|b| + 1): the result's own roundings at the scale of the bound, or of
  the unit-sized terms it is formed from (a loss near 0 is formed from terms of size 1);
- a sum over a sample's entries (Σ softmax = 1, Σ_i ∂f/∂x_i = rate):
  eps_c·(C(n)·(Σ|terms| + |target|) + 4·E·Σ|terms|), where |terms| is an entry's size or, for a
  gradient, that of the chain-rule terms it is formed from (spec.Reference.vjp_terms: a softmax
  gradient p·(w − Σ w p) cancels), and E the size of the exponents
  (:attr:`spec.quantity.Shift.exponent`): a backward that reuses the forward's stored output, as
  exp(k(x − lse)), carries that output's rounding, at most about eps·E, into every entry as a
  relative error (torch.logsumexp's float32 gradient at |x| = 1e4 sums to 1 − 6e-4; allowed
  2.4e-3 at n = 2);
- half precision computed in float32 adds the final rounding of each entry, eps of the dtype.

Beyond the allowance a violation is a finding; beyond the practical tolerance as well (half of
the compute precision's digits, :func:`properties.dtypes.practical_bound`), on the typical
domain it is a *bug*, within it *accuracy*; outside the typical domain *range*
(:mod:`properties.severity`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .dtypes import compute_bits, compute_dtype, eps, error_bound, flush_allowance, practical_bound, roundings


@dataclass(frozen=True)
class Violation:
    """Where a result breaks its quantity's image or invariance, and by how much."""
    #: "image" (a value outside the range), "image sum" (a vector value's entries) or "invariance"
    #: (a gradient); not "value…"/"gradient…", so that no known-deviations row written for a
    #: comparison explains one
    check: str
    #: the output (or sample) entry
    index: tuple
    #: what came back there (the entry, or the sample's sum) and the bound or identity's value
    got: float
    expected: float
    #: |got − nearest admissible value|, and the allowances it was held to
    excess: float
    allowed: float
    practical: float
    #: the spec's statement of the range or invariance
    statement: str
    #: the arguments an invariance moves (their gradients are summed); () for a value
    moved: tuple = ()

    @property
    def within_practical(self) -> bool:
        return self.excess <= self.practical

    def describe(self) -> str:
        what = {"image": f"value {self.got!r} at index {self.index} beyond {self.expected!r}",
                "image sum": f"entries of the sample at index {self.index} sum to {self.got!r}, not {self.expected!r}",
                "invariance": f"gradient entries of the sample at index {self.index} sum to {self.got!r}, "
                              f"not {self.expected!r}"}[self.check]
        return (f"{self.check}: {what} ({self.statement}): no input within rounding of this one gives that; off by "
                f"{self.excess:.3g} > {self.allowed:.3g}, the rounding of the result's own terms, whatever the "
                f"condition number")


def _quiet(check):
    """Overflow in forming a bound, a sum or an exponent's size (k·x beyond float64) is silent: an
    infinite sum or allowance never reports."""
    @functools.wraps(check)
    def run(*args, **kw):
        with np.errstate(all="ignore"):
            return check(*args, **kw)
    return run


def _grid(v, shape):
    return np.broadcast_to(np.asarray(v, dtype=np.float64), shape)


def _final(dtype, native):
    """The final rounding of each entry to a half dtype computed in float32 (relative)."""
    return eps(dtype) if compute_dtype(dtype, native) != dtype else 0.0


@_quiet
def image_violation(quantity, args, got, dtype: str, n: int, passes: int = 1, native: bool = False,
                    complement: bool = False) -> Violation | None:
    """The worst entry of ``got`` (float64, the output's shape) outside ``quantity.image`` at the
    (canonical) ``args``, or beyond its row sum; None where the result lies within."""
    image = quantity.image
    got = np.asarray(got, dtype=np.float64)
    if image is None or not got.size:
        return None
    lo, hi = (_grid(b, got.shape) for b in image.bounds(args))
    if complement:  # the loss form 1 − q
        lo, hi = 1.0 - hi, 1.0 - lo
    worst = None
    below, above = np.where(np.isfinite(lo), lo - got, 0.0), np.where(np.isfinite(hi), got - hi, 0.0)
    for idx in map(tuple, np.argwhere(np.isfinite(got) & ((below > 0) | (above > 0)))):
        bound = float(lo[idx] if below[idx] > 0 else hi[idx])
        excess = float(max(below[idx], above[idx]))
        allowed = error_bound(bound, 1.0, dtype, n, passes, native)
        if excess > allowed and (worst is None or excess / allowed > worst.excess / worst.allowed):
            worst = Violation("image", tuple(int(i) for i in idx), float(got[idx]), bound, excess,
                              allowed, practical_bound(bound, 1.0, dtype, n, passes, native), image.reason)
    if worst is not None or image.row_sum is None or complement or got.ndim == 0:
        return worst
    total = _grid(image.total(args), got.shape[:-1])
    size = np.abs(got).sum(axis=-1)
    exponent = _grid(image.exponent(**args) if image.exponent is not None else 0.0, got.shape[:-1])
    return _sum_violation("image sum", got.sum(axis=-1), total, size, exponent, image.reason,
                          dtype, n, passes, native)


def _sum_violation(check, got, expected, size, exponent, statement, dtype, n, passes, native, moved=()):
    ec, c = eps(compute_dtype(dtype, native)), roundings(n, passes)
    allowed = ec * (c * (size + np.abs(expected)) + 4.0 * exponent * size) + _final(dtype, native) * size \
        + flush_allowance(dtype, n, passes)
    excess = np.abs(got - expected)
    bad = np.isfinite(got) & np.isfinite(allowed) & (excess > allowed)
    if not bad.any():
        return None
    ratio = np.where(bad, excess / np.where(allowed > 0, allowed, math.inf), -1.0)
    idx = np.unravel_index(int(np.argmax(ratio)), np.shape(ratio))
    practical = max(float(allowed[idx]),
                    2.0 ** (-compute_bits(dtype, native) / 2) * float(size[idx] + abs(expected[idx])))
    return Violation(check, tuple(int(i) for i in idx), float(got[idx]), float(expected[idx]), float(excess[idx]),
                     float(allowed[idx]), practical, statement, tuple(moved))


@_quiet
def shift_violation(quantity, args, cotangent, grads: dict, dtype: str, n: int, passes: int = 1,
                    native: bool = False, complement: bool = False, chain_terms=None) -> Violation | None:
    """The worst sample whose vector-Jacobian products ``grads`` (argument name -> float64 array,
    w.r.t. each differentiated argument, for ``cotangent``) break one of ``quantity.shifts``:
    Σ_args Σ_i d_i (w·∂f/∂x)_i = rate·Σ w per sample.  Where an argument broadcasts (its gradient
    is summed over the batch), the identity summed over the whole batch.

    The entries' rounding is proportional to the chain-rule terms they are formed from, not to
    the entries themselves (softmax's p·(w − Σ w p) cancels to 0 for a constant w):
    ``chain_terms(arg)`` gives Σ_j |w_j|·|J_ji|_abs per entry (spec.Reference.vjp_terms),
    consulted only where the entries' own size does not already cover the residual."""
    w = np.asarray(cotangent, dtype=np.float64)
    batch = w.shape if quantity.output == "row" else w.shape[:-1]
    wsum = w if quantity.output == "row" else w.sum(axis=-1)
    for shift in quantity.shifts:
        if any(a not in grads for a in shift.direction):
            continue  # an argument the target does not differentiate: the identity cannot be formed
        coef = {a: 1.0 if d is None else np.asarray(d, dtype=np.float64) for a, d in shift.direction.items()}
        terms = {a: np.asarray(grads[a], dtype=np.float64) * coef[a] for a in coef}
        per_sample = all(t.shape[:-1] == batch for t in terms.values())
        reduce = (lambda t: t.sum(axis=-1)) if per_sample else (lambda t: np.asarray(t.sum()))
        got = sum(reduce(t) for t in terms.values())
        rate = -shift.rate if complement else shift.rate
        expected = np.asarray(rate * (wsum if per_sample else np.asarray(wsum.sum())), dtype=np.float64)
        exponent = _grid(shift.exponent(**args) if shift.exponent is not None else 0.0, batch)
        if not per_sample:
            exponent = np.asarray(exponent.max() if exponent.size else 0.0)
        m = quantity.masking
        if per_sample and m is not None and m.arg in args and m.empty is not None:
            # an all-masked sample is the constant empty value, with a zero gradient: no identity
            empty = np.all(np.asarray(args[m.arg], dtype=np.float64) == m.value, axis=-1)
            got = np.where(np.broadcast_to(empty, np.shape(got)), expected, got)
        size = sum(reduce(np.abs(t)) for t in terms.values())
        v = _sum_violation("invariance", got, expected, size, exponent, shift.statement, dtype, n, passes,
                           native, shift.direction)
        if v is not None and chain_terms is not None:
            size = sum(reduce(np.maximum(np.abs(t), np.abs(coef[a]) * np.broadcast_to(chain_terms(a), t.shape)))
                       for a, t in terms.items())
            v = _sum_violation("invariance", got, expected, size, exponent, shift.statement, dtype, n,
                               passes, native, shift.direction)
        if v is not None:
            return v
    return None

