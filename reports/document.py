"""The report as one document model: frozen dataclasses, the facts the report states.

``reports.assemble.build`` makes a :class:`Report` from the results dict; the writers
(``md_writer``, ``html_writer``, ``svg``) only lay its facts out.  Text that mixes code and prose
is :data:`Rich` (a tuple of :class:`Span`), never markup to be parsed back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import speed

VERDICTS = ("holds", "fails", "error", "skipped", "deviates")
VERDICT_HEADERS = ("✓ holds", "✗ fails", "error", "– skipped", "≈ deviates")
CONTRACT_VERDICTS = VERDICTS[:4]  # conventions apply to conformance properties only
FAILING_VERDICTS = ("fails", "error")
GOOD_CLAIM_STATUSES = ("proved", "proved on instances", "held")
BAD_CLAIM_STATUSES = ("refuted", "failed")
SEVERITIES = ("bug", "accuracy", "range")
CONTRACT_NOTE = "Contract checks are informational: they do not affect the exit status."
UNDETERMINED_NOTE = ("\"undetermined\": examples where the exact result and the definition with each step rounded "
                     "to the dtype disagree beyond the tolerance (the dtype's precision does not determine the "
                     "result there); a result between the two (a gradient: within the scale of its chain-rule terms, "
                     "which bounds both), never NaN, is accepted, and left out of the ULPs.")
DASH = "–"

#: one line per severity (properties.severity), beside each finding
SEVERITY_TEXT = {
    "bug": "wrong beyond the practical tolerance, NaN, a crash or a wrong shape on the typical domain: fails the default gate",
    "accuracy": "correct but digits lost: beyond the rounding bound, within the practical tolerance (half the digits); "
                "fails only at --gate accuracy",
    "range": "fails only outside the typical domain (huge or tiny magnitudes, subnormals); fails only at --gate range",
}

#: a cell's colour class, most severe first (the overview shows each quantity's worst)
TONES = ("bug", "error", "fails", "accuracy", "range", "deviates", "holds", "skipped", "na")
#: the legend: tone and what it means
TONE_TEXT = (("holds", "holds (worst ULPs shown)"), ("bug", "bug"), ("accuracy", "accuracy"), ("range", "range"),
             ("error", "error"), ("deviates", "deviates by a declared convention"), ("skipped", "skipped"),
             ("na", "not run"))


# --------------------------------------------------------------------------
# Rich text
# --------------------------------------------------------------------------

def text(value: Any) -> str:
    """Any field as text (a list: comma-separated; None: "")."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(text(item) for item in value)
    return str(value)


@dataclass(frozen=True)
class Span:
    """A run of text in one style: "" (plain), "code", "strong" or "em"."""
    text: str
    style: str = ""


Rich = tuple[Span, ...]


def rich(*parts: str | Span) -> Rich:
    """Plain strings and spans as one Rich text (empty parts dropped)."""
    return tuple(p if isinstance(p, Span) else Span(p) for p in parts if (p.text if isinstance(p, Span) else p))


def code(value: Any) -> Span:
    return Span(text(value), "code")


def strong(value: Any) -> Span:
    return Span(text(value), "strong")


THIRD_PARTY_INTRO = rich(
    "Adapters (", code("impls/adapters/"), ") present library code and the seeds' snippets in the catalogue's "
    "signatures and declare what they do differently on purpose. A conformance property that fails is "
    "run again with the declared conventions applied to the reference: ", strong("deviates"),
    " means the convention explains the difference (the counterexample shows it), ", strong("fails"),
    " means it does not. A convention maps arguments only, so it never explains a NaN, an overflow or a wrong gradient.")


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Fact:
    label: str
    value: Rich


@dataclass(frozen=True)
class Block:
    """A labelled block of text (a counterexample's snippet, inputs, ...) in a code language."""
    label: str
    text: str
    lang: str = "text"


@dataclass(frozen=True)
class Cell:
    """One cell of a matrix: its colour class, its text in a table, its short text in a picture, the
    full sentence (a tooltip) and the failure block it links to ("" for none)."""
    tone: str
    text: str
    short: str = ""
    title: str = ""
    anchor: str = ""


NA = Cell("na", DASH, "", "not run")


#: the properties an accuracy grade reads (on the typical domain; ``stability[dt]`` draws the extreme one)
GRADED = ("value", "gradient", "masked")
GRADE_NOTE = ("Accuracy grade: the worst error in ULPs of each dtype over the value, gradient and masked properties "
              "on the typical domain (stability, which draws the extreme domain, and a failure outside the typical "
              "domain do not count), beside the allowed bound of the result that has it; coloured by its worst "
              "finding. ≈: deviates by a declared convention (measured against another convention, not graded); "
              "≤ N: only failures outside the typical domain, within the bound on it; – not run.")


@dataclass(frozen=True)
class Grade:
    """One implementation's accuracy grade in one dtype: ``value`` the worst error in ULPs (or
    "error", "≈", "≤ N", "–"), ``allowed`` the allowed bound of the result that has it, ``text`` both
    as one line of text (Markdown), ``title`` the sentence (a tooltip), ``anchor`` the failure block
    of the worst failing result ("" for none)."""
    tone: str
    value: str
    allowed: str = ""
    text: str = DASH
    title: str = "not run"
    anchor: str = ""


NO_GRADE = Grade("na", DASH)


@dataclass(frozen=True)
class GradeRow:
    label: str
    cells: tuple[Grade, ...]
    third_party: bool = False


@dataclass(frozen=True)
class Grades:
    """Implementations × dtypes: the accuracy grade table (of one quantity, or over all of them)."""
    columns: tuple[str, ...]
    rows: tuple[GradeRow, ...]

    def __bool__(self) -> bool:
        return any(c.tone != "na" for row in self.rows for c in row.cells)


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]
    anchor: str = ""
    third_party: bool = False


@dataclass(frozen=True)
class Matrix:
    """Implementations (rows) × properties (columns) of one quantity, or quantities × implementations."""
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    #: some cell counts undetermined examples (the report explains them once)
    undetermined: bool = False

    def __bool__(self) -> bool:
        return bool(self.columns)


@dataclass(frozen=True)
class Claim:
    name: str
    statement: str
    kind: str
    status: str
    detail: str
    per_implementation: tuple[tuple[str, str], ...] = ()
    counterexample: tuple[Block, ...] = ()

    @property
    def tone(self) -> str:
        return claim_tone(self.status)


@dataclass(frozen=True)
class Quantity:
    name: str
    anchor: str
    intro: str
    facts: tuple[Fact, ...]
    conventions: tuple[str, ...]
    claims: tuple[Claim, ...]
    show_claims: bool
    conformance: Matrix
    contract: Matrix
    accuracy: Grades = Grades((), ())


@dataclass(frozen=True)
class SummaryRow:
    label: str
    quantity: str
    framework: str
    device: str
    third_party: bool
    conformance: dict[str, int]
    contract: dict[str, int]


@dataclass(frozen=True)
class Overall:
    verdict: str  # PASS, FAIL, NO RESULTS
    explanation: str

    @property
    def tone(self) -> str:
        return {"PASS": "pass", "FAIL": "fail"}.get(self.verdict, "none")


@dataclass(frozen=True)
class Finding:
    """Third-party results that report the same thing (in several dtypes)."""
    mark: str  # ✗ (fails or error), ≈ (deviates)
    properties: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Adapter:
    label: str
    facts: tuple[Fact, ...]
    verdict: str
    counts: str
    findings: tuple[Finding, ...]
    #: the smallest counterexample of its first finding (the full third-party report only)
    example_property: str = ""
    example: tuple[Block, ...] = ()
    example_in_failures: bool = False


#: what a third-party finding is counted as: its severity, an error, and (of these) explained by a known deviation
FINDING_KINDS = ("bug", "accuracy", "range", "error", "known")
FINDING_HEADERS = ("bug", "accuracy", "range", "error", "of which known")
FINDINGS_NOTE = ("Findings of each adapter's conformance properties: failures by severity, and errors (a crash, a "
                 "timeout); of which known: how many of them a row of the known-deviations table "
                 "(impls/adapters/deviations.py) explains. A deviation by a declared convention is not a finding.")


@dataclass(frozen=True)
class FindingCount:
    """One adapter's findings (or the total's: ``quantity`` "") by FINDING_KINDS."""
    label: str
    quantity: str
    counts: dict[str, int]


@dataclass(frozen=True)
class ThirdParty:
    full: bool  # the thirdparty.* report (with counterexamples), not index.*
    link: bool  # index.*: link to thirdparty.{md,html} (they exist, or the audit ran)
    adapters: tuple[Adapter, ...]
    stale: tuple[str, ...]
    skipped: str
    #: findings by severity per adapter, then the total (empty where no adapter was audited)
    findings: tuple[FindingCount, ...] = ()


@dataclass(frozen=True)
class Failure:
    anchor: str
    label: str
    property: str
    verdict: str
    facts: tuple[Fact, ...]
    message: str
    blocks: tuple[Block, ...]

    @property
    def mark(self) -> str:
        return "✗" if self.verdict == "fails" else "error:"


@dataclass(frozen=True)
class FailureGroup:
    """The failures of one quantity, with its spec stated once."""
    quantity: str
    spec: Rich
    failures: tuple[Failure, ...]


@dataclass(frozen=True)
class Speed:
    """Ours / fastest peer from pytest-benchmark's JSON: one bar per quantity and mode."""
    stat: str
    bars: tuple[speed.Ratio, ...]
    without_peer: tuple[str, ...]
    #: ours against the machine's roofline where a framework has no peer (speed.peerless)
    rooflines: tuple[speed.Ratio, ...] = ()


@dataclass(frozen=True)
class Domain:
    intro: Rich
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Report:
    title: str
    generated: str
    version: str
    thirdparty_report: bool
    settings: tuple[tuple[str, str], ...]
    environment: tuple[tuple[str, str], ...]
    summary: tuple[SummaryRow, ...]
    overall: Overall
    overview: Matrix
    #: implementations × dtypes over every quantity (the "Accuracy" table at a glance)
    accuracy: Grades
    claims: tuple[tuple[str, str, tuple[Claim, ...]], ...]  # (quantity, anchor, claims) at a glance
    speed: Speed | None
    domain: Domain
    quantities: tuple[Quantity, ...]
    third_party: ThirdParty
    failures: tuple[FailureGroup, ...]

    @property
    def failure_count(self) -> int:
        return sum(len(g.failures) for g in self.failures)


def claim_tone(status: str) -> str:
    return "bad" if status in BAD_CLAIM_STATUSES else "good" if status in GOOD_CLAIM_STATUSES else "neutral"
