"""The records every layer of losscheck iterates over.

A :class:`Quantity` states one catalogue entry once: its arguments, its SymPy
definition, its claims and its conventions. Nothing here imports torch or jax;
numerical claims are written against plain callables on float64 NumPy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import sympy as sp

REQUIRED = object()

#: Argument kinds understood by the strategies, the reference and the
#: benchmarks.  ``vector``: a floating array whose last axis holds the n
#: entries of one sample (leading axes are batch axes) and which is
#: differentiated.  ``positive``: a real scalar > 0 (temperature, sharpness);
#: a SymPy symbol of the definition.  ``count``: an integer in 1..n that
#: fixes the structure of the expression (it is not differentiated).
ARG_KINDS = ("vector", "positive", "count")


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""

    def __post_init__(self):
        if self.kind not in ARG_KINDS:
            raise ValueError(f"Arg.kind must be one of {ARG_KINDS}, got {self.kind!r}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


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

    ``check(f, **args)`` receives the implementation as ``f`` (called with
    keyword arguments holding float64 NumPy arrays / Python scalars, returning
    float64 NumPy arrays) and the drawn arguments; it returns Comparisons,
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


@dataclass(frozen=True)
class Masking:
    """How a quantity treats masked entries (``-inf`` in its vector arg).

    Masked entries enter the definition as -inf (SymPy/mpmath evaluate
    exp(-inf) = 0).  A row whose entries are all masked has the value
    ``empty`` in every output and a zero gradient.
    """

    arg: str
    empty: float


@dataclass(frozen=True, eq=False)  # identity hash: records are singletons, cached on
class Quantity:
    name: str
    family: str
    summary: str
    formula: str
    args: tuple[Arg, ...]
    output: str  # "row": one value per sample (shape x.shape[:-1]); "vector": shape x.shape
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

    def __post_init__(self):
        if self.output not in ("row", "vector"):
            raise ValueError(f"Quantity.output must be 'row' or 'vector', got {self.output!r}")

    @property
    def vector_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.kind == "vector")

    @property
    def signature(self) -> str:
        parts = [a.name if a.required else f"{a.name}={a.default!r}" for a in self.args]
        return f"{self.name}({', '.join(parts)})"

    def structure_of(self, args: Mapping[str, Any]) -> dict:
        """The discrete choices (counts, argmins, sort orders) that fix the
        expression for a concrete input row."""
        if self.structure is not None:
            return dict(self.structure(**args))
        return {a.name: int(args[a.name]) for a in self.args if a.kind == "count"}

    def passes_of(self, args: Mapping[str, Any]) -> int:
        return int(self.passes(**args)) if self.passes is not None else 1

    @property
    def symbolic_claims(self) -> tuple[SymbolicClaim, ...]:
        return tuple(c for c in self.claims if isinstance(c, SymbolicClaim))

    @property
    def numerical_claims(self) -> tuple[NumericalClaim, ...]:
        return tuple(c for c in self.claims if isinstance(c, NumericalClaim))
