"""Build the document (reports/document.py) from a results dict.

:func:`build` reads the dict that ``reports.build.build_results`` (and ``reports.thirdparty``)
assemble — tolerantly: every optional field may be missing or None — and decides every fact the
report states once: counts, verdicts, cell texts and colours (a cell's ``tone``), anchors, which
links exist.  It reads fields, never message text.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections import Counter
from typing import Any

from . import speed
from .document import (
    CONTRACT_NOTE,
    DASH,
    FAILING_VERDICTS,
    FINDING_KINDS,
    GRADED,
    NA,
    NO_GRADE,
    SEVERITIES,
    SEVERITY_TEXT,
    TONES,
    VERDICTS,
    Adapter,
    Block,
    Cell,
    Claim,
    Domain,
    Fact,
    Failure,
    FailureGroup,
    Finding,
    FindingCount,
    Grade,
    GradeRow,
    Grades,
    Matrix,
    Overall,
    Quantity,
    Report,
    Rich,
    Row,
    Span,
    Speed,
    SummaryRow,
    ThirdParty,
    code,
    rich,
    strong,
    text,
)


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _dicts(value: Any) -> list[dict]:
    return [item for item in value or [] if isinstance(item, dict)] if isinstance(value, (list, tuple)) else []


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


def fmt_number(value: Any) -> str:
    number = _number(value)
    if number is None:
        return text(value)
    if math.isnan(number) or math.isinf(number):
        return "nan" if math.isnan(number) else "inf" if number > 0 else "-inf"
    out = f"{number:.3g}"
    if "e" in out:
        mantissa, exponent = out.split("e")
        out = f"{mantissa}e{int(exponent)}"
    return out


def fmt_ulps(value: Any) -> str:
    return f"{fmt_number(value)} ulp" if value is not None else ""


def html_ids(names: list[str], prefix: str) -> dict[str, str]:
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


def _qname(audit: dict) -> str:
    return text(audit.get("quantity")) or "(no quantity)"


def _is_contract(result: dict) -> bool:
    return result.get("kind") == "contract"


def _count(results: list[dict]) -> dict[str, int]:
    counts = Counter(text(r.get("verdict")) for r in results)
    return {verdict: counts[verdict] for verdict in VERDICTS}


def _shorten(value: str, limit: int = 80) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[:limit - 1].rstrip() + "…"


def _cell(result: dict, label: str, anchor: str) -> Cell:
    """One implementation's result for one property (``anchor``: its failure block's id)."""
    verdict = text(result.get("verdict"))
    ulps = fmt_number(result.get("max_ulps")) if result.get("max_ulps") is not None else ""
    allowed = fmt_ulps(result.get("allowed_ulps"))
    where = f"{label} · {text(result.get('property'))}: "
    if verdict == "holds" and _is_contract(result):  # a contract check measures no error
        return Cell("holds", "✓", "✓", where + "holds")
    if verdict == "holds":
        undetermined = f" ({result['undetermined']} undetermined)" if result.get("undetermined") else ""
        shown = f"✓ {ulps} ulp" if ulps else "✓"
        return Cell("holds", shown + undetermined, (ulps or "✓") + ("*" if undetermined else ""),
                    where + "holds" + (f", worst {ulps} ulp" if ulps else "") + (f" (allowed {allowed})" if allowed else "")
                    + undetermined)
    if verdict == "fails" and _is_contract(result):
        what = _mapping(result.get("counterexample")).get("got") or result.get("message") or "fails"
        return Cell("fails", f"✗ {_shorten(text(what))}", "✗", where + f"fails: {text(what)}", anchor)
    if verdict == "fails":
        severity = text(result.get("severity"))
        tone = severity if severity in SEVERITIES else "fails"
        shown = " ".join(t for t in ("✗", severity, f"{ulps} ulp" if ulps else "") if t)
        return Cell(tone, shown, ulps or "✗",
                    where + f"fails ({severity or 'no severity recorded'})" + (f", worst {ulps} ulp" if ulps else "")
                    + (f" (allowed {allowed})" if allowed else ""), anchor)
    if verdict == "error":
        return Cell("error", "error", "error", where + "error: " + _shorten(text(result.get("message")), 200), anchor)
    if verdict == "skipped":
        return Cell("skipped", DASH, DASH, where + "skipped" + (f": {text(result.get('message'))}" if result.get("message") else ""))
    if verdict == "deviates":
        conventions = text(result.get("conventions"))
        return Cell("deviates", f"≈ {conventions}".strip(), "≈",
                    where + f"deviates by the declared convention(s) {conventions}" + (f", worst {ulps} ulp against the spec" if ulps else ""))
    return Cell("na", verdict or "?", verdict or "?", where + (verdict or "no verdict"))


def _matrix(audits: list[dict], quantity: str, contract: bool, anchors: dict[int, str]) -> Matrix:
    columns: list[str] = []
    rows: list[tuple[dict, dict[str, dict]]] = []
    for audit in audits:
        if _qname(audit) != quantity:
            continue
        cells = {}
        for result in _dicts(audit.get("results")):
            if _is_contract(result) != contract:
                continue
            name = text(result.get("property"))
            if name not in columns:
                columns.append(name)
            cells[name] = result
        rows.append((audit, cells))
    out = []
    for audit, cells in rows:
        label = text(audit.get("label"))
        found = [cells.get(c) for c in columns]
        out.append(Row(label, tuple(_cell(r, label, anchors.get(id(r), "")) if r is not None else NA for r in found),
                       third_party=bool(audit.get("third_party"))))
    undetermined = any(r.get("undetermined") for _, cells in rows for r in cells.values()) and not contract
    return Matrix(tuple(columns), tuple(out), undetermined)


def _aggregate(results: list[dict], title: str) -> Cell:
    """One quantity's conformance results on one implementation (or on its third-party adapters), as
    an overview cell: the worst tone, the count of that kind."""
    conf = [r for r in results if not _is_contract(r)]
    if not conf:
        return NA
    tones = Counter()
    for r in conf:
        verdict = text(r.get("verdict"))
        if verdict == "fails":
            tones[text(r.get("severity")) if r.get("severity") in SEVERITIES else "fails"] += 1
        elif verdict in TONES:
            tones[verdict] += 1
    worst = min(tones, key=TONES.index, default="na")
    findings = sum(n for tone, n in tones.items() if tone in ("bug", "error", "fails", "accuracy", "range"))
    counts = ", ".join(f"{n} {tone}" for tone, n in sorted(tones.items(), key=lambda kv: TONES.index(kv[0])))
    if worst == "holds":
        return Cell("holds", f"✓ {tones['holds']}", f"✓ {tones['holds']}", f"{title}: {counts}")
    if worst in ("skipped", "na"):
        return Cell(worst, DASH, DASH, f"{title}: {counts}")
    if worst == "deviates":
        return Cell("deviates", f"≈ {tones['deviates']}", f"≈ {tones['deviates']}", f"{title}: {counts}")
    more = findings - tones[worst]
    short = f"{tones[worst]} {worst}" + (f" +{more}" if more else "")
    return Cell(worst, "✗ " + ", ".join(f"{tones[t]} {t}" for t in TONES if t in tones and t not in ("holds", "skipped", "deviates", "na")),
                short, f"{title}: {counts}")


def _overview(audits: list[dict], names: list[str], anchors: dict[str, str]) -> Matrix:
    """Quantities × implementations (ours by label; third-party adapters in one column)."""
    labels: list[str] = []
    for audit in audits:
        label = "third party" if audit.get("third_party") else text(audit.get("label"))
        if label not in labels:
            labels.append(label)
    if "third party" in labels:  # last
        labels.remove("third party")
        labels.append("third party")
    rows = []
    for name in names:
        mine = [a for a in audits if _qname(a) == name]
        if not mine:
            continue
        cells = []
        for label in labels:
            chosen = [a for a in mine if (label == "third party") == bool(a.get("third_party"))
                      and (label == "third party" or text(a.get("label")) == label)]
            who = label if label != "third party" else f"{len(chosen)} third-party adapter(s)"
            cells.append(_aggregate([r for a in chosen for r in _dicts(a.get("results"))], f"{name} · {who}")
                         if chosen else NA)
        rows.append(Row(name, tuple(cells), anchors.get(name, "")))
    return Matrix(tuple(labels), tuple(rows))


# --------------------------------------------------------------------------
# The accuracy grade: implementations × dtypes, the worst ULPs on the typical domain
# --------------------------------------------------------------------------

def _dtypes() -> tuple[str, ...]:
    from losscheck.properties.dtypes import DTYPES
    return DTYPES


def _graded(result: dict) -> str:
    """The dtype of a result the accuracy grade reads (``value[dt]``, ``gradient[dt]``,
    ``masked[dt]``: the typical domain), "" for any other."""
    found = re.fullmatch(r"(\w+)\[(\w+)\]", text(result.get("property")))
    return found.group(2) if found and found.group(1) in GRADED and not _is_contract(result) else ""


def _grade(entries: list[tuple[str, dict]], who: str, anchors: dict[int, str]) -> Grade:
    """The grade of ``entries`` ((what, result): the results of one implementation in one dtype):
    the worst error in ULPs on the typical domain and the allowed bound of the result that has it,
    coloured by the worst finding.  A failure outside the typical domain (``off_domain``) does not
    count; a deviation by a declared convention is measured against another convention: not graded."""
    measured: list[tuple[float, str, dict]] = []
    toned: list[tuple[str, dict]] = []
    notes: list[str] = []
    off: list[dict] = []
    deviates = undetermined = 0
    for what, r in entries:
        verdict = text(r.get("verdict"))
        if verdict == "fails" and r.get("off_domain"):
            off.append(r)
            notes.append(f"{what} fails outside the typical domain ({text(r.get('off_domain'))}): not counted")
            continue
        if verdict == "holds":
            toned.append(("holds", r))
        elif verdict == "fails":
            toned.append((text(r.get("severity")) if r.get("severity") in SEVERITIES else "fails", r))
        elif verdict == "error":
            toned.append(("error", r))
            notes.append(f"{what} raised an error")
            continue
        elif verdict == "deviates":
            deviates += 1
            notes.append(f"{what} deviates by a declared convention: not graded")
            continue
        else:  # skipped, or no verdict
            continue
        ulps = _number(r.get("max_ulps"))
        if ulps is not None:
            measured.append((math.inf if math.isnan(ulps) else ulps, what, r))
        undetermined += int(_number(r.get("undetermined")) or 0)
    where = f"{who}: "
    if not toned:
        if off:  # every finding lies outside the typical domain, and nothing beyond the bound was found on it
            bound = max((b for b in (_number(r.get("allowed_ulps")) for r in off) if b is not None), default=None)
            value = f"≤ {fmt_number(bound)}" if bound is not None else "✓"
            return Grade("holds", value, "", f"✓ {value}", where + "within the allowed bound on the typical domain; " + "; ".join(notes))
        if deviates:
            return Grade("deviates", "≈", "", "≈", where + "; ".join(notes))
        return NO_GRADE
    tone = min((t for t, _ in toned), key=TONES.index)
    worst_failing = next((r for t, r in toned if t == tone and t != "holds"), None)
    anchor = anchors.get(id(worst_failing), "") if worst_failing is not None else ""
    measured.sort(key=lambda m: -m[0])
    if tone == "error":
        value, allowed = "error", ""
    elif measured:
        top = measured[0][2]
        value = fmt_number(top.get("max_ulps"))
        # the bound of the result that has the worst error; where it has none (a NaN, a crash: 0), the cell's widest
        bounds = [b for b in (_number(r.get("allowed_ulps")) for _, _, r in measured) if b is not None and b > 0]
        bound = _number(top.get("allowed_ulps"))
        bound = bound if bound is not None and bound > 0 else max(bounds, default=None)
        allowed = fmt_number(bound) if bound is not None else ""
    else:
        value, allowed = ("✓" if tone == "holds" else tone), ""
    mark = "✓" if tone == "holds" else "error" if tone == "error" else f"✗ {tone}"
    shown = mark if value in (mark, "error") else f"{mark} {value}"
    line = shown + (f" / {allowed}" if allowed else "")
    parts = [f"{what} {fmt_number(r.get('max_ulps'))} ulp" + (f" (allowed {fmt_number(r.get('allowed_ulps'))})"
                                                             if (_number(r.get("allowed_ulps")) or 0) > 0 else "")
             for _, what, r in measured[:6]]
    if len(measured) > 6:
        parts.append(f"{len(measured) - 6} more")
    head = {"holds": "holds", "error": "error"}.get(tone, f"fails ({tone})")
    title = (where + head + (f", worst {value} ulp" if measured and tone != "error" else "")
             + (f" (allowed {allowed} ulp)" if allowed and tone != "error" else "")
             + (" — " + ", ".join(parts) if parts else "") + ("; " + "; ".join(notes) if notes else "")
             + (f" ({undetermined} undetermined examples left out of the ULPs)" if undetermined else ""))
    return Grade(tone, value, allowed, line, title, anchor)


def _grades(rows: list[tuple[str, bool, list[tuple[str, dict]]]], anchors: dict[int, str]) -> Grades:
    """rows: (label, third party, [(what, result)]) → implementations × dtypes."""
    dtypes = _dtypes()
    out = []
    for label, third_party, entries in rows:
        out.append(GradeRow(label, tuple(_grade([(w, r) for w, r in entries if _graded(r) == dt], f"{label} · {dt}", anchors)
                                         for dt in dtypes), third_party))
    return Grades(dtypes, tuple(out))


def _quantity_grades(audits: list[dict], quantity: str, anchors: dict[int, str]) -> Grades:
    return _grades([(text(a.get("label")), bool(a.get("third_party")),
                     [(text(r.get("property")), r) for r in _dicts(a.get("results")) if _graded(r)])
                    for a in audits if _qname(a) == quantity], anchors)


def _overall_grades(audits: list[dict], anchors: dict[int, str]) -> Grades:
    """Every implementation (ours first) over every quantity it implements."""
    labels: dict[str, bool] = {}
    for a in sorted(audits, key=lambda a: bool(a.get("third_party"))):
        labels.setdefault(text(a.get("label")), bool(a.get("third_party")))
    return _grades([(label, tp, [(f"{_qname(a)} · {text(r.get('property'))}", r) for a in audits if text(a.get("label")) == label
                                 for r in _dicts(a.get("results")) if _graded(r)])
                    for label, tp in labels.items()], anchors)


def _finding_counts(results: list[dict]) -> dict[str, int]:
    """Conformance findings by severity, errors, and of these how many a known deviation explains."""
    counts = dict.fromkeys(FINDING_KINDS, 0)
    for r in results:
        if _is_contract(r) or r.get("verdict") not in FAILING_VERDICTS:
            continue
        severity = text(r.get("severity"))
        counts["error" if r.get("verdict") == "error" else severity if severity in SEVERITIES else "bug"] += 1
        counts["known"] += bool(r.get("known"))
    return counts


def _counts_text(counts: dict[str, int]) -> str:
    return (", ".join(f"{counts[k]} {k}" for k in FINDING_KINDS[:4])
            + (f" ({counts['known']} explained by a known deviation)" if counts["known"] else ""))


def _blocks(counterexample: Any) -> tuple[Block, ...]:
    """The labelled pieces of a counterexample."""
    if counterexample is None or counterexample == "" or counterexample == {}:
        return ()
    if isinstance(counterexample, str):
        return (Block("Counterexample", counterexample),)
    if not isinstance(counterexample, dict):
        return (Block("Counterexample", json.dumps(counterexample, ensure_ascii=False, default=str)),)
    labels = {"snippet": ("Counterexample (Python)", "python"), "inputs": ("Inputs", "text"),
              "expected": ("Expected", "text"), "got": ("Got", "text"),
              "replayed": ("Reproduced in a fresh interpreter", "text")}
    parts = []
    for key in list(labels) + [k for k in counterexample if k not in labels]:
        value = counterexample.get(key)
        if value is None or value == "":
            continue
        label, lang = labels.get(key, (str(key).capitalize(), "text"))
        if not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        parts.append(Block(label, value, lang))
    return tuple(parts)


def _claims(quantity: dict) -> tuple[Claim, ...]:
    return tuple(Claim(name=text(c.get("name")), statement=text(c.get("statement")), kind=text(c.get("kind")),
                       status=text(c.get("status")), detail=text(c.get("detail")),
                       per_implementation=tuple((str(k), text(v)) for k, v in _mapping(c.get("per_implementation")).items()),
                       counterexample=_blocks(c.get("counterexample")))
                 for c in _dicts(quantity.get("claims")))


def _quantity(name: str, anchor: str, spec: dict, audits: list[dict], show_claims: bool, anchors: dict[int, str]) -> Quantity:
    intro = text(spec.get("summary")) + (f" (family: {text(spec.get('family'))})" if spec.get("family") else "")
    facts = [Fact(label, rich(code(spec[key]))) for key, label in (("formula", "Formula"), ("signature", "Signature")) if spec.get(key)]
    if spec.get("reference"):
        facts.append(Fact("Reference", rich(text(spec["reference"]))))
    conventions = tuple(text(c) for c in spec.get("conventions") or [] if c) if isinstance(spec.get("conventions"), list) else ()
    return Quantity(name, anchor, intro.strip(), tuple(facts), conventions, _claims(spec), show_claims,
                    _matrix(audits, name, False, anchors), _matrix(audits, name, True, anchors),
                    _quantity_grades(audits, name, anchors))


def _summary(audits: list[dict]) -> tuple[SummaryRow, ...]:
    return tuple(SummaryRow(label=text(a.get("label")), quantity=_qname(a), framework=text(a.get("framework")),
                            device=text(a.get("device")), third_party=bool(a.get("third_party")),
                            conformance=_count([r for r in _dicts(a.get("results")) if not _is_contract(r)]),
                            contract=_count([r for r in _dicts(a.get("results")) if _is_contract(r)]))
                 for a in audits)


def _overall(results: dict, rows: tuple[SummaryRow, ...], audits: list[dict], claims: list[Claim]) -> Overall:
    """The verdict of our implementations (third-party findings are reported, not ours to pass or
    fail; in thirdparty.* the verdict is the audited code's)."""
    theirs_report = results.get("kind") == "thirdparty"
    judged = [r for r in rows if r.third_party == theirs_report]
    others = [r for r in rows if r.third_party and not theirs_report]
    conformance = Counter()
    for row in judged:
        conformance.update(row.conformance)
    tp = Counter()
    for row in others:
        tp.update(row.conformance)
    claim_status = Counter(c.status for c in claims)
    severities = Counter(text(r.get("severity")) for a in audits if bool(a.get("third_party")) == theirs_report
                         for r in _dicts(a.get("results")) if not _is_contract(r) and r.get("verdict") == "fails")
    # the default gate (properties.severity): a bug or an error fails; accuracy and range findings are reported
    at_gate = conformance["error"] + sum(n for s, n in severities.items() if s not in ("accuracy", "range"))
    verdict = "FAIL" if at_gate else "PASS" if conformance["holds"] else "NO RESULTS"
    known = sum(bool(r.get("known")) for a in audits if bool(a.get("third_party")) == theirs_report
                for r in _dicts(a.get("results")) if not _is_contract(r) and r.get("verdict") in FAILING_VERDICTS)
    explanation = (
        f"{len(judged)} audit target(s); conformance properties: "
        f"{conformance['holds']} hold, {conformance['fails']} fail "
        f"({severities['bug']} bug, {severities['accuracy']} accuracy, {severities['range']} range), "
        f"{conformance['error']} error, {conformance['skipped']} skipped"
        + (f" ({known} of the failures and errors explained by a known deviation)" if known else "")
        + ("; the verdict is at the default gate, bug: accuracy and range findings are reported, not counted"
           if severities["accuracy"] or severities["range"] else "") + ". "
        f"Claims: {claim_status['refuted']} refuted, {claim_status['failed']} failed. "
        + (f"Third-party code ({len(others)} target(s), not in this verdict): {tp['holds']} hold, "
           f"{tp['deviates']} deviate by a declared convention, {tp['fails']} fail, {tp['error']} error. " if others else "")
        + CONTRACT_NOTE)
    return Overall(verdict, explanation)


def _target_text(audit: dict) -> str:
    extras = [text(audit.get(k)) for k in ("framework", "device") if audit.get(k)]
    if audit.get("third_party"):
        extras.append("third party")
    return ", ".join(extras)


def _failure(audit: dict, result: dict, anchor: str) -> Failure:
    """What a maintainer pastes into a bug report: the target, the verdict, what the property
    checks, the known-deviations row that explains it, the message and the counterexample."""
    contract = _is_contract(result)
    kind = text(result.get("kind")) + (" (informational)" if contract else "")
    facts = [Fact("Target", rich(code(audit.get("target")), f" ({_target_text(audit)}), quantity ", code(audit.get("quantity")))),
             Fact("Kind", rich(f"{kind} · Verdict: {text(result.get('verdict'))} · Examples: {text(result.get('examples')) or 'n/a'}"))]
    if contract:  # a contract check measures no error: say what it got
        got = _mapping(result.get("counterexample")).get("got")
        if got:
            facts.append(Fact("What failed", rich(text(got))))
    else:
        max_ulps = fmt_ulps(result.get("max_ulps")) or "n/a"
        allowed = fmt_ulps(result.get("allowed_ulps"))
        facts.append(Fact("Max error", rich(f"{max_ulps} (allowed {allowed})" if allowed else max_ulps)))
    if result.get("severity"):
        severity = text(result.get("severity"))
        facts.append(Fact("Severity", rich(severity + (f" ({SEVERITY_TEXT[severity]})" if severity in SEVERITY_TEXT else ""))))
    if result.get("off_domain"):
        facts.append(Fact("Outside the typical domain", rich(text(result.get("off_domain")))))
    for other in _dicts(result.get("others")):
        facts.append(Fact(f"Also ({text(other.get('severity'))})", rich(text(other.get("message")))))
    shrunk = {"time": "not fully shrunk (the shrink's time budget ran out)",
              "calls": "not fully shrunk (the shrink's call budget ran out)",
              "off": "not shrunk (as found)"}.get(text(result.get("shrunk")))
    if shrunk:
        facts.append(Fact("Counterexample", rich(shrunk + (f" · {text(result.get('calls'))} calls" if result.get("calls") else ""))))
    if result.get("doc"):
        facts.append(Fact("What the property checks", rich(text(result.get("doc")))))
    known = _mapping(result.get("known"))
    if known:
        facts.append(Fact("Known", rich(text(known.get("reason")) + (f" ({text(known.get('upstream'))})" if known.get("upstream") else ""))))
    return Failure(anchor, text(audit.get("label")), text(result.get("property")), text(result.get("verdict")), tuple(facts),
                   text(result.get("message")), _blocks(result.get("counterexample")))


def _spec_line(spec: dict) -> Rich:
    if not spec.get("formula"):
        return ()
    conventions = "; ".join(text(c) for c in spec.get("conventions") or [] if c) if isinstance(spec.get("conventions"), list) else ""
    return rich(code(spec.get("formula")), f" ({conventions})" if conventions else "")


def _failures(audits: list[dict], names: list[str], specs: dict[str, dict], anchors: dict[int, str]) -> tuple[FailureGroup, ...]:
    groups = []
    for name in names:
        failures = tuple(_failure(a, r, anchors[id(r)]) for a in audits if _qname(a) == name
                         for r in _dicts(a.get("results")) if r.get("verdict") in FAILING_VERDICTS)
        if failures:
            groups.append(FailureGroup(name, _spec_line(specs.get(name, {})), failures))
    return tuple(groups)


def _findings(results: list[dict]) -> tuple[Finding, ...]:
    """Results that report the same thing — the same verdict and severity, explained by the same
    known-deviations row (or by none, with the same message) — as one line."""
    groups: dict[tuple, list[dict]] = {}
    for r in results:
        known = _mapping(r.get("known"))
        key = (text(r.get("verdict")), text(r.get("severity")), text(known.get("reason")) if known else text(r.get("message")))
        groups.setdefault(key, []).append(r)
    out = []
    for (verdict, severity, _), group in groups.items():
        known = _mapping(group[0].get("known"))
        messages = {text(r.get("message")) for r in group}
        what = [messages.pop()] if len(messages) == 1 else []  # one known row may explain different messages
        if known:
            what.append(f"known: {text(known.get('reason'))}" + (f" ({text(known.get('upstream'))})" if known.get("upstream") else ""))
        head = f"{severity}: " if severity else "error: " if verdict == "error" else ""
        out.append(Finding("≈" if verdict == "deviates" else "✗", tuple(text(r.get("property")) for r in group), head + " — ".join(what)))
    return tuple(out)


def _adapter_facts(audit: dict) -> tuple[Fact, ...]:
    facts = [("Quantity", _qname(audit)), ("Source", text(audit.get("source"))),
             ("Called as", text(audit.get("note"))), ("Returns", text(audit.get("output")))]
    fixed = _mapping(audit.get("fixed"))
    if fixed:
        facts.append(("Pinned", ", ".join(f"{text(k)} = {text(v)}" for k, v in fixed.items())
                      + " in every draw (the library has no such parameter)"))
    if audit.get("half") == "native":
        facts.append(("Half precision", "judged as computed natively (the dtype's own epsilon; the catalogue allows that or float32)"))
    if audit.get("differentiable") is False:
        facts.append(("Gradients", "none (not differentiable): gradient properties skipped"))
    for c in _dicts(audit.get("conventions")):
        facts.append(("Declared convention", f"{text(c.get('name'))}: {text(c.get('text'))}"))
    return tuple(Fact(k, rich(v)) for k, v in facts if v)


def _adapter(audit: dict, full: bool) -> Adapter:
    conf = [r for r in _dicts(audit.get("results")) if not _is_contract(r)]
    counts = _count(conf)
    bad = [r for r in conf if r.get("verdict") in FAILING_VERDICTS]
    dev = [r for r in conf if r.get("verdict") == "deviates"]
    line = ", ".join(f"{counts[v]} {word}" for v, word in (("holds", "hold"), ("deviates", "deviate by a declared convention"),
                                                           ("fails", "fail"), ("error", "error"), ("skipped", "skipped"))
                     if counts[v])
    verdict = "fails" if bad else "deviates by a declared convention" if dev else "holds"
    first = (bad or dev or [{}])[0] if full else {}
    findings = f"; findings: {_counts_text(_finding_counts(conf))}" if bad else ""
    return Adapter(text(audit.get("label")), _adapter_facts(audit), verdict, f"conformance: {line or 'nothing run'}{findings}",
                   _findings(bad) + _findings(dev), text(first.get("property")), _blocks(first.get("counterexample")),
                   bool(bad) and bool(first))


def _third_party(results: dict, audits: list[dict], full: bool, files: frozenset[str] | None) -> ThirdParty:
    ran = "skipped_adapters" in results or any(a.get("third_party") for a in audits)  # audit_all wrote thirdparty.*
    link = not full and ({"thirdparty.html", "thirdparty.md"} <= files if files is not None else ran)
    skipped = ", ".join(f"{text(s.get('adapter'))} ({text(s.get('missing'))})" for s in _dicts(results.get("skipped_adapters")))
    theirs = [a for a in audits if a.get("third_party")]
    rows = [FindingCount(text(a.get("label")), _qname(a), _finding_counts(_dicts(a.get("results")))) for a in theirs]
    if rows:
        rows.append(FindingCount(f"Total ({len(rows)} adapter{'s' if len(rows) != 1 else ''})", "",
                                 {k: sum(r.counts[k] for r in rows) for k in FINDING_KINDS}))
    return ThirdParty(full, link, tuple(_adapter(a, full) for a in theirs),
                      tuple(text(k) for k in results.get("stale_deviations") or [] if k), skipped, tuple(rows))


def _speed(benchmarks: dict | None, names: list[str], stat: str = "median") -> Speed | None:
    rows = speed.ratios(benchmarks, stat) if benchmarks else []
    if not rows:
        return None
    order = {name: i for i, name in enumerate(names)}
    bars = sorted(speed.headline(rows), key=lambda r: (order.get(r.quantity, len(order)), r.quantity, r.mode))
    without = sorted({r.quantity for r in rows} - {r.quantity for r in bars}, key=lambda q: (order.get(q, len(order)), q))
    roofs = sorted(speed.peerless(rows), key=lambda r: (order.get(r.quantity, len(order)), r.quantity, r.mode, r.framework))
    return Speed(stat, tuple(bars), tuple(without), tuple(roofs))


def _domain() -> Domain:
    """The typical domain (properties.domain) and the severities."""
    from losscheck.properties import domain
    from losscheck.properties.dtypes import DTYPES as dtypes
    rows = tuple(tuple([r["kinds"]] + [f"0 or {r['bounds'][dt][0]:.3g} … {r['bounds'][dt][1]:.3g}" for dt in dtypes] + [r["reason"]])
                 for r in domain.rows())
    intro: list[str | Span] = ["Every finding has a severity: "]
    for i, (severity, meaning) in enumerate(SEVERITY_TEXT.items()):
        intro += (["; "] if i else []) + [strong(severity), f": {meaning}"]
    intro.append(". The default gate is bug. Magnitudes of array entries (a masked entry's −inf and 0 are always typical); "
                 "a result whose scale and returned value both lie below the smallest typical magnitude is a range finding.")
    return Domain(rich(*intro), ("Argument kind", *dtypes, "Why"), rows)


def _pairs(mapping: dict) -> tuple[tuple[str, str], ...]:
    return tuple((str(k), text(v) if v is not None else "none") for k, v in mapping.items())


def build(results: dict, benchmarks: dict | None = None, files: frozenset[str] | None = None) -> Report:
    """The document of one results dict.  ``benchmarks``: pytest-benchmark's JSON (the speed
    chart; none without it); ``files``: the names of the files beside the report, where known (a
    link is written only to one of them; unknown: to one the results say was written)."""
    results = _mapping(results)
    audits = _dicts(results.get("audits"))
    specs = {str(k): _mapping(v) for k, v in _mapping(results.get("quantities")).items()}
    names = list(specs) + [n for n in dict.fromkeys(_qname(a) for a in audits) if n not in specs]
    ids = html_ids(names, "q-")
    failing = [r for n in names for a in audits if _qname(a) == n
               for r in _dicts(a.get("results")) if r.get("verdict") in FAILING_VERDICTS]
    anchors = {id(r): f"f-{i}" for i, r in enumerate(failing, 1)}  # in the order of the Failures section
    thirdparty_report = results.get("kind") == "thirdparty"
    summary = _summary(audits)
    quantities = tuple(_quantity(n, ids[n], specs.get(n, {}), audits, not thirdparty_report, anchors) for n in names)
    all_claims = [c for q in quantities for c in q.claims]
    return Report(
        title="losscheck: third-party code" if thirdparty_report else "losscheck report",
        generated=text(results.get("generated")) or "at an unknown time",
        version=text(results.get("losscheck_version")) or "unknown version",
        thirdparty_report=thirdparty_report,
        settings=_pairs(_mapping(results.get("settings"))), environment=_pairs(_mapping(results.get("environment"))),
        summary=summary, overall=_overall(results, summary, audits, all_claims),
        overview=_overview(audits, names, ids),
        accuracy=_overall_grades(audits, anchors),
        claims=tuple((q.name, q.anchor, q.claims) for q in quantities if q.claims and q.show_claims),
        speed=None if thirdparty_report else _speed(speed.load(benchmarks), names),
        domain=_domain(), quantities=quantities,
        third_party=_third_party(results, audits, thirdparty_report, files),
        failures=_failures(audits, names, specs, anchors))
