"""A quantity's catalogue entry as text, from the registry (``losscheck show NAME``).

Everything comes from :mod:`spec`: the summary, the formula, the canonical signature with each
argument's kind and meaning, the conventions, masking, the exact range and invariances every
result is held to (properties.mixed), and the claims — symbolic ones with their
status (proved, proved on instances, refuted), proved here and now by SymPy; numerical ones with
their tolerance (each is a property ``claim:NAME`` of every audit).
"""

from __future__ import annotations

import textwrap


def entry(name: str, prove: bool = True) -> str:
    """The catalogue entry of quantity ``name`` (ValueError listing the known names otherwise).
    ``prove=False`` lists the symbolic claims without running SymPy on them."""
    from losscheck import spec
    q = spec.get(name)
    wrap = textwrap.TextWrapper(width=100, subsequent_indent="    ")
    lines = [f"{q.name} ({q.family}): {q.summary}", "", f"  {q.formula}", "", f"signature: {q.signature}"]
    for a in q.args:
        default = "required" if a.required else f"default {a.default!r}"
        grad = ", differentiated" if a.grad else ""
        lines.append(wrap.fill(f"  {a.name}: {a.kind} ({default}{grad}){' — ' + a.doc if a.doc else ''}"))
    lines.append(f"output: {'one value per row' if q.output == 'row' else 'one value per entry of a row'}"
                 f" (layout {q.layout!r})")
    if q.masking is not None:
        m = q.masking
        lines.append(wrap.fill(f"masking: entries of {m.arg} equal to {m.value} are masked"
                               + (f"; an all-masked row gives {m.empty}" if m.empty is not None else "")))
    for c in q.conventions:
        lines.append(wrap.fill(f"convention: {c}"))
    if q.reference:
        lines.append(wrap.fill(f"reference: {q.reference}"))
    if q.image is not None:  # checked on every value, whatever the condition number (properties.mixed)
        lines.append(wrap.fill(f"range: {q.image.reason} — a result outside it, beyond its own rounding, is a finding"))
    for s in q.shifts:
        lines.append(wrap.fill(f"invariance: {s.statement} — checked on every gradient"))
    if q.claims:
        lines += ["", "claims:"]
    for c in q.symbolic_claims:
        status = ""
        if prove:
            r = c.check()
            status = f" — {r.status}" + (f": {r.counterexample}" if r.counterexample else "") + (f" ({r.detail})" if r.detail else "")
        lines.append(wrap.fill(f"  [symbolic] {c.name}: {c.statement}{status}"))
    for c in q.numerical_claims:
        lines.append(wrap.fill(f"  [numerical] {c.name}: {c.statement} — checked on every audit as "
                               f"claim:{c.name} (tolerance: {c.tolerance})"))
    return "\n".join(lines)
