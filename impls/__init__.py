"""losscheck's own implementations, one module per framework and family:
``torch_<family>.py`` and ``jax_<family>.py``, each exporting the catalogue
names in ``__all__``.  Modules are discovered, never listed, and imported
lazily so that a torch-only environment never imports jax (and vice versa).
Argument checks shared within one framework live in ``_torch_checks.py`` and
``_jax_checks.py``; the leading underscore keeps them out of the discovery.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

FRAMEWORKS = ("torch", "jax")


def modules(framework: str) -> list[str]:
    """Names of this package's modules for ``framework`` (``torch_*`` / ``jax_*``)."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {FRAMEWORKS}, got {framework!r}")
    return sorted(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)
                  if m.name.startswith(framework + "_"))


def implementations(framework: str) -> dict[str, Callable]:
    """{quantity name: callable} for one framework (imports that framework)."""
    out = {}
    for name in modules(framework):
        mod = importlib.import_module(name)
        for q in getattr(mod, "__all__", ()):
            out[q] = getattr(mod, q)
    return out


def get(quantity: str, framework: str) -> Callable:
    """Our implementation of ``quantity`` in ``framework``; ValueError if none."""
    impl = implementations(framework).get(quantity)
    if impl is None:
        raise ValueError(f"no {framework} implementation of quantity {quantity!r}")
    return impl


def target(quantity: str, framework: str) -> str:
    """The audit target string (``module:callable``) of our implementation."""
    return f"{get(quantity, framework).__module__}:{quantity}"
