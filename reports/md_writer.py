"""The document (reports/document.py) as GitHub-flavoured Markdown: the pictures of the HTML page
become compact tables; every link is to a heading of the same file or to a file the document says
exists."""

from __future__ import annotations

import re

from . import speed
from .document import (
    CONTRACT_NOTE,
    CONTRACT_VERDICTS,
    DASH,
    FINDING_HEADERS,
    FINDING_KINDS,
    FINDINGS_NOTE,
    GRADE_NOTE,
    THIRD_PARTY_INTRO,
    UNDETERMINED_NOTE,
    VERDICT_HEADERS,
    VERDICTS,
    Adapter,
    Block,
    Claim,
    Fact,
    Failure,
    Grades,
    Matrix,
    Quantity,
    Report,
    Rich,
)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def code(value: str) -> str:
    value = value.replace("\n", " ")
    fence = "`"
    while fence in value:
        fence += "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def block(value: str, lang: str = "") -> str:
    value = value.rstrip("\n")
    fence = "```"
    while fence in value:
        fence += "`"
    return f"{fence}{lang}\n{value}\n{fence}"


def _rich(value: Rich) -> str:
    return "".join(code(s.text) if s.style == "code" else f"**{s.text}**" if s.style == "strong"
                   else f"_{s.text}_" if s.style == "em" else s.text for s in value)


def _cell(markdown: str) -> str:
    return markdown.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    return "\n".join(lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows])


def _facts(facts: tuple[Fact, ...]) -> str:
    return "\n".join(f"- **{f.label}:** {_rich(f.value)}" for f in facts)


def _key_values(pairs: tuple[tuple[str, str], ...]) -> str:
    return "\n".join(f"- **{k}:** {v}" for k, v in pairs) if pairs else "_not recorded_"


def _status(status: str, tone: str) -> str:
    return f"❌ **{status.upper()}**" if tone == "bad" else f"✓ {status}" if tone == "good" else status or DASH


def render(doc: Report) -> str:
    sections = [_header(doc), _overall(doc), _glance(doc), _summary(doc), _settings(doc), _domain(doc)]
    quantities = [_quantity(q) for q in doc.quantities]
    sections += [_third_party(doc), *quantities] if doc.thirdparty_report else [*quantities, _third_party(doc)]
    sections.append(_failures(doc))
    return "\n\n".join(s for s in sections if s) + "\n"


def _header(doc: Report) -> str:
    sections = (["[At a glance](#at-a-glance)"] + (["[Accuracy](#accuracy)"] if doc.accuracy else [])
                + ["[Summary](#summary)", "[Settings](#settings)", "[Severities](#severities-and-the-typical-domain)"])
    quantities = [f"[{q.name}](#{slug(q.name)})" for q in doc.quantities]
    third = ["[Third-party code](#third-party-code)"] + (["[Findings by severity](#findings-by-severity)"]
                                                      if doc.thirdparty_report and doc.third_party.findings else [])
    toc = sections + (third + quantities if doc.thirdparty_report else quantities + third) + [f"[Failures](#failures) ({doc.failure_count})"]
    return f"# {doc.title}\n\nGenerated {doc.generated} · losscheck {doc.version}\n\n**Contents:** " + " · ".join(toc)


def _overall(doc: Report) -> str:
    return f"**Overall: {doc.overall.verdict}** — {doc.overall.explanation}"


def _glance(doc: Report) -> str:
    parts = ["## At a glance"]
    if doc.overview:
        parts.append("Conformance: the worst finding of each quantity on each implementation.")
        parts.append(table(["Quantity", *doc.overview.columns],
                           [[f"[{row.label}](#{slug(row.label)})", *(c.text for c in row.cells)] for row in doc.overview.rows]))
    if doc.speed:
        parts.append(f"Speed: our time / the fastest peer's ({doc.speed.stat}, pytest-benchmark; > 1: ours is slower)."
                     + (f" No peer: {', '.join(doc.speed.without_peer)}." if doc.speed.without_peer else ""))
        parts.append(table(["Quantity", "Mode", "Compared", "Ours (ms)", "Fastest peer", "Peer (ms)", "Ours / peer"],
                           [[b.quantity, b.mode, b.framework, f"{b.ours * 1e3:.3f}", b.peer or "", f"{b.peer_seconds * 1e3:.3f}",
                             f"{b.ratio:.2f}"] for b in doc.speed.bars]))
        if doc.speed.rooflines:
            parts.append(speed.ROOFLINE_NOTE)
            parts.append(table(["Quantity", "Mode", "Framework", "Ours (ms)", "Roofline (ms)", "Ours / roofline"],
                               [[r.quantity, r.mode, r.framework, f"{r.ours * 1e3:.3f}", f"{r.roofline * 1e3:.3f}",
                                 f"{r.of_roofline:.1f}"] for r in doc.speed.rooflines]))
    elif not doc.thirdparty_report:
        parts.append("_No benchmark results beside this report (`nox -s bench` writes `reports/out/benchmarks.json`): no speed table._")
    if doc.accuracy:
        parts.append(f"### Accuracy\n\n_{GRADE_NOTE} Each cell: worst ULPs / allowed; over every quantity an "
                     "implementation implements (the section of each quantity has its own table)._")
        parts.append(_grades(doc.accuracy))
    if doc.claims:
        parts.append("Claims (✓ proved or held, ❌ refuted or failed):\n\n" + "\n".join(
            f"- [{name}](#{slug(name)}): " + ", ".join(f"{'✓' if c.tone == 'good' else '❌' if c.tone == 'bad' else c.status or DASH} {c.name}"
                                                      for c in claims) for name, _, claims in doc.claims))
    return "\n\n".join(parts)


def _summary(doc: Report) -> str:
    rows = [[r.label + (" (third party)" if r.third_party else ""), code(r.quantity), r.framework, r.device,
             *(str(r.conformance[v]) for v in VERDICTS), "/".join(str(r.contract[v]) for v in CONTRACT_VERDICTS)] for r in doc.summary]
    headers = ["Implementation", "Quantity", "Framework", "Device", *VERDICT_HEADERS, "contracts ✓/✗/error/–"]
    return "## Summary\n\n" + (table(headers, rows) if rows else "_No audits were run._")


def _settings(doc: Report) -> str:
    return f"## Settings\n\n{_key_values(doc.settings)}\n\n## Environment\n\n{_key_values(doc.environment)}"


def _domain(doc: Report) -> str:
    return ("## Severities and the typical domain\n\n" + _rich(doc.domain.intro) + "\n\n"
            + table(list(doc.domain.headers), [list(r) for r in doc.domain.rows]))


def _claim_detail(c: Claim) -> str:
    if not c.per_implementation:
        return c.detail
    marks = "; ".join(f"{impl}: **{st}**" if st in ("refuted", "failed") else f"{impl}: {st}" for impl, st in c.per_implementation)
    return f"{c.detail} (per implementation: {marks})" if c.detail else marks


def _claims(q: Quantity) -> str:
    if not q.claims:
        return "### Claims\n\n_No claims recorded._"
    rows = [[code(c.name), code(c.statement), c.kind, _status(c.status, c.tone), _claim_detail(c)] for c in q.claims]
    parts = ["### Claims", table(["Claim", "Statement", "Kind", "Status", "Detail"], rows)]
    for c in q.claims:
        if c.counterexample:
            parts.append(f"**Counterexample to {code(c.name)}** ({_status(c.status, c.tone)}):")
            parts += [block(b.text, b.lang) if b.label == "Counterexample" else f"{b.label}:\n\n{block(b.text, b.lang)}"
                      for b in c.counterexample]
    return "\n\n".join(parts)


def _matrix(title: str, matrix: Matrix) -> str:
    return f"{title}\n\n" + table(["Implementation", *matrix.columns],
                                  [[row.label + (" (third party)" if row.third_party else ""), *(c.text for c in row.cells)]
                                   for row in matrix.rows])


def _grades(grades: Grades) -> str:
    return table(["Implementation", *grades.columns],
                 [[row.label + (" (third party)" if row.third_party else ""), *(c.text for c in row.cells)] for row in grades.rows])


def _quantity(q: Quantity) -> str:
    parts = [f"## {q.name}"]
    if q.intro:
        parts.append(q.intro)
    facts = [f"- **{f.label}:** {_rich(f.value)}" for f in q.facts]
    if q.conventions:
        facts.append("- **Conventions:**\n" + "\n".join(f"  - {c}" for c in q.conventions))
    if facts:
        parts.append("\n".join(facts))
    if q.show_claims:
        parts.append(_claims(q))
    if q.conformance:
        parts.append(_matrix("### Conformance" + (f"\n\n_{UNDETERMINED_NOTE}_" if q.conformance.undetermined else ""), q.conformance))
    else:
        parts.append("### Conformance\n\n_No conformance results._")
    if q.accuracy:
        parts.append("### Accuracy grade\n\n_Worst ULPs / allowed on the typical domain, per dtype "
                     "(value, gradient and masked properties; see [Accuracy](#accuracy))._\n\n" + _grades(q.accuracy))
    if q.contract:
        parts.append(_matrix(f"### Contract checks\n\n_{CONTRACT_NOTE}_", q.contract))
    return "\n\n".join(parts)


def _blocks(blocks: tuple[Block, ...]) -> list[str]:
    return [f"{b.label}:\n\n{block(b.text, b.lang)}" for b in blocks]


def _adapter(a: Adapter) -> list[str]:
    parts = [f"### {a.label}", _facts(a.facts), f"Verdict: **{a.verdict}** — {a.counts}"]
    if a.findings:
        parts.append("\n".join(f"- {f.mark} {', '.join(map(code, f.properties))}: {f.text}" for f in a.findings))
    if a.example:
        parts.append(f"Smallest input for {code(a.example_property)}"
                     + (" (all counterexamples: [Failures](#failures))" if a.example_in_failures else "") + ":")
        parts += _blocks(a.example)
    return parts


def _third_party(doc: Report) -> str:
    tp = doc.third_party
    parts = ["## Third-party code", _rich(THIRD_PARTY_INTRO)]
    if tp.link:
        parts.append("Details, with a counterexample for each finding: [thirdparty.md](thirdparty.md) ([HTML](thirdparty.html)).")
    if not tp.adapters:
        parts.append("_No third-party code was audited._")
    if tp.findings:
        parts.append(f"### Findings by severity\n\n_{FINDINGS_NOTE}_\n\n" + table(
            ["Adapter", "Quantity", *FINDING_HEADERS],
            [[f"**{f.label}**" if not f.quantity else f.label, code(f.quantity) if f.quantity else "",
              *(str(f.counts[k]) for k in FINDING_KINDS)] for f in tp.findings]))
    if tp.stale:
        parts.append("⚠ Rows of the known-deviations table (`impls/adapters/deviations.py`) that matched nothing "
                     "(the behaviour changed, or the row is wrong):\n\n" + "\n".join(f"- {code(k)}" for k in tp.stale))
    for adapter in tp.adapters:
        parts += _adapter(adapter)
    if tp.skipped:
        parts.append(f"Not audited (library not installed): {tp.skipped}")
    return "\n\n".join(parts)


def _failure(f: Failure) -> list[str]:
    parts = [f"#### {f.mark} {f.label} — {f.property}", _facts(f.facts)]
    if f.message:
        parts.append(f"Message:\n\n{block(f.message, 'text')}")
    return parts + _blocks(f.blocks)


def _failures(doc: Report) -> str:
    if not doc.failures:
        return "## Failures\n\nNo failing or erroring results."
    parts = ["## Failures", f"{doc.failure_count} result(s) failed or raised an error."]
    for group in doc.failures:
        parts.append(f"### Failures of {group.quantity}")
        if group.spec:
            parts.append(f"**The spec:** {_rich(group.spec)}")
        for f in group.failures:
            parts += _failure(f)
    return "\n\n".join(parts)
