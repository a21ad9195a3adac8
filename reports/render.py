"""Render a losscheck results dict as Markdown, self-contained HTML and strict JSON.

The results dict comes from the audit engine (see the schema in the project
docs). Rendering is tolerant: every optional field may be missing or None.

Public API:
    render_markdown(results) -> str       pure
    render_html(results) -> str           pure, no JavaScript, no network
    to_json(results) -> str               strict JSON (NaN/inf become strings)
    write_report(results, out_dir)        writes index.md, index.html, results.json
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

VERDICTS = ("holds", "fails", "error", "skipped", "deviates")
VERDICT_HEADERS = ("✓ holds", "✗ fails", "error", "– skipped", "≈ deviates")
CONTRACT_VERDICTS = VERDICTS[:4]  # conventions apply to conformance properties only
FAILING_VERDICTS = ("fails", "error")
GOOD_CLAIM_STATUSES = ("proved", "proved on instances", "held")
BAD_CLAIM_STATUSES = ("refuted", "failed")
CONTRACT_NOTE = "Contract checks are informational: they do not affect the exit status."
UNDETERMINED_NOTE = ("\"undetermined\": examples where the exact result and the definition with each step rounded "
                     "to the dtype disagree beyond the tolerance (the dtype's precision does not determine the "
                     "result there); a result between the two (a gradient: within the scale of its chain-rule terms, "
                     "which bounds both), never NaN, is accepted, and left out of the ULPs.")
DASH = "–"


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------

def write_report(results: dict, out_dir: str | Path, stem: str = "index") -> dict[str, Path]:
    """Write index.md, index.html and results.json atomically into out_dir
    (``stem="thirdparty"``: thirdparty.md, thirdparty.html, thirdparty.json).

    Returns {"index.md": path, "index.html": path, "results.json": path}.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = sanitize(results)
    contents = {
        f"{stem}.md": render_markdown(clean),
        f"{stem}.html": render_html(clean),
        "results.json" if stem == "index" else f"{stem}.json": to_json(clean),
    }
    paths: dict[str, Path] = {}
    for name, text in contents.items():
        paths[name] = out / name
        _atomic_write(paths[name], text)
    return paths


def sanitize(value: Any) -> Any:
    """Return a copy of value with NaN/inf floats replaced by "nan"/"inf"/"-inf"."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(key): sanitize(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize(item) for item in value]
    return value


def to_json(results: dict) -> str:
    """Strict JSON text of results (allow_nan=False always succeeds)."""
    text = json.dumps(sanitize(results), indent=2, ensure_ascii=False,
                      allow_nan=False, default=str)
    return text + "\n"


def _atomic_write(path: Path, text: str) -> None:
    """Write text to a temp file next to path, then os.replace it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------
# Reading the results dict (shared by both renderers)
# --------------------------------------------------------------------------

def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(item) for item in value)
    return str(value)


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _audits(results: dict) -> list[dict]:
    return [a for a in results.get("audits") or [] if isinstance(a, dict)]


def _results_of(audit: dict) -> list[dict]:
    return [r for r in audit.get("results") or [] if isinstance(r, dict)]


def _is_contract(result: dict) -> bool:
    return result.get("kind") == "contract"


def _count(results: list[dict]) -> Counter:
    return Counter(_text(r.get("verdict")) for r in results)


def _quantities(results: dict) -> dict[str, dict]:
    return {str(k): _mapping(v) for k, v in _mapping(results.get("quantities")).items()}


def _quantity_names(results: dict) -> list[str]:
    """Quantities in the given order, then any that only appear in audits."""
    names = list(_quantities(results))
    for audit in _audits(results):
        name = _text(audit.get("quantity"))
        if name and name not in names:
            names.append(name)
    return names


def _claims(quantity: dict) -> list[dict]:
    return [c for c in quantity.get("claims") or [] if isinstance(c, dict)]


def _number(value: Any) -> float | None:
    """A float from a number or a sanitised string ("inf", "nan"); else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return float(value)
    return None


def _fmt_number(value: Any) -> str:
    number = _number(value)
    if number is None:
        return _text(value)
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    text = f"{number:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


#: one line per severity (properties.severity), beside each finding
SEVERITY_TEXT = {
    "bug": "wrong beyond the practical tolerance, NaN, a crash or a wrong shape on the typical domain: fails the default gate",
    "accuracy": "correct but digits lost: beyond the rounding bound, within the practical tolerance (half the digits); "
                "fails only at --gate accuracy",
    "range": "fails only outside the typical domain (huge or tiny magnitudes, subnormals); fails only at --gate range",
}


def _fmt_ulps(value: Any) -> str:
    return f"{_fmt_number(value)} ulp" if value is not None else ""


def _cell(result: dict | None) -> tuple[str, str]:
    """(css class, text) of one matrix cell."""
    if result is None:
        return "na", DASH
    verdict = _text(result.get("verdict"))
    ulps = _fmt_ulps(result.get("max_ulps"))
    if verdict == "holds":
        undetermined = f" ({result['undetermined']} undetermined)" if result.get("undetermined") else ""
        return "holds", f"✓ {ulps}{undetermined}".strip()
    if verdict == "fails":
        severity = _text(result.get("severity"))
        return "fails", " ".join(t for t in ("✗", severity, ulps) if t) if result.get("kind") != "contract" else "✗"
    if verdict == "error":
        return "error", "error"
    if verdict == "skipped":
        return "skipped", DASH
    if verdict == "deviates":
        return "deviates", f"≈ {_text(result.get('conventions'))}".strip()
    return "na", verdict or "?"


def _summary_rows(results: dict) -> list[dict]:
    rows = []
    for audit in _audits(results):
        checks = _results_of(audit)
        rows.append({
            "label": _text(audit.get("label")),
            "quantity": _text(audit.get("quantity")),
            "framework": _text(audit.get("framework")),
            "device": _text(audit.get("device")),
            "third_party": bool(audit.get("third_party")),
            "conformance": _count([r for r in checks if not _is_contract(r)]),
            "contract": _count([r for r in checks if _is_contract(r)]),
        })
    return rows


def _overall(results: dict) -> tuple[str, str]:
    """(verdict word, explanation) for the whole run: the verdict is our implementations'
    (third-party findings are reported, not ours to pass or fail)."""
    rows = [row for row in _summary_rows(results) if not row["third_party"]]
    theirs = [row for row in _summary_rows(results) if row["third_party"]]
    if _is_thirdparty(results):  # thirdparty.*: the verdict is the audited code's
        rows, theirs = theirs, []
    conformance = sum((row["conformance"] for row in rows), Counter())
    tp = sum((row["conformance"] for row in theirs), Counter())
    claim_status = Counter(_text(c.get("status"))
                           for q in _quantities(results).values() for c in _claims(q))
    if conformance["fails"] or conformance["error"]:
        verdict = "FAIL"
    elif conformance["holds"]:
        verdict = "PASS"
    else:
        verdict = "NO RESULTS"
    severities = Counter(_text(r.get("severity")) for a in _audits(results)
                         if bool(a.get("third_party")) == _is_thirdparty(results)
                         for r in _results_of(a) if not _is_contract(r) and r.get("verdict") == "fails")
    explanation = (
        f"{len(rows)} audit target(s); conformance properties: "
        f"{conformance['holds']} hold, {conformance['fails']} fail "
        f"({severities['bug']} bug, {severities['accuracy']} accuracy, {severities['range']} range), "
        f"{conformance['error']} error, {conformance['skipped']} skipped. "
        f"Claims: {claim_status['refuted']} refuted, {claim_status['failed']} failed. "
        + (f"Third-party code ({len(theirs)} target(s), not in this verdict): {tp['holds']} hold, "
           f"{tp['deviates']} deviate by a declared convention, {tp['fails']} fail, {tp['error']} error. "
           if theirs else "")
        + CONTRACT_NOTE
    )
    return verdict, explanation


def _matrix(results: dict, quantity: str, contract: bool):
    """Columns (property names) and rows (label, [result or None per column])."""
    columns: list[str] = []
    rows: list[tuple[str, dict]] = []
    for audit in _audits(results):
        if _text(audit.get("quantity")) != quantity:
            continue
        cells = {}
        for result in _results_of(audit):
            if _is_contract(result) != contract:
                continue
            name = _text(result.get("property"))
            if name not in columns:
                columns.append(name)
            cells[name] = result
        rows.append((_text(audit.get("label")), cells))
    return columns, [(label, [cells.get(c) for c in columns]) for label, cells in rows]


def _failures(results: dict) -> list[tuple[dict, dict]]:
    return [(audit, result)
            for audit in _audits(results)
            for result in _results_of(audit)
            if result.get("verdict") in FAILING_VERDICTS]


def _counterexample_parts(counterexample: Any) -> list[tuple[str, str, str]]:
    """(label, text, code language) pieces of a counterexample."""
    if counterexample is None or counterexample == "" or counterexample == {}:
        return []
    if isinstance(counterexample, str):
        return [("Counterexample", counterexample, "text")]
    if not isinstance(counterexample, dict):
        return [("Counterexample", json.dumps(counterexample, ensure_ascii=False,
                                               default=str), "text")]
    labels = {"snippet": ("Counterexample (Python)", "python"), "inputs": ("Inputs", "text"),
              "expected": ("Expected", "text"), "got": ("Got", "text"),
              "replayed": ("Reproduced in a fresh interpreter", "text")}
    parts = []
    for key in list(labels) + [k for k in counterexample if k not in labels]:
        value = counterexample.get(key)
        if value is None or value == "":
            continue
        label, lang = labels.get(key, (key.capitalize(), "text"))
        if not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        parts.append((label, value, lang))
    return parts


def _per_implementation(claim: dict) -> list[tuple[str, str]]:
    return [(str(k), _text(v)) for k, v in _mapping(claim.get("per_implementation")).items()]


def _claim_class(status: str) -> str:
    if status in BAD_CLAIM_STATUSES:
        return "bad"
    if status in GOOD_CLAIM_STATUSES:
        return "good"
    return "neutral"


def _allowed_text(result: dict) -> str:
    max_ulps = _fmt_ulps(result.get("max_ulps")) or "n/a"
    allowed = _fmt_ulps(result.get("allowed_ulps"))
    return f"{max_ulps} (allowed {allowed})" if allowed else max_ulps


def _target_text(audit: dict) -> str:
    extras = [_text(audit.get(k)) for k in ("framework", "device") if audit.get(k)]
    if audit.get("third_party"):
        extras.append("third party")
    return ", ".join(extras)


THIRD_PARTY_INTRO = (
    "Adapters (`impls/adapters/`) present library code and the seeds' snippets in the catalogue's "
    "signatures and declare what they do differently on purpose. A conformance property that fails is "
    "run again with the declared conventions applied to the reference: **deviates** means the "
    "convention explains the difference (the counterexample shows it), **fails** means it does not. "
    "A convention maps arguments only, so it never explains a NaN, an overflow or a wrong gradient.")


def _title(results: dict) -> str:
    return "losscheck: third-party code" if _is_thirdparty(results) else "losscheck report"


def _is_thirdparty(results: dict) -> bool:
    """The results of ``losscheck audit-all`` (thirdparty.*), not the main report."""
    return results.get("kind") == "thirdparty"


def _third_party(results: dict) -> list[dict]:
    return [a for a in _audits(results) if a.get("third_party")]


def _tp_facts(audit: dict) -> list[tuple[str, str]]:
    """(label, text) facts about one adapter."""
    facts = [("Quantity", _text(audit.get("quantity"))), ("Source", _text(audit.get("source"))),
             ("Called as", _text(audit.get("note"))), ("Returns", _text(audit.get("output")))]
    fixed = _mapping(audit.get("fixed"))
    if fixed:
        facts.append(("Pinned", ", ".join(f"{_text(k)} = {_text(v)}" for k, v in fixed.items())
                      + " in every draw (the library has no such parameter)"))
    if audit.get("half") == "native":
        facts.append(("Half precision", "judged as computed natively (the dtype's own epsilon; the catalogue "
                                        "allows that or float32)"))
    if audit.get("differentiable") is False:
        facts.append(("Gradients", "none (not differentiable): gradient properties skipped"))
    for c in audit.get("conventions") or []:
        if isinstance(c, dict):
            facts.append(("Declared convention", f"{_text(c.get('name'))}: {_text(c.get('text'))}"))
    return [(k, v) for k, v in facts if v]


_DTYPE_DETAIL = re.compile(r": (?:[-+\d.e]+|inf) ULPs of \w+ > allowed [-+\d.e]+")


def _grouped(results: list[dict]) -> list[tuple[str, list[str], dict]]:
    """Results that report the same thing in several dtypes, as (message without the dtype's
    ULP figures, property names, first result)."""
    groups: dict[str, tuple[list[str], dict]] = {}
    for r in results:
        key = _DTYPE_DETAIL.sub("", _text(r.get("message")))
        known = _mapping(r.get("known"))
        if known:
            key += f" — known: {_text(known.get('reason'))}" + (f" ({_text(known.get('upstream'))})" if known.get("upstream") else "")
        groups.setdefault(key, ([], r))[0].append(_text(r.get("property")))
    return [(key, names, first) for key, (names, first) in groups.items()]


def _tp_findings(audit: dict) -> tuple[str, list[dict], list[dict]]:
    """(verdict line, conformance results not holding (fails/error), deviations)."""
    conf = [r for r in _results_of(audit) if not _is_contract(r)]
    counts = _count(conf)
    bad = [r for r in conf if r.get("verdict") in FAILING_VERDICTS]
    dev = [r for r in conf if r.get("verdict") == "deviates"]
    line = ", ".join(f"{counts[v]} {word}" for v, word in (("holds", "hold"), ("deviates", "deviate by a declared convention"),
                                                           ("fails", "fail"), ("error", "error"), ("skipped", "skipped"))
                     if counts[v])
    verdict = "fails" if bad else "deviates by a declared convention" if dev else "holds"
    return f"**{verdict}** — conformance: {line or 'nothing run'}", bad, dev


# --------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------

def _gh_slug(text: str) -> str:
    """GitHub-style heading anchor."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _md_code(value: Any) -> str:
    text = _text(value).replace("\n", " ")
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_block(value: Any, lang: str = "") -> str:
    text = _text(value).rstrip("\n")
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}"


def _md_cell(markdown: str) -> str:
    return markdown.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |",
             "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _md_key_values(mapping: dict) -> str:
    if not mapping:
        return "_not recorded_"
    return "\n".join(f"- **{key}:** {_text(value) if value is not None else 'none'}"
                     for key, value in mapping.items())


def render_markdown(results: dict) -> str:
    """The whole report as GitHub-flavoured Markdown."""
    results = _mapping(results)
    sections = [_md_header(results), _md_summary(results), _md_domain()]
    if _is_thirdparty(results):
        sections.append(_md_third_party(results, full=True))
        sections += [_md_quantity(results, name, claims=False) for name in _quantity_names(results)]
    else:
        sections += [_md_quantity(results, name) for name in _quantity_names(results)]
        sections.append(_md_third_party(results, full=False))
    sections.append(_md_failures(results))
    return "\n\n".join(sections) + "\n"


def _domain_rows() -> tuple[list[str], list[list[str]]]:
    """The typical domain (properties.domain) as table headers and rows of text."""
    from losscheck.properties import domain
    from losscheck.properties.dtypes import DTYPES as dtypes
    rows = [[r["kinds"]] + [f"0 or {r['bounds'][dt][0]:.3g} … {r['bounds'][dt][1]:.3g}" for dt in dtypes] + [r["reason"]]
            for r in domain.rows()]
    return ["Argument kind", *dtypes, "Why"], rows


def _severity_intro() -> str:
    return ("Every finding has a severity: " + "; ".join(f"**{k}**: {v}" for k, v in SEVERITY_TEXT.items())
            + ". The default gate is bug. Magnitudes of array entries (a masked entry's −inf and 0 are always typical); "
            "a result whose scale and returned value both lie below the smallest typical magnitude is a range finding.")


def _md_domain() -> str:
    headers, rows = _domain_rows()
    return "## Severities and the typical domain\n\n" + _severity_intro() + "\n\n" + _md_table(headers, [[_md_cell(c) for c in r] for r in rows])


def _html_domain() -> str:
    headers, rows = _domain_rows()
    intro = html.escape(_severity_intro()).replace("**", "")
    return ('<h2 id="domain">Severities and the typical domain</h2>' + f"<p>{intro}</p>"
            + _html_table(headers,
                          ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows]))


def _md_header(results: dict) -> str:
    names = _quantity_names(results)
    toc = ["[Summary](#summary)"] + [f"[{n}](#{_gh_slug(n)})" for n in names]
    toc.insert(1 if _is_thirdparty(results) else len(toc), "[Third-party code](#third-party-code)")
    toc.append(f"[Failures](#failures) ({len(_failures(results))})")
    return "\n\n".join([
        f"# {_title(results)}",
        f"Generated {_text(results.get('generated')) or 'at an unknown time'}"
        f" · losscheck {_text(results.get('losscheck_version')) or 'unknown version'}",
        "**Contents:** " + " · ".join(toc),
        "## Settings", _md_key_values(_mapping(results.get("settings"))),
        "## Environment", _md_key_values(_mapping(results.get("environment"))),
    ])


def _md_summary(results: dict) -> str:
    headers = ["Implementation", "Quantity", "Framework", "Device", *VERDICT_HEADERS, "contracts ✓/✗/error/–"]
    rows = []
    for row in _summary_rows(results):
        conf, con = row["conformance"], row["contract"]
        label = row["label"] + (" (third party)" if row["third_party"] else "")
        rows.append([label, _md_code(row["quantity"]), row["framework"], row["device"],
                     *(str(conf[v]) for v in VERDICTS),
                     "/".join(str(con[v]) for v in CONTRACT_VERDICTS)])
    verdict, explanation = _overall(results)
    table = _md_table(headers, rows) if rows else "_No audits were run._"
    return f"## Summary\n\n{table}\n\n**Overall: {verdict}** — {explanation}"


def _md_claim_status(status: str) -> str:
    if status in BAD_CLAIM_STATUSES:
        return f"❌ **{status.upper()}**"
    if status in GOOD_CLAIM_STATUSES:
        return f"✓ {status}"
    return status or DASH


def _md_claim_detail(claim: dict) -> str:
    detail = _text(claim.get("detail"))
    per_impl = _per_implementation(claim)
    if per_impl:
        marks = "; ".join(f"{impl}: **{st}**" if st in BAD_CLAIM_STATUSES else f"{impl}: {st}"
                          for impl, st in per_impl)
        detail = f"{detail} (per implementation: {marks})" if detail else marks
    return detail


def _md_claims(quantity: dict) -> str:
    claims = _claims(quantity)
    if not claims:
        return "### Claims\n\n_No claims recorded._"
    rows = [[_md_code(c.get("name")), _md_code(c.get("statement")), _text(c.get("kind")),
             _md_claim_status(_text(c.get("status"))), _md_claim_detail(c)] for c in claims]
    parts = ["### Claims", _md_table(["Claim", "Statement", "Kind", "Status", "Detail"], rows)]
    for claim in claims:
        pieces = _counterexample_parts(claim.get("counterexample"))
        if not pieces:
            continue
        status = _md_claim_status(_text(claim.get("status")))
        parts.append(f"**Counterexample to {_md_code(claim.get('name'))}** ({status}):")
        parts += [_md_block(text, lang) if label == "Counterexample"
                  else f"{label}:\n\n{_md_block(text, lang)}" for label, text, lang in pieces]
    return "\n\n".join(parts)


def _md_matrix(results: dict, name: str, contract: bool) -> str:
    columns, rows = _matrix(results, name, contract)
    if not columns:
        return ""
    body = [[label] + [_cell(r)[1] for r in cells] for label, cells in rows]
    title = "### Contract checks\n\n_" + CONTRACT_NOTE + "_" if contract else "### Conformance"
    if _any_undetermined(rows):
        title += "\n\n_" + UNDETERMINED_NOTE + "_"
    return f"{title}\n\n{_md_table(['Implementation'] + columns, body)}"


def _any_undetermined(rows) -> bool:
    return any(r and r.get("undetermined") for _, cells in rows for r in cells)


def _md_quantity(results: dict, name: str, claims: bool = True) -> str:
    quantity = _quantities(results).get(name, {})
    lines = [f"## {name}"]
    intro = _text(quantity.get("summary"))
    if quantity.get("family"):
        intro += f" (family: {_text(quantity.get('family'))})"
    if intro.strip():
        lines.append(intro.strip())
    facts = [f"- **{label}:** {_md_code(quantity[key])}"
             for key, label in (("formula", "Formula"), ("signature", "Signature"))
             if quantity.get(key)]
    if quantity.get("reference"):
        facts.append(f"- **Reference:** {_text(quantity['reference'])}")
    conventions = [c for c in quantity.get("conventions") or [] if c]
    if conventions:
        facts.append("- **Conventions:**\n" + "\n".join(f"  - {_text(c)}" for c in conventions))
    if facts:
        lines.append("\n".join(facts))
    if claims:
        lines.append(_md_claims(quantity))
    conformance = _md_matrix(results, name, contract=False)
    lines.append(conformance or "### Conformance\n\n_No conformance results._")
    contract = _md_matrix(results, name, contract=True)
    if contract:
        lines.append(contract)
    return "\n\n".join(lines)


def _md_third_party(results: dict, full: bool) -> str:
    """Per adapter: what it declares, its verdict and findings; ``full``: with the smallest
    counterexample (thirdparty.md), else a link to it (index.md)."""
    parts = ["## Third-party code", THIRD_PARTY_INTRO]
    if not full:
        parts.append("Details, with a counterexample for each finding: [thirdparty.md](thirdparty.md) "
                     "([HTML](thirdparty.html)).")
    audits = _third_party(results)
    if not audits:
        parts.append("_No third-party code was audited._")
    stale = results.get("stale_deviations") or []
    if stale:
        parts.append("⚠ Rows of the known-deviations table (`impls/adapters/deviations.py`) that matched nothing "
                     "(the behaviour changed, or the row is wrong):\n\n" + "\n".join(f"- {_md_code(k)}" for k in stale))
    for audit in audits:
        line, bad, dev = _tp_findings(audit)
        parts.append(f"### {_text(audit.get('label'))}")
        parts.append("\n".join(f"- **{k}:** {v}" for k, v in _tp_facts(audit)))
        parts.append(f"Verdict: {line}")
        items = [f"- {mark} {', '.join(map(_md_code, names))}: {text}"
                 for mark, rs in (("✗", bad), ("≈", dev)) for text, names, _ in _grouped(rs)]
        if items:
            parts.append("\n".join(items))
        if (bad or dev) and full:
            first = (bad or dev)[0]
            parts.append(f"Smallest input for {_md_code(first.get('property'))}"
                         + (" (all counterexamples: [Failures](#failures))" if bad else "") + ":")
            parts += [f"{label}:\n\n{_md_block(text, lang)}"
                      for label, text, lang in _counterexample_parts(first.get("counterexample"))]
    skipped = [s for s in results.get("skipped_adapters") or [] if isinstance(s, dict)]
    if skipped:
        parts.append("Not audited (library not installed): " + ", ".join(
            f"{_text(s.get('adapter'))} ({_text(s.get('missing'))})" for s in skipped))
    return "\n\n".join(parts)


def _failure_facts(results: dict, audit: dict, result: dict, code, esc=lambda v: _text(v)) -> list[tuple[str, str]]:
    """(label, text) facts of one failure, for Markdown (``code`` = _md_code) or HTML (``esc`` escapes):
    the target, the verdict, the error, what the property checks and what the spec says, and the
    known-deviations row that explains it — the paragraph a maintainer can paste into a bug report."""
    kind = _text(result.get("kind")) + (" (informational)" if result.get("kind") == "contract" else "")
    spec = _quantities(results).get(_text(audit.get("quantity")), {})
    facts = [("Target", f"{code(audit.get('target'))} ({esc(_target_text(audit))}), quantity {code(audit.get('quantity'))}"),
             ("Kind", f"{esc(kind)} · Verdict: {esc(result.get('verdict'))} · Examples: {esc(result.get('examples')) or 'n/a'}"),
             ("Max error", esc(_allowed_text(result)))]
    if result.get("severity"):
        facts.append(("Severity", esc(result.get("severity")) + " (" + esc(SEVERITY_TEXT.get(_text(result.get("severity")), "")) + ")"))
    if result.get("off_domain"):
        facts.append(("Outside the typical domain", esc(result.get("off_domain"))))
    for other in result.get("others") or []:
        facts.append((f"Also ({esc(other.get('severity'))})", esc(other.get("message"))))
    shrunk = {"time": "not fully shrunk (the shrink's time budget ran out)",
              "calls": "not fully shrunk (the shrink's call budget ran out)",
              "off": "not shrunk (as found)"}.get(_text(result.get("shrunk")))
    if shrunk:
        facts.append(("Counterexample", esc(shrunk) + (f" · {esc(result.get('calls'))} calls" if result.get("calls") else "")))
    if result.get("doc"):
        facts.append(("What the property checks", esc(result.get("doc"))))
    if spec.get("formula"):
        conv = "; ".join(_text(c) for c in spec.get("conventions") or [] if c)
        facts.append(("The spec", code(spec.get("formula")) + (f" ({esc(conv)})" if conv else "")))
    known = _mapping(result.get("known"))
    if known:
        facts.append(("Known", esc(known.get("reason")) + (f" ({esc(known.get('upstream'))})" if known.get("upstream") else "")))
    return facts


def _md_failures(results: dict) -> str:
    failures = _failures(results)
    if not failures:
        return "## Failures\n\nNo failing or erroring results."
    parts = ["## Failures", f"{len(failures)} result(s) failed or raised an error."]
    for audit, result in failures:
        verdict = _text(result.get("verdict"))
        kind = _text(result.get("kind"))
        if kind == "contract":
            kind += " (informational)"
        mark = "✗" if verdict == "fails" else "error:"
        parts.append(f"### {mark} {_text(audit.get('label'))} — {_text(result.get('property'))}")
        parts.append("\n".join(f"- **{label}:** {text}" for label, text in _failure_facts(results, audit, result, _md_code)))
        if result.get("message"):
            parts.append(f"Message:\n\n{_md_block(result['message'], 'text')}")
        for label, text, lang in _counterexample_parts(result.get("counterexample")):
            parts.append(f"{label}:\n\n{_md_block(text, lang)}")
    return "\n\n".join(parts)


# --------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       max-width: 1200px; margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; }
td.holds { background: #d7f0d7; }
td.fails { background: #f6c6c6; }
td.error { background: #f3b08f; }
td.skipped { background: #e2e2e2; color: #555; }
td.deviates { background: #fff3c4; }
td.na { background: #f7f7f7; color: #999; }
tr.refuted td, tr.failed td { background: #fdecea; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: .6em; overflow-x: auto; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.badge { display: inline-block; padding: .05em .55em; border-radius: .8em;
         font-size: .85em; font-weight: 700; color: #fff; white-space: nowrap; }
.badge.good { background: #2e7d32; }
.badge.bad { background: #c62828; }
.badge.neutral { background: #777; }
.overall { font-size: 1.1em; padding: .5em .8em; border-radius: .3em; }
.overall.pass { background: #d7f0d7; }
.overall.fail { background: #f6c6c6; }
.overall.none { background: #e2e2e2; }
.note { color: #555; font-style: italic; }
.meta { color: #555; }
nav.toc { background: #fafafa; border: 1px solid #ddd; padding: .3em 1em; display: inline-block; }
.failure { border-left: 4px solid #c62828; padding-left: 1em; margin: 1.5em 0; }
"""


def _h(value: Any) -> str:
    return html.escape(_text(value))


def _html_ids(names: list[str], prefix: str) -> dict[str, str]:
    """Unique, HTML-safe anchor ids for names."""
    ids: dict[str, str] = {}
    for name in names:
        base = prefix + (re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "x")
        candidate, n = base, 1
        while candidate in ids.values():
            n += 1
            candidate = f"{base}-{n}"
        ids[name] = candidate
    return ids


def _td(content_html: str, cls: str = "") -> str:
    return f'<td class="{cls}">{content_html}</td>' if cls else f"<td>{content_html}</td>"


def _html_table(headers: list[str], rows: list[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    return (f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(rows) + "\n</tbody>\n</table>")


def _html_pre(value: Any, lang: str = "") -> str:
    cls = f' class="language-{html.escape(lang)}"' if lang else ""
    return f"<pre><code{cls}>{_h(_text(value).rstrip(chr(10)))}</code></pre>"


def _html_key_values(mapping: dict) -> str:
    if not mapping:
        return '<p class="note">not recorded</p>'
    rows = [f"<tr><th>{_h(k)}</th>{_td(_h(v) if v is not None else 'none')}</tr>"
            for k, v in mapping.items()]
    return "<table>\n" + "\n".join(rows) + "\n</table>"


def render_html(results: dict) -> str:
    """The whole report as one self-contained HTML page (inline CSS, no scripts)."""
    results = _mapping(results)
    ids = _html_ids(_quantity_names(results), "q-")
    body = [_html_header(results, ids), _html_summary(results), _html_domain()]
    if _is_thirdparty(results):
        body.append(_html_third_party(results, full=True))
        body += [_html_quantity(results, name, ids[name], claims=False) for name in ids]
    else:
        body += [_html_quantity(results, name, ids[name]) for name in ids]
        body.append(_html_third_party(results, full=False))
    body.append(_html_failures(results))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(_title(results))}</title>\n"
            f"<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def _html_header(results: dict, ids: dict[str, str]) -> str:
    toc = ['<li><a href="#summary">Summary</a></li>']
    toc += [f'<li><a href="#{anchor}">{_h(name)}</a></li>' for name, anchor in ids.items()]
    toc.insert(1 if _is_thirdparty(results) else len(toc), '<li><a href="#third-party-code">Third-party code</a></li>')
    toc.append(f'<li><a href="#failures">Failures ({len(_failures(results))})</a></li>')
    generated = _text(results.get("generated")) or "at an unknown time"
    version = _text(results.get("losscheck_version")) or "unknown version"
    return "\n".join([
        f"<h1>{html.escape(_title(results))}</h1>",
        f'<p class="meta">Generated {html.escape(generated)} · losscheck {html.escape(version)}</p>',
        '<nav class="toc"><strong>Contents</strong>\n<ul>\n' + "\n".join(toc) + "\n</ul></nav>",
        "<h2>Settings</h2>", _html_key_values(_mapping(results.get("settings"))),
        "<h2>Environment</h2>", _html_key_values(_mapping(results.get("environment"))),
    ])


def _html_summary(results: dict) -> str:
    headers = ["Implementation", "Quantity", "Framework", "Device", *VERDICT_HEADERS, "contracts ✓/✗/error/–"]
    rows = []
    for row in _summary_rows(results):
        conf, con = row["conformance"], row["contract"]
        label = _h(row["label"]) + (" <em>(third party)</em>" if row["third_party"] else "")
        counts = [_td(str(conf[v]), f"num {v}" if conf[v] else "num") for v in VERDICTS]
        rows.append("<tr>" + _td(label) + _td(f"<code>{_h(row['quantity'])}</code>")
                    + _td(_h(row["framework"])) + _td(_h(row["device"])) + "".join(counts)
                    + _td(html.escape("/".join(str(con[v]) for v in CONTRACT_VERDICTS)), "num") + "</tr>")
    verdict, explanation = _overall(results)
    cls = {"PASS": "pass", "FAIL": "fail"}.get(verdict, "none")
    table = _html_table(headers, rows) if rows else '<p class="note">No audits were run.</p>'
    return (f'<h2 id="summary">Summary</h2>\n{table}\n'
            f'<p class="overall {cls}"><strong>Overall: {verdict}</strong> — '
            f"{html.escape(explanation)}</p>")


def _html_badge(status: str) -> str:
    cls = _claim_class(status)
    text = status.upper() if cls == "bad" else status or DASH
    return f'<span class="badge {cls}">{html.escape(text)}</span>'


def _html_claim_detail(claim: dict) -> str:
    detail = _h(claim.get("detail"))
    per_impl = _per_implementation(claim)
    if per_impl:
        items = "".join(f"<li>{_h(impl)}: {_html_badge(st)}</li>" for impl, st in per_impl)
        detail += f"<ul>{items}</ul>"
    return detail


def _html_claims(quantity: dict) -> str:
    claims = _claims(quantity)
    if not claims:
        return '<h3>Claims</h3>\n<p class="note">No claims recorded.</p>'
    rows, extras = [], []
    for claim in claims:
        status = _text(claim.get("status"))
        row_cls = f' class="{html.escape(status)}"' if status in BAD_CLAIM_STATUSES else ""
        rows.append(f"<tr{row_cls}>" + _td(f"<code>{_h(claim.get('name'))}</code>")
                    + _td(f"<code>{_h(claim.get('statement'))}</code>")
                    + _td(_h(claim.get("kind"))) + _td(_html_badge(status))
                    + _td(_html_claim_detail(claim)) + "</tr>")
        pieces = _counterexample_parts(claim.get("counterexample"))
        if pieces:
            extras.append(f"<p><strong>Counterexample to <code>{_h(claim.get('name'))}</code></strong> "
                          f"{_html_badge(status)}</p>")
            extras += [_html_pre(text, lang) if label == "Counterexample"
                       else f"<p>{html.escape(label)}:</p>\n{_html_pre(text, lang)}"
                       for label, text, lang in pieces]
    table = _html_table(["Claim", "Statement", "Kind", "Status", "Detail"], rows)
    return "\n".join(["<h3>Claims</h3>", table] + extras)


def _html_matrix(results: dict, name: str, contract: bool) -> str:
    columns, rows = _matrix(results, name, contract)
    if not columns:
        return ""
    body = []
    for label, cells in rows:
        tds = "".join(_td(html.escape(text), cls) for cls, text in map(_cell, cells))
        body.append(f"<tr><th>{_h(label)}</th>{tds}</tr>")
    table = _html_table(["Implementation"] + columns, body)
    if contract:
        return f'<h3>Contract checks</h3>\n<p class="note">{html.escape(CONTRACT_NOTE)}</p>\n{table}'
    note = f'<p class="note">{html.escape(UNDETERMINED_NOTE)}</p>\n' if _any_undetermined(rows) else ""
    return f"<h3>Conformance</h3>\n{note}{table}"


def _html_quantity(results: dict, name: str, anchor: str, claims: bool = True) -> str:
    quantity = _quantities(results).get(name, {})
    parts = [f'<section id="{anchor}">', f"<h2>{_h(name)}</h2>"]
    intro = _h(quantity.get("summary"))
    if quantity.get("family"):
        intro += f" (family: {_h(quantity.get('family'))})"
    if intro.strip():
        parts.append(f"<p>{intro.strip()}</p>")
    facts = [f"<li><strong>{label}:</strong> <code>{_h(quantity[key])}</code></li>"
             for key, label in (("formula", "Formula"), ("signature", "Signature"))
             if quantity.get(key)]
    if quantity.get("reference"):
        facts.append(f"<li><strong>Reference:</strong> {_h(quantity['reference'])}</li>")
    conventions = [c for c in quantity.get("conventions") or [] if c]
    if conventions:
        items = "".join(f"<li>{_h(c)}</li>" for c in conventions)
        facts.append(f"<li><strong>Conventions:</strong><ul>{items}</ul></li>")
    if facts:
        parts.append("<ul>\n" + "\n".join(facts) + "\n</ul>")
    if claims:
        parts.append(_html_claims(quantity))
    parts.append(_html_matrix(results, name, contract=False)
                 or '<h3>Conformance</h3>\n<p class="note">No conformance results.</p>')
    parts.append(_html_matrix(results, name, contract=True))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _html_third_party(results: dict, full: bool) -> str:
    intro = html.escape(THIRD_PARTY_INTRO).replace("`impls/adapters/`", "<code>impls/adapters/</code>")
    intro = re.sub(r"\*\*(\w[^*]*)\*\*", r"<strong>\1</strong>", intro)
    parts = ['<h2 id="third-party-code">Third-party code</h2>', f"<p>{intro}</p>"]
    if not full:
        parts.append('<p>Details, with a counterexample for each finding: <a href="thirdparty.html">thirdparty.html</a> '
                     '(<a href="thirdparty.md">Markdown</a>).</p>')
    audits = _third_party(results)
    if not audits:
        parts.append('<p class="note">No third-party code was audited.</p>')
    stale = results.get("stale_deviations") or []
    if stale:
        parts.append("<p>⚠ Rows of the known-deviations table (<code>impls/adapters/deviations.py</code>) that matched "
                     "nothing (the behaviour changed, or the row is wrong):</p><ul>"
                     + "".join(f"<li><code>{_h(k)}</code></li>" for k in stale) + "</ul>")
    for audit in audits:
        line, bad, dev = _tp_findings(audit)
        line = re.sub(r"\*\*(.*?)\*\*", r"<strong>\1</strong>", html.escape(line))
        facts = "".join(f"<li><strong>{html.escape(k)}:</strong> {html.escape(v)}</li>" for k, v in _tp_facts(audit))
        items = [f"<li>{mark} {', '.join(f'<code>{_h(n)}</code>' for n in names)}: {_h(text)}</li>"
                 for mark, rs in (("✗", bad), ("≈", dev)) for text, names, _ in _grouped(rs)]
        parts += [f"<h3>{_h(audit.get('label'))}</h3>", f"<ul>{facts}</ul>", f"<p>Verdict: {line}</p>"]
        if items:
            parts.append(f"<ul>{''.join(items)}</ul>")
        if (bad or dev) and full:
            first = (bad or dev)[0]
            more = ' (all counterexamples: <a href="#failures">Failures</a>)' if bad else ""
            parts.append(f"<p>Smallest input for <code>{_h(first.get('property'))}</code>{more}:</p>")
            parts += [f"<p>{html.escape(label)}:</p>\n{_html_pre(text, lang)}"
                      for label, text, lang in _counterexample_parts(first.get("counterexample"))]
    skipped = [s for s in results.get("skipped_adapters") or [] if isinstance(s, dict)]
    if skipped:
        parts.append("<p>Not audited (library not installed): " + html.escape(", ".join(
            f"{_text(s.get('adapter'))} ({_text(s.get('missing'))})" for s in skipped)) + "</p>")
    return "\n".join(parts)


def _html_failures(results: dict) -> str:
    failures = _failures(results)
    if not failures:
        return '<h2 id="failures">Failures</h2>\n<p>No failing or erroring results.</p>'
    parts = ['<h2 id="failures">Failures</h2>',
             f"<p>{len(failures)} result(s) failed or raised an error.</p>"]
    for audit, result in failures:
        verdict = _text(result.get("verdict"))
        kind = _text(result.get("kind"))
        if kind == "contract":
            kind += " (informational)"
        mark = "✗" if verdict == "fails" else "error:"
        facts = [f"<li><strong>{html.escape(label)}:</strong> {text}</li>"
                 for label, text in _failure_facts(results, audit, result, lambda v: f"<code>{_h(v)}</code>", _h)]
        block = ['<div class="failure">',
                 f"<h3>{mark} {_h(audit.get('label'))} — {_h(result.get('property'))}</h3>",
                 "<ul>\n" + "\n".join(facts) + "\n</ul>"]
        if result.get("message"):
            block.append(f"<p>Message:</p>\n{_html_pre(result['message'])}")
        block += [f"<p>{html.escape(label)}:</p>\n{_html_pre(text, lang)}"
                  for label, text, lang in _counterexample_parts(result.get("counterexample"))]
        block.append("</div>")
        parts.append("\n".join(block))
    return "\n".join(parts)
