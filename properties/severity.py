"""Severity of a finding, and the gate that decides an audit's exit status.

- ``bug``: on the typical domain (:mod:`properties.domain`), a value or gradient wrong beyond the
  practical tolerance (:func:`properties.dtypes.practical_bound`: half of the compute precision's
  digits lost); NaN or ±inf where the reference is finite; an exception on valid input; a wrong
  shape, or an output dtype less precise than the input's.  Masked entries and empty sets are part
  of the definitions, so a masked row is on the typical domain.
- ``accuracy``: beyond the rounding bound C(n)·eps·(|ref| + S) but within the practical tolerance,
  on the typical domain: correct, digits lost.
- ``range``: a failure only outside the typical domain (an argument beyond its row of the table, a
  result whose scale |ref| + S lies below 1e-30, an exact result beyond the dtype's largest finite
  value, or a finite result at a degenerate box, where the catalogue asks only for finiteness), and
  a natively float16 gradient that is NaN or ±inf where the same case holds in float32 (float16's
  range in the derivative's intermediates: :func:`properties.checks._float16_range`).

The default gate is ``bug``: an audit fails only for bugs; ``accuracy`` and ``range`` tighten it
(``range`` is every finding: the rounding bound itself).  Every finding is reported at any gate.
"""

from __future__ import annotations

#: most severe first
SEVERITIES = ("bug", "accuracy", "range")
GATES = SEVERITIES
DEFAULT_GATE = "bug"

_RANK = {"range": 0, "accuracy": 1, "bug": 2}


def rank(severity: str) -> int:
    return _RANK[severity]


def at_gate(severity: str, gate: str = DEFAULT_GATE) -> bool:
    """Whether a finding of ``severity`` fails an audit at ``gate``."""
    if gate not in _RANK:
        raise ValueError(f"gate must be one of {GATES}, got {gate!r}")
    return bool(severity) and _RANK[severity] >= _RANK[gate]


def classify(*, off_domain: str, nonfinite: bool = False, within_practical: bool = False,
             structural: bool = False) -> str:
    """The severity of a failed comparison.  ``off_domain``: why the input (or the result's scale)
    lies outside the typical domain, "" where it lies inside; ``nonfinite``: NaN, ±inf where the
    reference is finite, or an exception; ``within_practical``: the error is within the practical
    tolerance; ``structural``: a wrong shape or a precision-losing dtype (a bug at any input)."""
    if structural:
        return "bug"
    if off_domain:
        return "range"
    if nonfinite:
        return "bug"
    return "accuracy" if within_practical else "bug"
