"""Typed results of an audit: what :func:`losscheck.audit` returns.

The engine (:func:`properties.engine.audit`) builds one plain record per property — the JSON the
CLI's ``--json`` and the report write — and :meth:`AuditResult.from_record` reads it into frozen
dataclasses, field by field, never from the message text.

- :class:`PropertyResult`: one property's verdict (``holds``, ``fails``, ``deviates``,
  ``skipped``, ``error``), its severity when it fails (``bug``, ``accuracy``, ``range``; see
  :mod:`properties.severity`), the worst error in ULPs against the high-precision reference and the
  rounding bound it was held to, and the counterexample as a runnable snippet.
- :class:`AuditResult`: the target, the gate, every property's result, whether it passes at the
  gate (:attr:`AuditResult.passed`) and the results that make it fail (:attr:`AuditResult.failures`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .severity import DEFAULT_GATE, SEVERITIES, at_gate

#: verdicts that pass an audit at any gate: a deviation by a declared convention is not a failure
PASSING = ("holds", "deviates", "skipped")


def _float(v) -> float | None:
    """A stored number: JSON keeps NaN and the infinities as "nan", "inf", "-inf"."""
    return None if v is None else float(v)


@dataclass(frozen=True)
class Counterexample:
    """The input a property failed at, shrunk where the shrink's budget allowed.  The record's keys
    are these fields' names (``properties.checks.facts`` writes the typed ones)."""
    #: a self-contained Python snippet that replays the failure (imports the target, calls it)
    snippet: str
    #: the arguments as text ("x = [0. 1.]; k = 1.0") and the reference's and the target's results
    #: as text, every digit, for a person
    inputs: str = ""
    expected: str | None = None
    got: str | None = None
    #: what was compared: "value", "gradient d/dx", "claim NAME", "nan", ...
    check: str = ""
    #: every drawn argument by name, all digits (nested lists of floats; NaN and inf as floats)
    args: dict | None = None
    #: the failing entry of the output (or gradient), and the target's and the reference's values there
    index: tuple[int, ...] | None = None
    got_value: float | None = None
    expected_value: float | None = None
    #: what the call raised (type name and message), where it raised
    exception: str | None = None
    exception_message: str | None = None
    #: the output's dtype where it loses precision; a wrong shape or type, as said
    output_dtype: str | None = None
    structural: str | None = None

    @classmethod
    def from_record(cls, c: dict | None) -> Counterexample | None:
        if not c:
            return None
        return cls(snippet=c.get("snippet") or "", inputs=c.get("inputs") or "", expected=c.get("expected"), got=c.get("got"),
                   check=c.get("check") or "", args=c.get("args"),
                   index=None if c.get("index") is None else tuple(c["index"]),
                   got_value=_float(c.get("got_value")), expected_value=_float(c.get("expected_value")),
                   exception=c.get("exception"), exception_message=c.get("exception_message"),
                   output_dtype=c.get("output_dtype"), structural=c.get("structural"))


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict on one target."""
    property: str
    #: "conformance" (counts at the gate) or "contract" (counts with ``strict``)
    kind: str
    verdict: str
    message: str
    #: a failing conformance property's severity: "bug", "accuracy" or "range"; None otherwise
    severity: str | None = None
    examples: int = 0
    #: the worst error seen, in ULPs of the dtype against the reference (None where not finite)
    max_ulps: float | None = None
    #: the rounding bound C(n)·eps·(|ref| + S) at that example, in the same ULPs
    allowed_ulps: float | None = None
    seconds: float = 0.0
    counterexample: Counterexample | None = None
    #: why the counterexample lies outside the typical domain ("" inside it)
    off_domain: str = ""
    #: findings below the gate kept besides the reported one: (severity, message) pairs
    others: tuple[tuple[str, str], ...] = ()
    #: the declared conventions it was run again with (their names), and the known-deviations row
    #: that explains it (impls/adapters/deviations.py: {"reason", "upstream"}), where there is one
    conventions: str = ""
    known: dict | None = None
    #: how far the counterexample was shrunk: "full", cut by a budget ("time", "calls"), "off" (as found)
    shrunk: str = ""
    #: the property that had already shrunk this root cause, where this one was shrunk briefly only
    repeat_of: str = ""

    @classmethod
    def from_record(cls, r: dict) -> PropertyResult:
        return cls(property=r["property"], kind=r["kind"], verdict=r["verdict"], message=r.get("message") or "",
                   severity=r.get("severity"), examples=r.get("examples") or 0, max_ulps=r.get("max_ulps"),
                   allowed_ulps=r.get("allowed_ulps"), seconds=r.get("seconds") or 0.0,
                   counterexample=Counterexample.from_record(r.get("counterexample")),
                   off_domain=r.get("off_domain") or "",
                   others=tuple((o.get("severity") or "", o.get("message") or "") for o in r.get("others") or ()),
                   conventions=r.get("conventions") or "", known=r.get("known"),
                   shrunk=r.get("shrunk") or "", repeat_of=r.get("repeat_of") or "")

    @property
    def tier(self) -> str:
        """What the finding counts as: its severity ("bug", "accuracy", "range"), "error" (the
        property could not run: a crash of the audit, a timeout), or "contract"."""
        if self.kind == "contract":
            return "contract"
        return "error" if self.verdict == "error" else self.severity or "bug"

    @property
    def cause(self) -> str:
        """The root cause as the typed fields state it, the same for one failure seen at several
        dtypes and properties: what was compared (value, gradient d/dx, a claim) and what came back
        (an exception, a wrong dtype or shape, NaN, an infinity, a wrong finite value)."""
        if self.verdict == "error":
            return self.message.split("\n")[0]
        c = self.counterexample or Counterexample("")
        check = c.check or self.property.split("[")[0]
        if self.kind == "contract" or check.startswith("claim"):
            return check if check.startswith("claim") else self.property
        if c.exception:
            what = f"raised {c.exception}"
        elif c.output_dtype:
            what = f"output dtype {c.output_dtype}"
        elif c.structural:
            what = "a wrong shape or type"
        elif c.got_value is not None and c.got_value != c.got_value:
            what = "NaN"
        elif c.got_value is not None and abs(c.got_value) == float("inf"):
            what = "an infinity"
        elif check in ("image", "image sum", "invariance"):  # properties.mixed
            what = "a result no nearby input gives"
        else:
            what = "a wrong value"
        return f"{check}: {what}"

    def passes(self, gate: str = DEFAULT_GATE, strict: bool = False) -> bool:
        """Whether this result passes at ``gate``: a conformance finding below the gate passes
        (it is still reported); an error never does; a contract check counts only with ``strict``."""
        if self.verdict in PASSING:
            return True
        if self.kind == "contract":
            return not strict
        if self.verdict == "error":
            return False
        return not at_gate(self.severity or "bug", gate)

    def describe(self) -> str:
        """The finding as a person reads it: property, severity, message and the snippet."""
        head = f"{self.property}: {self.verdict}" + (f" ({self.severity})" if self.severity else "")
        text = f"{head}\n{self.message}"
        if self.counterexample and self.counterexample.snippet:
            text += f"\n\ncounterexample (runnable):\n{self.counterexample.snippet}"
        return text


@dataclass(frozen=True)
class AuditResult:
    """Every applicable property of one quantity, run on one callable."""
    quantity: str
    framework: str
    device: str
    #: what was audited (``module:callable`` or the callable's qualified name)
    target: str
    gate: str
    results: tuple[PropertyResult, ...]
    strict: bool = False
    #: the engine's record, as the CLI's --json writes it
    record: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_record(cls, rec: dict, strict: bool = False) -> AuditResult:
        return cls(quantity=rec["quantity"], framework=rec["framework"], device=rec["device"],
                   target=rec.get("target") or rec.get("label") or "", gate=rec.get("gate") or DEFAULT_GATE,
                   results=tuple(PropertyResult.from_record(r) for r in rec["results"]), strict=strict, record=rec)

    @property
    def failures(self) -> tuple[PropertyResult, ...]:
        """The results that fail the audit at its gate."""
        return tuple(r for r in self.results if not r.passes(self.gate, self.strict))

    @property
    def findings(self) -> tuple[PropertyResult, ...]:
        """Every failing conformance result, at any severity (those below the gate included)."""
        return tuple(r for r in self.results if r.kind == "conformance" and r.verdict in ("fails", "error"))

    @property
    def passed(self) -> bool:
        return not self.failures

    def __bool__(self) -> bool:
        return self.passed

    def summary(self) -> str:
        """One line: the verdict at the gate and the findings by severity."""
        return (f"{self.target} as {self.quantity} ({self.framework}, {self.device}): "
                f"{'PASS' if self.passed else 'FAIL'} at gate {self.gate}; findings: {findings_text(self.results)}")


def findings_text(results) -> str:
    """"2 bug, 1 accuracy, 0 range, 1 error": the conformance findings among ``results`` by severity."""
    conformance = [r for r in results if r.kind == "conformance"]
    counts = {s: sum(r.verdict == "fails" and r.severity == s for r in conformance) for s in SEVERITIES}
    errors = sum(r.verdict == "error" for r in conformance)
    return ", ".join(f"{n} {s}" for s, n in counts.items()) + (f", {errors} error" if errors else "")


#: the order findings are shown in: what fails the default gate first
TIERS = ("bug", "error", "accuracy", "range", "contract")
#: the dtype whose counterexample represents a group: the most digits printed first
_DTYPE_ORDER = ("float64", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class FindingGroup:
    """One root cause (:attr:`PropertyResult.cause`) at one tier, and every property it shows in."""
    tier: str
    cause: str
    results: tuple[PropertyResult, ...]

    @property
    def representative(self) -> PropertyResult:
        """The result shown in full: one shrunk with the whole budget (not a repeat of a cause shrunk
        elsewhere), of the most precise dtype among those (float64 where there is one: every digit)."""
        def rank(r):
            dt = r.property[r.property.find("[") + 1:-1] if "[" in r.property else ""
            return bool(r.repeat_of), _DTYPE_ORDER.index(dt) if dt in _DTYPE_ORDER else len(_DTYPE_ORDER)
        return min(self.results, key=rank)

    @property
    def where(self) -> tuple[str, ...]:
        return tuple(r.property for r in self.results)


def group_findings(results) -> list[FindingGroup]:
    """The failing results (``fails`` and ``error``) grouped by tier and root cause, bugs first: a
    failure that shows at every dtype and in several properties is one finding, with where it shows."""
    groups: dict[tuple[str, str], list[PropertyResult]] = {}
    for r in results:
        if r.verdict in ("fails", "error"):
            groups.setdefault((r.tier, r.cause), []).append(r)
    return [FindingGroup(tier, cause, tuple(rs)) for (tier, cause), rs in
            sorted(groups.items(), key=lambda kv: TIERS.index(kv[0][0]))]
