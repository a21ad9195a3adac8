"""losscheck's single source of truth: each catalogue quantity in SymPy.

``QUANTITIES`` maps a name to its :class:`~spec.quantity.Quantity`; it is
collected from every module of this package that defines ``QUANTITIES`` (a
new family is a new module, nothing else to register).
"""

import importlib
import pkgutil

from .quantity import Arg, ClaimResult, Comparison, Definition, Image, Masking, NumericalClaim, Quantity, Shift, SymbolicClaim
from .reference import Reference

QUANTITIES: dict = {}
for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _m.name in ("quantity", "reference"):
        continue
    for _q in getattr(importlib.import_module(f"{__name__}.{_m.name}"), "QUANTITIES", ()):
        QUANTITIES[_q.name] = _q


def get(name: str) -> Quantity:
    """The Quantity called ``name``; ValueError listing the known names otherwise."""
    try:
        return QUANTITIES[name]
    except KeyError:
        raise ValueError(f"unknown quantity {name!r}; known: {', '.join(sorted(QUANTITIES))}") from None


__all__ = ["QUANTITIES", "get", "Arg", "ClaimResult", "Comparison", "Definition", "Masking",
           "Image", "NumericalClaim", "Quantity", "Reference", "Shift", "SymbolicClaim"]
