"""Named conventions: what a library (or a user's function) computes differently on purpose, by name.

A user declares one with ``losscheck audit ... --convention NAME`` (or ``convention=`` in
:func:`losscheck.audit`), as an adapter declares its :class:`~losscheck.impls.adapters.Convention` s;
a property that fails is run again with the convention applied to the reference (the verdict is then
*deviates*, with the difference shown).  Pinned or hard-coded scalar arguments (a smoothing constant,
no squared denominator) are declared with ``--fix NAME=VALUE`` instead.

- ``pixel+1``: pixel-index boxes with inclusive corners (box quantities): width x2 − x1 + 1 and height
  y2 − y1 + 1, i.e. the spec at (x1, y1, x2 + 1, y2 + 1) — Fast R-CNN's and many detection
  codebases' ``bbox_overlaps``.
"""

from __future__ import annotations

import numpy as np

from . import Convention

#: added to a box (x1, y1, x2, y2) by ``pixel+1``; the shift is exact in float64 for pixel-scale boxes
PIXEL = np.array([0.0, 0.0, 1.0, 1.0])


def _pixel_plus_one(quantity) -> Convention:
    boxes = [a.name for a in quantity.args if a.kind == "box"]
    if not boxes:
        raise ValueError(f"convention 'pixel+1' applies to box quantities; {quantity.name} has no box argument")
    return Convention("+1 pixel", "pixel-index boxes with inclusive corners: width x2 − x1 + 1, height y2 − y1 + 1, "
                      "i.e. the spec at (x1, y1, x2 + 1, y2 + 1)",
                      lambda a: {**a, **{name: np.asarray(a[name]) + PIXEL for name in boxes}})


#: name -> (quantity -> Convention); ValueError where it does not apply to the quantity
NAMED = {"pixel+1": _pixel_plus_one}


def named(name: str, quantity) -> Convention:
    """The convention called ``name`` for ``quantity`` (a :class:`~losscheck.spec.Quantity`);
    ValueError naming the known conventions, or saying why it does not apply."""
    if name not in NAMED:
        raise ValueError(f"convention: unknown name {name!r}; known: {', '.join(sorted(NAMED))}")
    return NAMED[name](quantity)
