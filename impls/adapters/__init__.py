"""Adapters: third-party code presented in the catalogue's signatures.

An :class:`Adapter` wraps one library callable (or a snippet quoted from a
seed text) into the canonical signature of one quantity and declares what
the library does differently on purpose — its :class:`Convention` s (a
smoothing constant it fixes, the +1 pixel box) — and its output form (a
loss 1 − q instead of the score q; no gradients for NumPy code).  The
audit engine (``properties.engine.audit``) compares the callable with the
spec; a property that fails is run again with the conventions applied to
the reference, so the verdict separates "deviates by a declared
convention" from "fails".  A convention only maps arguments, so it can
explain a value offset but never a NaN, an overflow or a wrong gradient.

One module per library (``seed001.py`` for the seed snippets), each with a
module-level ``ADAPTERS`` list.  Modules import their library inside the
adapter functions, so listing adapters never needs the libraries;
:func:`available` says whether one can run here.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Convention:
    """A declared deviation: ``args`` maps the canonical arguments (float64 NumPy
    values, as drawn) to those at which the spec gives what the library
    computes.  Only substitutions of non-differentiated arguments (``smooth``)
    and shifts of differentiated ones (the +1 pixel box), so that the
    reference gradient at the mapped arguments is the library's gradient."""

    name: str
    text: str
    args: Callable[[dict], dict]


@dataclass(frozen=True)
class Adapter:
    name: str  # "<module>.<callable>", e.g. "seed001.dice_loss"
    quantity: str
    framework: str  # the array type the adapter takes and returns: "torch" | "jax"
    fn: Callable  # the canonical signature; a module-level function (snippets import it)
    requires: tuple[str, ...]  # importable modules the adapter needs
    source: str  # where the audited code comes from
    conventions: tuple[Convention, ...] = ()
    complement: bool = False  # returns 1 − q (a loss) rather than q
    differentiable: bool = True
    note: str = ""  # how the adapter calls the library, for the report
    #: canonical arguments the library has no parameter for, pinned for every draw (e.g. {"k": 1.0}:
    #: jax.nn.logsumexp has no sharpness; scaling x by k in the adapter would overflow where the
    #: library does not, a finding of the wrapper's, not the library's)
    fixed: dict = field(default_factory=dict)

    @property
    def target(self) -> str:
        """``module:callable`` of the adapter function, for snippets."""
        return f"{self.fn.__module__}:{self.fn.__name__}"


def modules() -> list[str]:
    """The adapter modules (every module here but ``deviations``, the known-deviations table, and
    ``conventions``, the named ones a user declares)."""
    return sorted(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)
                  if not m.name.startswith("_") and m.name not in ("deviations", "conventions"))


def adapters() -> list[Adapter]:
    """Every adapter of every module (the libraries themselves are not imported)."""
    return [a for name in modules() for a in importlib.import_module(name).ADAPTERS]


def missing(adapter: Adapter) -> list[str]:
    """The modules ``adapter`` needs that are not installed here."""
    return [m for m in adapter.requires if importlib.util.find_spec(m) is None]


def available(adapter: Adapter) -> bool:
    return not missing(adapter)


def standalone_source(fn: Callable) -> str:
    """Python source that defines ``fn`` without losscheck: the module-level imports, constants
    and same-module functions ``fn`` uses (transitively), then ``fn`` itself.  The report's
    reproduction snippets inline it, so a failure can be pasted into a shell that has only the
    library.  Raises ``ValueError`` for what cannot be inlined (a closure, source not found)."""
    import inspect
    import textwrap
    import types

    module = importlib.import_module(fn.__module__)
    imports, constants, functions, seen = [], [], [], set()

    def names(code):
        for n in code.co_names:
            yield n
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                yield from names(c)

    def visit(f):
        if f.__code__.co_freevars:
            raise ValueError(f"{f.__qualname__} is a closure; its source alone does not define it")
        for n in names(f.__code__):
            if n in seen or n not in vars(module):
                continue
            seen.add(n)
            v = vars(module)[n]
            if isinstance(v, types.ModuleType):
                imports.append(f"import {v.__name__}" + (f" as {n}" if n != v.__name__ else ""))
            elif isinstance(v, types.FunctionType) and v.__module__ == module.__name__:
                visit(v)
            elif callable(v) and getattr(v, "__module__", None) and getattr(v, "__name__", None):
                imports.append(f"from {v.__module__} import {v.__name__}" + (f" as {n}" if n != v.__name__ else ""))
            elif isinstance(v, (int, float, str, tuple, bool)):
                constants.append(f"{n} = {v!r}")
        try:
            functions.append(textwrap.dedent(inspect.getsource(f)))
        except (OSError, TypeError) as e:
            raise ValueError(f"no source for {f.__qualname__}: {e}") from e

    if fn.__name__ not in vars(module) or vars(module)[fn.__name__] is not fn:
        raise ValueError(f"{fn.__qualname__} is not defined under its own name in {module.__name__}")
    seen.add(fn.__name__)
    visit(fn)
    head = "\n".join(imports + constants)
    return (head + "\n\n\n" if head else "") + "\n\n\n".join(s.rstrip() for s in functions)
