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
from dataclasses import dataclass
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

    @property
    def target(self) -> str:
        """``module:callable`` of the adapter function, for snippets."""
        return f"{self.fn.__module__}:{self.fn.__name__}"


def modules() -> list[str]:
    """The adapter modules (every module here but ``deviations``, the known-deviations table)."""
    return sorted(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)
                  if not m.name.startswith("_") and m.name != "deviations")


def adapters() -> list[Adapter]:
    """Every adapter of every module (the libraries themselves are not imported)."""
    return [a for name in modules() for a in importlib.import_module(name).ADAPTERS]


def missing(adapter: Adapter) -> list[str]:
    """The modules ``adapter`` needs that are not installed here."""
    return [m for m in adapter.requires if importlib.util.find_spec(m) is None]


def available(adapter: Adapter) -> bool:
    return not missing(adapter)
