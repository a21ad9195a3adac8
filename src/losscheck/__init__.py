"""losscheck: property-based verification of differentiable surrogates of metrics.

Each quantity (logsumexp, soft F1, Dice, GIoU, ZLPR, ...) is stated once, symbolically
(:mod:`losscheck.spec`); an audit runs Hypothesis properties that compare a callable with a
high-precision reference derived from that statement, in ULPs of the dtype.

    >>> import losscheck
    >>> losscheck.quantities()[:3]
    ('auc', 'box_iou', 'ciou')
    >>> result = losscheck.audit(my_dice_loss, "dice", loss=True)      # doctest: +SKIP
    >>> result.passed, [f.property for f in result.failures]          # doctest: +SKIP
    >>> losscheck.reference("logsumexp", x=[1.0, 2.0, 3.0])            # doctest: +SKIP
    Exact(value=array(3.40760596), grad={'x': array([0.09003057, 0.24472847, 0.66524096])})

In a test suite: ``test_dice = losscheck.check(my_dice_loss, "dice", loss=True)`` gives one
pytest test per property (:mod:`losscheck.pytest_plugin`).  The command line is ``losscheck``
(or ``python -m losscheck``); ``losscheck show QUANTITY`` prints a quantity's catalogue entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

try:
    __version__ = metadata.version("losscheck")
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["audit", "check", "quantities", "reference", "show", "Exact", "__version__"]


def quantities() -> tuple[str, ...]:
    """The names of the catalogue's quantities, sorted (``losscheck show NAME`` describes one)."""
    from losscheck import spec
    return tuple(sorted(spec.QUANTITIES))


def show(quantity: str) -> str:
    """A quantity's catalogue entry as text: formula, canonical signature, conventions, claims and
    their status (symbolic claims proved or refuted here; numerical ones checked on every audit)."""
    from losscheck.reports.catalogue import entry
    return entry(quantity)


def audit(fn, quantity: str, *, framework: str | None = None, device: str = "cpu", loss: bool = False,
          fix: dict | None = None, differentiable: bool = True, convention=(), gate: str = "bug", strict: bool = False,
          max_examples: int = 50, seed: int | None = None, only: str | None = None,
          names=None, progress: bool = False):
    """Audit ``fn`` as ``quantity``: every applicable property, against the high-precision reference.

    ``fn`` takes the catalogue signature (``losscheck show QUANTITY``): the arrays positionally, the
    rest by name, in torch or jax (``framework`` is inferred from its module where not given).
    ``loss=True``: ``fn`` returns 1 − q (a Dice or F1 *loss*); ``fix={"smooth": 1.0}`` pins scalar
    arguments (a parameter ``fn`` lacks is taken as hard-coded); ``differentiable=False`` skips the
    gradient properties.  ``convention``: a named convention it follows on purpose, or several
    (``"pixel+1"``: pixel-index boxes; :mod:`losscheck.impls.adapters.conventions`) — a property it
    explains *deviates* instead of failing.  ``gate`` ("bug", "accuracy" or "range") is the severity that fails the
    audit; every finding is reported at any gate; ``strict`` also counts the contract checks.
    ``max_examples``: Hypothesis's budget per property (default 50, as ``losscheck audit``);
    ``seed``: a random seed (default: derandomised, the same examples on every run).
    ``only``: properties whose name contains it; ``names``: exact names.

    Returns an :class:`~losscheck.properties.results.AuditResult`: ``.passed``, ``.failures`` (each
    with its severity, its error in ULPs and a runnable counterexample), ``.summary()``.
    Raises ValueError naming the argument on bad input (an unknown quantity, framework or gate).
    """
    from losscheck import spec
    from losscheck.properties import engine
    from losscheck.properties.results import AuditResult
    if not isinstance(max_examples, int) or isinstance(max_examples, bool) or max_examples < 1:
        raise ValueError(f"max_examples must be a positive integer, got {max_examples!r}")
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {type(fn).__name__}")
    from losscheck.impls.adapters.conventions import named
    q = spec.get(quantity)  # ValueError listing the known names
    conventions = tuple(named(c, q) for c in ((convention,) if isinstance(convention, str) else convention))
    if framework is not None and framework not in ("torch", "jax"):
        raise ValueError(f"framework must be 'torch' or 'jax', got {framework!r}")
    module, name = getattr(fn, "__module__", None) or "", getattr(fn, "__qualname__", type(fn).__name__)
    label = f"{module or '?'}:{name}"
    importable = module and module != "__main__" and "<" not in name  # the snippets import it by this name
    kwargs = dict(label=label, target_spec=label if importable else "", max_examples=max_examples, seed=seed, only=only, names=names,
                  complement=loss, differentiable=differentiable, fixed=dict(fix or {}), gate=gate, conventions=conventions,
                  derandomize=seed is None)
    if progress:
        from losscheck.reports.progress import AuditProgress
        with AuditProgress() as observer:
            rec = engine.audit(fn, quantity, framework, device, observer=observer, **kwargs)
    else:
        rec = engine.audit(fn, quantity, framework, device, **kwargs)
    return AuditResult.from_record(rec, strict=strict)


def check(fn, quantity: str, **options):
    """A pytest test function with one case per property of ``quantity`` for ``fn``::

        test_my_dice = losscheck.check(my_dice_loss, "dice", loss=True)

    Each failing property is one pytest failure, with its severity, its error in ULPs and the
    counterexample snippet.  ``options`` are :func:`audit`'s; the budget and the seed come from
    ``--losscheck-max-examples`` / ``--losscheck-seed`` (the plugin's options; derandomised)."""
    from losscheck.pytest_plugin import property_tests
    return property_tests(fn, quantity, **options)


@dataclass(frozen=True)
class Exact:
    """The reference at one input, rounded to float64 from 60 significant digits or more."""
    #: the quantity's value, shape as the catalogue's output (one per row, or per entry)
    value: object
    #: ∂ sum(value) / ∂ arg for each differentiable argument (the catalogue's ``grad`` args)
    grad: dict


def reference(quantity: str, **args) -> Exact:
    """The high-precision value and gradient of ``quantity`` at a user's input.

    ``args`` are the catalogue signature's (``losscheck show QUANTITY``); omitted optional ones take
    their defaults; arrays may be lists or NumPy arrays (any batch shape).  The value is evaluated
    symbolically from the spec at the working precision its condition needs (60 digits or more),
    the gradient is that of ``sum(value)``; both are returned as float64 NumPy arrays.
    """
    import numpy as np

    from losscheck import spec
    from losscheck.spec.quantity import ARRAY_KINDS, INTEGER_KINDS
    q = spec.get(quantity)
    names = {a.name for a in q.args}
    if unknown := sorted(set(args) - names):
        raise ValueError(f"{', '.join(unknown)}: not arguments of {q.signature}")
    full = {}
    for a in q.args:
        if a.name not in args:
            if a.required:
                raise ValueError(f"{a.name}: required argument of {q.signature}")
            full[a.name] = a.default
        elif a.kind in ARRAY_KINDS or a.kind == "label":
            full[a.name] = np.asarray(args[a.name], dtype=np.int64 if a.kind in INTEGER_KINDS + ("label",)
                                      and not np.issubdtype(np.asarray(args[a.name]).dtype, np.floating) else np.float64)
        else:
            full[a.name] = args[a.name]
    ref = spec.Reference(q)
    value, _ = ref.evaluate(full)
    as_float = np.vectorize(float, otypes=[np.float64])
    value = as_float(value) if value.shape else np.float64(float(value[()]))
    ones = np.ones(np.shape(value))
    grad = {a.name: as_float(ref.vjp(full, ones, a.name)[0]) for a in q.grad_args}
    return Exact(value=value, grad=grad)
