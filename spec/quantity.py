"""The records every layer of losscheck iterates over.

A :class:`Quantity` states one catalogue entry once: its arguments, its SymPy
definition, its claims and its conventions. Nothing here imports torch or jax;
numerical claims are written against plain callables on float64 NumPy arrays.

Layouts (``Quantity.layout``) — which axes of the array arguments form one
*sample*, the unit a :class:`Definition` states (its "row" of n entries):

``"last"``   a sample is a row along the last axis; leading axes are batch
             axes (and broadcast); output shape ``shape[:-1]`` (``"row"``) or
             ``shape`` (``"vector"``).  Every quantity before issue 4.
``"first"``  a sample is a column along axis 0; output shape ``shape[1:]``
             (soft_f1: one score per class column).
``"all"``    the whole (broadcast) array is one sample, flattened in C order:
             output a scalar (dice, jaccard, Lovász).

The mechanism is one map to the ``"last"`` layout (``spec.reference.
canonical``): "first" moves axis 0 last, "all" flattens every array argument
to one row of n = size entries.  A definition is always built for rows of n
entries; it never sees the layout.  ``label`` arguments of a layout-"all"
quantity are the sample's whole integer array (e.g. labels (N,) beside probs
(N, C)); they reach ``structure`` / ``build`` as a tuple of ints in C order,
so a builder recovers the per-row width as n // len(labels).  Integer
``target`` labels become one-hot rows in the original shape before
flattening.  Properties draw, and benchmarks build, arrays of the original
layout; only the reference canonicalises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import sympy as sp

REQUIRED = object()

#: Argument kinds understood by the strategies, the reference, the adapters
#: and the benchmarks.
#:
#: Arrays of shape batch + (n,), one SymPy symbol per entry of a row:
#:   ``vector``   floating, any real value (logits, scores, x)
#:   ``simplex``  floating, entries in [0, 1], rows summing to 1 (up to rounding)
#:   ``unit``     floating, entries in [0, 1] (soft multi-label targets)
#:   ``sign``     floating, entries in {-1, +1}
#:   ``binary``   integer, entries in {0, 1}, each row with at least one of each
#:   ``target``   either integer class labels (batch shape, as ``label``) or a
#:                ``simplex`` array; the reference sees labels as one-hot rows
#:   ``box``      floating, rows (x1, y1, x2, y2) with x1 ≤ x2 and y1 ≤ y2 (n = 4,
#:                see FIXED_LENGTH); a second box argument is drawn in relation to
#:                the first (identical, nested, disjoint, touching…)
#: Integer arrays of the batch shape, structural per row (like ``count``):
#:   ``label``    class index in 0..n-1
#: Scalars:
#:   ``positive``    a real > 0 (temperature, sharpness, sigma); a SymPy symbol
#:   ``nonnegative`` a real ≥ 0 (smoothing constants; 0 is the common case); a SymPy symbol
#:   ``count``       an integer in 1..n that fixes the structure of the expression
#:   ``flag``        a Python bool that fixes the structure of the expression
#:                   (dice's ``squared``); the definition receives it as 0/1
ARRAY_KINDS = ("vector", "simplex", "unit", "sign", "binary", "target", "box")
INTEGER_KINDS = ("binary", "label")
SCALAR_KINDS = ("positive", "nonnegative", "count", "flag")
ARG_KINDS = ARRAY_KINDS + ("label",) + SCALAR_KINDS
#: ``Quantity.layout`` values (see the module docstring)
LAYOUTS = ("last", "first", "all")
#: kinds whose rows have a fixed length n (a quantity with such an argument has that n)
FIXED_LENGTH = {"box": 4}
#: kinds differentiated by default (Arg.grad)
GRAD_KINDS = ("vector", "box")


@dataclass(frozen=True)
class Arg:
    """One argument of the catalogue signature.  ``grad``: whether gradients
    with respect to it are part of the contract (default: ``GRAD_KINDS`` args only)."""

    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""
    grad: bool | None = None

    def __post_init__(self):
        if self.kind not in ARG_KINDS:
            raise ValueError(f"Arg.kind must be one of {ARG_KINDS}, got {self.kind!r}")
        if self.grad is None:
            object.__setattr__(self, "grad", self.kind in GRAD_KINDS)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def structural(self) -> bool:
        """Fixes the expression per row instead of entering it as a symbol."""
        return self.kind in ("label", "count", "flag")

    @property
    def static(self) -> bool:
        """A Python value that fixes the program (``jax.jit`` static argument)."""
        return self.kind in ("count", "flag")


def structural_value(v):
    """A structural argument as the definition sees it: an int (count, flag, a
    row's label), or a tuple of ints (the labels of a layout-"all" sample)."""
    if isinstance(v, tuple) or (hasattr(v, "ndim") and v.ndim > 0):
        return tuple(int(x) for x in (v if isinstance(v, tuple) else v.ravel()))
    return int(v)


@dataclass(frozen=True)
class Definition:
    """The SymPy statement of one sample (one row along the last axis).

    ``symbols`` maps every non-structural argument name to its symbol (a
    scalar) or tuple of symbols (a vector arg, one per entry).  ``outputs`` is
    the list of output expressions: one for a per-row quantity, n for a
    vector-valued one.  ``steps`` are intermediate definitions ``(symbol,
    expr)`` in order, which later steps and the outputs may use: a recursion
    (soft_topk) stays a chain of small expressions instead of one
    exponentially large tree; the reference differentiates each step with
    ``sympy.diff`` and chains the derivatives.  ``stop_gradient`` maps
    auxiliary symbols that appear in ``outputs`` to the expression they stand
    for: values use them, gradients hold them constant (CIoU's alpha is the
    model case).
    """

    symbols: Mapping[str, Any]
    outputs: Sequence[sp.Expr]
    stop_gradient: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)
    steps: Sequence[tuple] = ()


@dataclass(frozen=True)
class ClaimResult:
    """Outcome of a symbolic claim.

    status: ``proved`` (in general), ``proved on instances`` (on the concrete
    symbolic instances named in ``detail``) or ``refuted`` (``counterexample``
    says where).
    """

    status: str
    detail: str
    counterexample: str | None = None


@dataclass(frozen=True)
class SymbolicClaim:
    name: str
    statement: str
    check: Callable[[], ClaimResult]
    source: str = ""


@dataclass(frozen=True)
class Comparison:
    """``got`` must lie within ``tol`` (absolute, elementwise) of ``expected``."""

    got: Any
    expected: Any
    tol: Any
    what: str = ""


@dataclass(frozen=True)
class NumericalClaim:
    """A claim checked on every implementation under Hypothesis.

    ``check(impl=..., **args)`` receives the implementation as the keyword
    ``impl`` (called with keyword arguments that override the drawn ones,
    float64 NumPy arrays / Python scalars, returning float64 NumPy arrays;
    ``impl.grad(wrt, **overrides)`` is the gradient of sum(output) w.r.t.
    ``wrt``) and the drawn arguments by name; it returns Comparisons,
    each with its tolerance and the reason for it in ``tolerance``.
    ``extra`` names additional draws (see properties.strategies.EXTRA_KINDS)
    and ``precondition(**args)`` filters inputs outside the claim's scope.
    """

    name: str
    statement: str
    check: Callable[..., Sequence[Comparison]]
    tolerance: str
    extra: Mapping[str, str] = field(default_factory=dict)
    precondition: Callable[..., bool] | None = None
    source: str = ""


#: Masked (-inf) entries reach a definition as this finite stand-in, far below
#: every float (the reference evaluates the limit there: e^{x} underflows to
#: nothing at any precision while x·e^{x} stays 0 instead of NaN).
MASKED_STANDIN = "-1e400"


def is_masked(x):
    """SymPy condition telling a masked entry (the stand-in) from any finite
    float, for a Piecewise: a weight-0 term at a masked entry is 0, with a
    zero gradient."""
    return x < -sp.Integer(2) ** 1024


@dataclass(frozen=True)
class Masking:
    """How a quantity treats masked entries of ``arg``.

    A masked entry holds ``value`` (-inf for logits and scores, 0 for
    probabilities): the definition must give it its limit (SymPy/mpmath
    evaluate exp(-inf) = 0; 0·log 0 is written as a Piecewise).  ``weights``
    names the argument whose weight is exactly 0 at masked entries (a
    probability target, multi-label targets, class labels never pointing
    there).  A row whose entries are all masked has the value ``empty`` in
    every output and a zero gradient; ``empty=None`` means such rows are
    outside the domain and never drawn.
    """

    arg: str
    empty: float | None
    value: float = float("-inf")
    weights: str | None = None


def _resolve(v, args):
    return v(**args) if callable(v) else v


@dataclass(frozen=True)
class Image:
    """The exact range of a quantity: at every input, ``lo ≤ f ≤ hi`` (each a number, or a
    callable of the arguments — float64 NumPy arrays as drawn, scalars — giving an array
    broadcastable to the output), and for a vector output ``Σ_i f_i = row_sum`` per sample.

    A result outside it is one no input within the dtype's rounding of the given one produces (a
    probability above 1, a negative loss, a softmax summing to 1.01): the mixed forward–backward
    criterion, which holds however ill-conditioned the input (properties.checks
    applies it after the comparison with the reference, whose tolerance grows with the
    condition number)."""

    reason: str
    lo: float | Callable = float("-inf")
    hi: float | Callable = float("inf")
    row_sum: float | Callable | None = None
    #: per sample, the size of the exponents the entries are formed with (as Shift.exponent), for
    #: the row sum's allowance: exp(k(x − lse)) carries the rounding of lse into every entry
    exponent: Callable | None = None

    def bounds(self, args: Mapping[str, Any]):
        return _resolve(self.lo, args), _resolve(self.hi, args)

    def total(self, args: Mapping[str, Any]):
        return None if self.row_sum is None else _resolve(self.row_sum, args)


@dataclass(frozen=True)
class Shift:
    """An exact invariance under translation: ``f(x + c·d) = f(x) + rate·c`` for every real c,
    hence at every input ``Σ_i d_i ∂f/∂x_i = rate`` per sample (for a vector output, each entry:
    the vector-Jacobian product then sums to rate·Σ w).  ``direction`` maps every argument moved
    to its per-entry coefficients (None: 1 for every entry).  The identity holds at every input
    near the given one, so a gradient that breaks it beyond the rounding of its own entries is one
    no nearby input has (a logsumexp gradient that cannot be a softmax), however ill-conditioned
    the point.

    ``exponent(**args)``: per sample, the size of the exponents the arguments enter (k·max|x|
    for a logsumexp).  A backward that reuses the forward's stored output, as exp(k(x − lse)),
    carries that output's rounding, eps·|k·lse|, into every entry as a relative error: the
    identity is then held to that too (torch.logsumexp's float32 gradient at |x| = 1e4 sums to
    1 − 6e-4)."""

    statement: str
    direction: Mapping[str, Any]
    rate: float = 0.0
    exponent: Callable | None = None


@dataclass(frozen=True, eq=False)  # identity hash: records are singletons, cached on
class Quantity:
    name: str
    family: str
    summary: str
    formula: str
    args: tuple[Arg, ...]
    output: str  # "row": one value per sample (shape x.shape[:-1]); "vector": one per entry of a sample
    build: Callable[..., Definition]
    claims: tuple = ()
    structure: Callable[..., dict] | None = None
    masking: Masking | None = None
    differentiable: Callable[..., bool] | None = None
    conventions: tuple[str, ...] = ()
    reference: str = ""
    invalid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    #: passes(**args) -> number of sequential passes of a recursive definition
    #: (soft_topk: topk); the error bound allows C(n) roundings per pass.
    passes: Callable[..., int] | None = None
    #: largest n and number of rows the properties draw (the reference's cost grows with both)
    max_n: int = 6
    max_rows: int = 9
    #: the reference adds the decimal span of a row's inputs to its working
    #: digits (cancellation such as x − min(x)); False for definitions whose
    #: only cancelling operations are single correctly rounded differences
    #: (EXACT's (μ_y − μ_j)/σ), so that costly steps (integrals) run at DPS.
    span_digits: bool = True
    #: fraction of the profile's example budget its reference-based properties
    #: use (claims always get the full budget): the reference of an integral
    #: costs ~1000× a closed form (EXACT)
    budget: float = 1.0
    #: the value depends on the inputs only through exact comparisons (auc):
    #: inputs reach the implementation exactly, so the tolerance is the
    #: output's own rounding, with no sensitivity to perturbed inputs
    discrete: bool = False
    #: which axes form one sample: "last" (rows along the last axis), "first"
    #: (columns along axis 0) or "all" (the whole array); see the module docstring
    layout: str = "last"
    #: layout "all": the largest number of elements the properties draw for one sample
    max_size: int = 12
    #: the fewest rows (product of the batch shape) the properties draw: a layout-"all" sample whose
    #: labels index its rows (lovasz_softmax) needs several rows before the order of its errors matters
    min_rows: int = 1
    #: the exact range of the outputs (a mixed forward–backward criterion, see Image)
    image: Image | None = None
    #: exact translation invariances, Σ_i d_i ∂f/∂x_i = rate at every input (see Shift);
    #: layout "last" only
    shifts: tuple = ()

    def __post_init__(self):
        if self.output not in ("row", "vector"):
            raise ValueError(f"Quantity.output must be 'row' or 'vector', got {self.output!r}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"Quantity.layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.layout == "first" and any(a.kind in ("label", "target") for a in self.args):
            raise ValueError("layout 'first' does not support label or target arguments")
        if self.shifts and self.layout != "last":
            raise ValueError("Quantity.shifts holds per row: layout 'last' only")
        if self.image is not None and self.image.row_sum is not None and self.output != "vector":
            raise ValueError("Image.row_sum is for vector outputs")

    @property
    def vector_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.kind == "vector")

    @property
    def array_args(self) -> tuple[Arg, ...]:
        """Arguments with one symbol per entry of a row (shape batch + (n,))."""
        return tuple(a for a in self.args if a.kind in ARRAY_KINDS)

    @property
    def fixed_length(self) -> int | None:
        """n fixed by an argument kind (FIXED_LENGTH), or None when rows may have any length."""
        fixed = {FIXED_LENGTH[a.kind] for a in self.args if a.kind in FIXED_LENGTH}
        if len(fixed) > 1:
            raise ValueError(f"{self.name}: arguments fix different row lengths {sorted(fixed)}")
        return fixed.pop() if fixed else None

    @property
    def grad_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.grad)

    @property
    def signature(self) -> str:
        parts = [a.name if a.required else f"{a.name}={a.default!r}" for a in self.args]
        return f"{self.name}({', '.join(parts)})"

    def structure_of(self, args: Mapping[str, Any]) -> dict:
        """The discrete choices (counts, argmins, sort orders) that fix the
        expression for a concrete input row."""
        if self.structure is not None:
            return dict(self.structure(**args))
        return {a.name: structural_value(args[a.name]) for a in self.args if a.structural}

    def passes_of(self, args: Mapping[str, Any]) -> int:
        return int(self.passes(**args)) if self.passes is not None else 1

    @property
    def symbolic_claims(self) -> tuple[SymbolicClaim, ...]:
        return tuple(c for c in self.claims if isinstance(c, SymbolicClaim))

    @property
    def numerical_claims(self) -> tuple[NumericalClaim, ...]:
        return tuple(c for c in self.claims if isinstance(c, NumericalClaim))


def exponent_size(x, factor=1.0):
    """Per sample (last axis): max |factor·x_i| over the finite entries, the size of the exponents a
    row enters (for :attr:`Shift.exponent`); 0 for a row with none."""
    a = np.abs(np.asarray(x, dtype=np.float64) * factor)
    return np.where(np.isfinite(a), a, 0.0).max(axis=-1, initial=0.0)
