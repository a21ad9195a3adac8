"""The document (reports/document.py) as one self-contained HTML page: inline CSS and SVG, no
script, no network.  Every table sits in a container that scrolls rather than widen the page."""

from __future__ import annotations

from html import escape

from . import speed, svg
from .document import (
    CONTRACT_NOTE,
    CONTRACT_VERDICTS,
    DASH,
    FINDING_HEADERS,
    FINDING_KINDS,
    FINDINGS_NOTE,
    GRADE_NOTE,
    THIRD_PARTY_INTRO,
    TONE_TEXT,
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
    claim_tone,
)

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       max-width: 1200px; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1, h2, h3, h4 { line-height: 1.2; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: .92em; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; overflow-wrap: break-word; }
th { background: #f0f0f0; }
td.num { text-align: right; }
td.holds { background: #d7f0d7; }
td.fails, td.bug { background: #f6c6c6; }
td.accuracy { background: #fde0c5; }
td.range { background: #fef0d9; }
td.error { background: #e3d0f0; }
td.skipped { background: #e2e2e2; color: #555; }
td.deviates { background: #dcebf5; }
td.na { background: #f7f7f7; color: #999; }
tr.refuted td, tr.failed td { background: #fdecea; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: .6em; overflow-x: auto; max-width: 100%; }
pre.wrap { white-space: pre-wrap; overflow-wrap: anywhere; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.badge, .chip { display: inline-block; padding: .05em .55em; border-radius: .8em; font-size: .85em; color: #fff; }
.badge { font-weight: 700; white-space: nowrap; }
.good { background: #2e7d32; }
.bad { background: #c62828; }
.neutral { background: #777; }
.claims-row { display: flex; gap: 1em; margin: .15em 0 .4em; }
.claims-row > a { flex: 0 0 10em; font-size: .9em; overflow-wrap: anywhere; }
.chips { display: flex; flex-wrap: wrap; gap: .25em; align-items: baseline; }
.chip { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .78em; }
.overall { font-size: 1.1em; padding: .5em .8em; border-radius: .3em; }
.overall.pass { background: #d7f0d7; }
.overall.fail { background: #f6c6c6; }
.overall.none { background: #e2e2e2; }
.note { color: #555; font-style: italic; }
.meta { color: #555; }
nav.toc ul { display: flex; flex-wrap: wrap; gap: .2em 1em; padding: 0; list-style: none; }
.figures { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
figure { margin: 0; max-width: 100%; display: table; }
figcaption { display: table-caption; caption-side: top; color: #555; font-size: .9em; margin-bottom: .3em; }
svg a:hover rect { stroke: #000; stroke-width: 1.5; }
.failure { border-left: 4px solid #c62828; padding-left: 1em; margin: 1.5em 0; }
.kv { display: grid; grid-template-columns: repeat(auto-fit, minmax(22em, 1fr)); gap: 0 2em; }
table.grades td { text-align: right; white-space: nowrap; min-width: 5.5em; }
table.grades td a { color: inherit; }
table.grades .allowed { opacity: .7; font-size: .85em; }
table.grades th { font-weight: normal; }
table.grades thead th { font-weight: 600; text-align: center; }
.swatches { display: flex; flex-wrap: wrap; gap: .3em 1em; font-size: .85em; color: #555; margin: .3em 0; }
.swatches span::before { content: ""; display: inline-block; width: .9em; height: .9em; margin-right: .3em;
                         vertical-align: -.1em; border: 1px solid #999; background: var(--fill); }
""" + "".join(f"table.grades td.{tone} {{ background: {fill}; color: {svg.INK.get(tone, '#222')}; }}\n"
              for tone, fill in svg.FILL.items())


#: the overview's cells count results: all hold (how many), else the worst finding
OVERVIEW_LEGEND = tuple((tone, "all hold (how many)" if tone == "holds" else meaning) for tone, meaning in TONE_TEXT)


def _rich(value: Rich) -> str:
    tags = {"code": "code", "strong": "strong", "em": "em"}
    return "".join(f"<{tags[s.style]}>{escape(s.text)}</{tags[s.style]}>" if s.style in tags else escape(s.text) for s in value)


def _wb(value: str) -> str:
    """Escaped, with a break opportunity after each separator of a long identifier: a long label or
    property name wraps in its cell rather than widen the table."""
    out = escape(value)
    for separator in "._:[/" if len(value) > 16 else "":
        out = out.replace(separator, separator + "<wbr>")
    return out


def _table(headers: list[str], rows: list[str], cls: str = "") -> str:
    head = "".join(f"<th>{_wb(h)}</th>" for h in headers)
    attr = f' class="{cls}"' if cls else ""
    return f'<div class="scroll"><table{attr}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n' + "\n".join(rows) + "\n</tbody>\n</table></div>"


def _td(content: str, cls: str = "") -> str:
    return f'<td class="{cls}">{content}</td>' if cls else f"<td>{content}</td>"


def _pre(value: str, lang: str = "") -> str:
    """A block of code (scrolls where a line is long) or of text (``lang`` "text" or none: wraps)."""
    cls = f' class="language-{escape(lang)}"' if lang else ""
    wrap = ' class="wrap"' if lang in ("", "text") else ""
    return f"<pre{wrap}><code{cls}>{escape(value.rstrip(chr(10)))}</code></pre>"


def _blocks(blocks: tuple[Block, ...]) -> list[str]:
    return [f"<p>{escape(b.label)}:</p>\n{_pre(b.text, b.lang)}" for b in blocks]


def _facts(facts: tuple[Fact, ...]) -> str:
    return "<ul>\n" + "\n".join(f"<li><strong>{escape(f.label)}:</strong> {_rich(f.value)}</li>" for f in facts) + "\n</ul>"


def _key_values(pairs: tuple[tuple[str, str], ...]) -> str:
    if not pairs:
        return '<p class="note">not recorded</p>'
    rows = [f"<tr><th>{_wb(k)}</th><td>{escape(v)}</td></tr>" for k, v in pairs]
    return '<div class="scroll"><table>\n' + "\n".join(rows) + "\n</table></div>"


def _badge(status: str, tone: str) -> str:
    return f'<span class="badge {tone}">{escape(status.upper() if tone == "bad" else status or DASH)}</span>'


def render(doc: Report) -> str:
    """The whole page."""
    body = [_header(doc), _overall(doc), _glance(doc), _summary(doc), _settings(doc), _domain(doc)]
    quantities = [_quantity(q) for q in doc.quantities]
    body += [_third_party(doc), *quantities] if doc.thirdparty_report else [*quantities, _third_party(doc)]
    body.append(_failures(doc))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{escape(doc.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(part for part in body if part) + "\n</body>\n</html>\n")


def _header(doc: Report) -> str:
    sections = [("At a glance", "glance")] + ([("Accuracy", "accuracy")] if doc.accuracy else []) + [
        ("Summary", "summary"), ("Settings", "settings"), ("Severities", "domain")]
    quantities = [(q.name, q.anchor) for q in doc.quantities]
    third = [("Third-party code", "third-party-code")] + ([("Findings by severity", "findings-by-severity")]
                                                          if doc.thirdparty_report and doc.third_party.findings else [])
    toc = sections + (third + quantities if doc.thirdparty_report else quantities + third) + [(f"Failures ({doc.failure_count})", "failures")]
    items = "\n".join(f'<li><a href="#{escape(anchor)}">{escape(name)}</a></li>' for name, anchor in toc)
    return (f"<h1>{escape(doc.title)}</h1>\n<p class=\"meta\">Generated {escape(doc.generated)} · losscheck {escape(doc.version)}</p>\n"
            f'<nav class="toc"><strong>Contents</strong>\n<ul>\n{items}\n</ul></nav>')


def _overall(doc: Report) -> str:
    o = doc.overall
    return f'<p class="overall {o.tone}"><strong>Overall: {escape(o.verdict)}</strong> — {escape(o.explanation)}</p>'


def _glance(doc: Report) -> str:
    figures = []
    if doc.overview:
        figures.append('<figure><figcaption>Conformance: the worst finding of each quantity on each implementation '
                       '(a row links to its section)</figcaption>\n'
                       + svg.heatmap(doc.overview, "overview-heatmap", "conformance at a glance", rotate=False,
                                   legend=OVERVIEW_LEGEND) + "</figure>")
    if doc.speed:
        without = f" No peer: {', '.join(doc.speed.without_peer)}." if doc.speed.without_peer else ""
        figures.append(f'<figure><figcaption>Speed: our time / the fastest peer\'s ({escape(doc.speed.stat)}, '
                       f'pytest-benchmark; log scale).{escape(without)}</figcaption>\n'
                       + svg.speed_chart(doc.speed, "speed-chart") + "</figure>")
        if doc.speed.rooflines:
            figures.append(f'<p class="note">{escape(speed.ROOFLINE_NOTE)}</p>\n'
                           + _table(["Quantity", "Mode", "Framework", "Ours (ms)", "Roofline (ms)", "Ours / roofline"],
                                    ["<tr>" + "".join(_td(escape(c)) for c in (r.quantity, r.mode, r.framework,
                                                                              f"{r.ours * 1e3:.3f}", f"{r.roofline * 1e3:.3f}",
                                                                              f"{r.of_roofline:.1f}")) + "</tr>"
                                     for r in doc.speed.rooflines]))
    elif not doc.thirdparty_report:
        figures.append('<p class="note">No benchmark results beside this report (<code>nox -s bench</code> writes '
                       '<code>reports/out/benchmarks.json</code>): no speed chart.</p>')
    chips = [f'<div class="claims-row"><a href="#{escape(anchor)}">{escape(name)}</a><div class="chips">'
             + " ".join(f'<span class="chip {c.tone}" title="{escape(c.statement)}: {escape(c.status)}">{escape(c.name)}</span>'
                        for c in claims) + "</div></div>"
             for name, anchor, claims in doc.claims]
    claims = ('<h3>Claims</h3>\n<p class="note">Green: proved or held; red: refuted or failed; grey: not run.</p>\n'
              + "\n".join(chips)) if chips else ""
    accuracy = ""
    if doc.accuracy:
        accuracy = ('<h3 id="accuracy">Accuracy</h3>\n'
                    f'<p class="note">{escape(GRADE_NOTE)} Over every quantity an implementation implements (each '
                    'quantity\'s section has its own table); the tooltip names the results.</p>\n' + _grades(doc.accuracy))
    return ('<h2 id="glance">At a glance</h2>\n<div class="figures">\n' + "\n".join(figures) + "\n</div>\n"
            + accuracy + claims)


def _summary(doc: Report) -> str:
    headers = ["Implementation", "Quantity", "Framework", "Device", *VERDICT_HEADERS, "contracts ✓/✗/error/–"]
    rows = []
    for row in doc.summary:
        label = _wb(row.label) + (" <em>(third party)</em>" if row.third_party else "")
        counts = "".join(_td(str(row.conformance[v]), f"num {v}" if row.conformance[v] else "num") for v in VERDICTS)
        rows.append("<tr>" + _td(label) + _td(f"<code>{_wb(row.quantity)}</code>") + _td(escape(row.framework))
                    + _td(escape(row.device)) + counts + _td("/".join(str(row.contract[v]) for v in CONTRACT_VERDICTS), "num") + "</tr>")
    table = _table(headers, rows) if rows else '<p class="note">No audits were run.</p>'
    return f'<h2 id="summary">Summary</h2>\n{table}'


def _settings(doc: Report) -> str:
    return (f'<div class="kv"><div><h2 id="settings">Settings</h2>\n{_key_values(doc.settings)}</div>\n'
            f'<div><h2 id="environment">Environment</h2>\n{_key_values(doc.environment)}</div></div>')


def _domain(doc: Report) -> str:
    rows = ["<tr>" + "".join(_td(escape(c)) for c in row) + "</tr>" for row in doc.domain.rows]
    return f'<h2 id="domain">Severities and the typical domain</h2>\n<p>{_rich(doc.domain.intro)}</p>\n' + _table(list(doc.domain.headers), rows)


def _claim_row(claim: Claim) -> str:
    detail = escape(claim.detail)
    if claim.per_implementation:
        detail += "<ul>" + "".join(f"<li>{escape(impl)}: {_badge(st, claim_tone(st))}</li>" for impl, st in claim.per_implementation) + "</ul>"
    row_cls = f' class="{escape(claim.status)}"' if claim.tone == "bad" else ""
    return (f"<tr{row_cls}>" + _td(f"<code>{_wb(claim.name)}</code>") + _td(f"<code>{escape(claim.statement)}</code>")
            + _td(escape(claim.kind)) + _td(_badge(claim.status, claim.tone)) + _td(detail) + "</tr>")


def _claims(q: Quantity) -> str:
    if not q.claims:
        return '<h3>Claims</h3>\n<p class="note">No claims recorded.</p>'
    parts = ["<h3>Claims</h3>", _table(["Claim", "Statement", "Kind", "Status", "Detail"], [_claim_row(c) for c in q.claims], "claims")]
    for c in q.claims:
        if c.counterexample:
            parts.append(f"<p><strong>Counterexample to <code>{escape(c.name)}</code></strong> {_badge(c.status, c.tone)}</p>")
            parts += [_pre(b.text, b.lang) if b.label == "Counterexample" else f"<p>{escape(b.label)}:</p>\n{_pre(b.text, b.lang)}"
                      for b in c.counterexample]
    return "\n".join(parts)


#: the grade tables' colours, as the heatmaps' legend
GRADE_LEGEND = (("holds", "holds"), ("bug", "bug"), ("accuracy", "accuracy"), ("range", "range"), ("error", "error"),
                ("deviates", "deviates by a declared convention"), ("na", "not run"))


def _grades(grades: Grades) -> str:
    """Implementations × dtypes: the worst ULPs with the allowed bound beside, coloured as the heatmaps."""
    rows = []
    for row in grades.rows:
        cells = []
        for c in row.cells:
            shown = escape(c.value) + (f' <span class="allowed">/ {escape(c.allowed)}</span>' if c.allowed else "")
            if c.anchor:
                shown = f'<a href="#{escape(c.anchor)}">{shown}</a>'
            cells.append(f'<td class="{escape(c.tone)}" title="{escape(c.title)}">{shown}</td>')
        label = _wb(row.label) + (" ✦" if row.third_party else "")
        rows.append(f"<tr><th>{label}</th>{''.join(cells)}</tr>")
    legend = "".join(f'<span style="--fill: {svg.FILL[tone]}">{escape(text)}</span>' for tone, text in GRADE_LEGEND)
    headers = ["Implementation", *(f"{dt}" for dt in grades.columns)]
    return (_table(headers, rows, "grades")
            + f'\n<div class="swatches">worst ulp / allowed ·{legend}<em>✦ third party</em></div>')


def _contract(matrix: Matrix) -> str:
    rows = []
    for row in matrix.rows:
        cells = "".join(_td(f'<a href="#{escape(c.anchor)}">{escape(c.text)}</a>' if c.anchor else escape(c.text), c.tone) for c in row.cells)
        rows.append(f"<tr><th>{_wb(row.label)}</th>{cells}</tr>")
    return f'<h3>Contract checks</h3>\n<p class="note">{escape(CONTRACT_NOTE)}</p>\n' + _table(["Implementation", *matrix.columns], rows, "contract")


def _quantity(q: Quantity) -> str:
    parts = [f'<section id="{escape(q.anchor)}">', f"<h2>{escape(q.name)}</h2>"]
    if q.intro:
        parts.append(f"<p>{escape(q.intro)}</p>")
    facts = [f"<li><strong>{escape(f.label)}:</strong> {_rich(f.value)}</li>" for f in q.facts]
    if q.conventions:
        facts.append("<li><strong>Conventions:</strong><ul>" + "".join(f"<li>{escape(c)}</li>" for c in q.conventions) + "</ul></li>")
    if facts:
        parts.append("<ul>\n" + "\n".join(facts) + "\n</ul>")
    if q.show_claims:
        parts.append(_claims(q))
    parts.append("<h3>Conformance</h3>")
    if q.conformance:
        if q.conformance.undetermined:
            parts.append(f'<p class="note">{escape(UNDETERMINED_NOTE)}</p>')
        parts.append('<p class="note">Worst error in ULPs of the dtype in each cell; a failing cell links to its counterexample; '
                     '✦ third-party code.</p>')
        parts.append(svg.heatmap(q.conformance, f"heatmap-{q.anchor}", f"conformance of {q.name}",
                                 note="* some examples undetermined" if q.conformance.undetermined else ""))
    else:
        parts.append('<p class="note">No conformance results.</p>')
    if q.accuracy:
        parts.append('<h3>Accuracy grade</h3>\n<p class="note">Worst ULPs / allowed on the typical domain, per dtype '
                     '(value, gradient and masked properties; see <a href="#accuracy">Accuracy</a>).</p>\n' + _grades(q.accuracy))
    if q.contract:
        parts.append(_contract(q.contract))
    parts.append("</section>")
    return "\n".join(parts)


def _adapter(a: Adapter) -> list[str]:
    parts = [f"<h3>{escape(a.label)}</h3>", _facts(a.facts), f"<p>Verdict: <strong>{escape(a.verdict)}</strong> — {escape(a.counts)}</p>"]
    if a.findings:
        parts.append("<ul>" + "".join(f"<li>{f.mark} {', '.join(f'<code>{escape(n)}</code>' for n in f.properties)}: {escape(f.text)}</li>"
                                      for f in a.findings) + "</ul>")
    if a.example:
        more = ' (all counterexamples: <a href="#failures">Failures</a>)' if a.example_in_failures else ""
        parts.append(f"<p>Smallest input for <code>{escape(a.example_property)}</code>{more}:</p>")
        parts += _blocks(a.example)
    return parts


def _third_party(doc: Report) -> str:
    tp = doc.third_party
    parts = ['<h2 id="third-party-code">Third-party code</h2>', f"<p>{_rich(THIRD_PARTY_INTRO)}</p>"]
    if tp.link:
        parts.append('<p>Details, with a counterexample for each finding: <a href="thirdparty.html">thirdparty.html</a> '
                     '(<a href="thirdparty.md">Markdown</a>).</p>')
    if not tp.adapters:
        parts.append('<p class="note">No third-party code was audited.</p>')
    if tp.findings:
        rows = []
        for f in tp.findings:
            total = not f.quantity
            label = f"<strong>{escape(f.label)}</strong>" if total else _wb(f.label)
            counts = "".join(_td(f"<strong>{f.counts[k]}</strong>" if total else str(f.counts[k]),
                                 f"num {k}" if f.counts[k] and k != "known" else "num") for k in FINDING_KINDS)
            rows.append(f"<tr>{_td(label)}{_td(f'<code>{_wb(f.quantity)}</code>' if f.quantity else '')}{counts}</tr>")
        parts.append(f'<h3 id="findings-by-severity">Findings by severity</h3>\n<p class="note">{escape(FINDINGS_NOTE)}</p>\n'
                     + _table(["Adapter", "Quantity", *FINDING_HEADERS], rows, "findings"))
    if tp.stale:
        parts.append("<p>⚠ Rows of the known-deviations table (<code>impls/adapters/deviations.py</code>) that matched "
                     "nothing (the behaviour changed, or the row is wrong):</p><ul>"
                     + "".join(f"<li><code>{escape(k)}</code></li>" for k in tp.stale) + "</ul>")
    for adapter in tp.adapters:
        parts += _adapter(adapter)
    if tp.skipped:
        parts.append(f"<p>Not audited (library not installed): {escape(tp.skipped)}</p>")
    return "\n".join(parts)


def _failure(f: Failure) -> str:
    block = [f'<div class="failure" id="{escape(f.anchor)}">', f"<h4>{f.mark} {escape(f.label)} — {escape(f.property)}</h4>", _facts(f.facts)]
    if f.message:
        block.append(f"<p>Message:</p>\n{_pre(f.message)}")
    return "\n".join(block + _blocks(f.blocks) + ["</div>"])


def _failures(doc: Report) -> str:
    if not doc.failures:
        return '<h2 id="failures">Failures</h2>\n<p>No failing or erroring results.</p>'
    parts = ['<h2 id="failures">Failures</h2>', f"<p>{doc.failure_count} result(s) failed or raised an error.</p>"]
    for group in doc.failures:
        parts.append(f"<h3>Failures of {escape(group.quantity)}</h3>")
        if group.spec:
            parts.append(f"<p><strong>The spec:</strong> {_rich(group.spec)}</p>")
        parts += [_failure(f) for f in group.failures]
    return "\n".join(parts)

