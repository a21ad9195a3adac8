"""Progress of long runs: a live bar on a terminal, plain lines elsewhere (CI logs).

The bar is rich's (``rich.progress``: a maintained live display that keeps printed lines
above the bar and estimates the time left); where stdout is not a terminal nothing is
redrawn and each finished property is one line, as before.  Both follow the audit engine's
:class:`properties.engine.Observer` hooks.

- :class:`AuditProgress`: one audit (``losscheck audit``), or many in a row
  (``losscheck report``: ``begin_target`` for each) — the current property, examples done
  of the budget, elapsed time and ETA, findings so far.
- :class:`AdapterProgress`: ``losscheck audit-all`` — adapters done of those to audit,
  elapsed time and ETA, findings so far; one summary line per adapter.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager

from losscheck.properties.engine import Observer

_MARK = {"holds": "PASS", "fails": "FAIL", "error": "ERROR", "skipped": "SKIP", "deviates": "CONV"}


#: a failing conformance property's mark: its severity (properties.severity)
_SEVERITY_MARK = {"bug": "BUG", "accuracy": "ACCUR", "range": "RANGE"}


def result_line(rec: dict) -> str:
    """The one line printed for a finished property (and its message on a second line): a
    failing conformance property is marked by its severity, and says why its counterexample
    lies outside the typical domain."""
    mark = _SEVERITY_MARK.get(rec.get("severity"), _MARK[rec["verdict"]]) if rec["verdict"] == "fails" else _MARK[rec["verdict"]]
    ulps = rec.get("max_ulps")
    extra = f"  max {ulps:.3g} ulp" if isinstance(ulps, (int, float)) and ulps else ""
    kind = "" if rec["kind"] == "conformance" else f"  ({rec['kind']})"
    undetermined = f"  ({rec['undetermined']} undetermined)" if rec.get("undetermined") else ""
    shrunk = {"time": "  (not fully shrunk: time budget)", "calls": "  (not fully shrunk: call budget)",
              "off": "  (not shrunk)"}.get(rec.get("shrunk", ""), "")
    if rec.get("repeat_of"):
        shrunk = f"  (shrunk briefly: {rec['repeat_of']} shrank the same cause)"
    line = f"  {mark:5} {rec['property']:<24} {rec['examples']:>4} ex{extra}{undetermined}{kind}{shrunk}"
    if rec["verdict"] != "holds" and rec["message"]:
        line += f"\n        {rec['message']}"
    if rec.get("off_domain"):
        line += f"\n        outside the typical domain: {rec['off_domain']}"
    for o in rec.get("others", []):
        line += f"\n        also ({o['severity']}): {o['message']}"
    return line


def _is_finding(rec: dict) -> bool:
    return rec["kind"] == "conformance" and rec["verdict"] in ("fails", "error")


def live(stream=None) -> bool:
    """Whether ``stream`` (default stdout) is a terminal, where a bar can be redrawn."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


class AuditProgress(Observer, AbstractContextManager):
    """Observer of one or more audits.  Use as a context manager (the bar closes on exit)."""

    def __init__(self, stream=None, bar: bool | None = None, targets: int = 1):
        self.stream = stream or sys.stdout
        self.bar = live(self.stream) if bar is None else bar
        self.targets, self.target_index, self.label = targets, 0, ""
        self.findings = 0
        self._progress = self._task = self._outer = None
        self._done_before = 0  # examples of the properties already finished, in this audit
        self._budget: dict = {}
        if self.bar:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            console = Console(file=self.stream)
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("ex"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                      TextColumn("{task.fields[findings]}"), console=console, transient=True)
            self._progress.start()
            if targets > 1:
                self._outer = self._progress.add_task("audits", total=targets, findings="")

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def print(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)

    # -- many audits (losscheck report) ---------------------------------------------------
    def begin_target(self, label: str) -> None:
        if self._outer is not None and self.target_index:
            self._progress.advance(self._outer)
        self.target_index += 1
        self.label = label
        self.print(label)

    # -- engine hooks -----------------------------------------------------------------------
    def audit_started(self, properties) -> None:
        self._budget = dict(properties) if isinstance(properties, dict) else {p: 1 for p in properties}
        self._done_before = 0
        if self._progress is not None:
            if self._task is not None:
                self._progress.remove_task(self._task)
            self._task = self._progress.add_task(self._describe(""), total=max(1, sum(self._budget.values())),
                                                 findings=self._findings_text())

    def property_started(self, name: str, budget: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=self._describe(name), completed=self._done_before)

    def example_done(self, name: str, examples: int, failing: bool) -> None:
        if self._progress is not None and self._task is not None:
            # shrinking goes beyond the budget: the bar stays within this property's share
            self._progress.update(self._task, completed=self._done_before + min(examples, self._budget.get(name, examples)),
                                  description=self._describe(name + (" (shrinking)" if failing else "")))

    def failure_found(self, name: str, outcome, shrink_seconds: float) -> None:
        """Said at once, before the shrink (which may take ``shrink_seconds``): the property's line follows."""
        mark = _SEVERITY_MARK.get(outcome.severity or "bug", "FAIL")
        then = f"; shrinking it (at most {shrink_seconds:.0f} s)" if shrink_seconds else ""
        self.print(f"  {mark:5} {name:<24} found{then}: {outcome.message.splitlines()[0] if outcome.message else ''}")

    def property_done(self, record: dict) -> None:
        self.findings += _is_finding(record)
        self._done_before += self._budget.get(record["property"], 1)
        self.print(result_line(record))
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self._done_before, findings=self._findings_text())

    def _describe(self, name: str) -> str:
        from rich.markup import escape  # property names hold brackets: value[float32]
        where = f"[{self.target_index}/{self.targets}] {self.label} " if self.targets > 1 else ""
        return escape(f"{where}{name}".strip() or "starting")

    def _findings_text(self) -> str:
        return f"{self.findings} finding{'s' if self.findings != 1 else ''}"


class AdapterProgress(AbstractContextManager):
    """``audit-all``: adapters done of ``total``, with elapsed time, ETA and findings so far."""

    def __init__(self, total: int, stream=None, bar: bool | None = None):
        self.stream = stream or sys.stdout
        self.bar = live(self.stream) if bar is None else bar
        self.findings = 0
        self._progress = self._task = None
        if self.bar:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            self._progress = Progress(TextColumn("adapters"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                      TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[findings]}"),
                                      console=Console(file=self.stream), transient=True)
            self._progress.start()
            self._task = self._progress.add_task("adapters", total=max(1, total), findings="0 findings")

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        return False

    def print(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)

    def adapter_done(self, line: str, record: dict) -> None:
        self.findings += sum(_is_finding(r) for r in record.get("results", []))
        self.print(line)
        if self._progress is not None:
            self._progress.update(self._task, advance=1, findings=f"{self.findings} findings")
