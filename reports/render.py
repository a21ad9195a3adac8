"""Render a losscheck results dict as Markdown, self-contained HTML and strict JSON.

The results dict comes from the audit engine (``reports.build.build_results``); rendering is
tolerant: every optional field may be missing or None.  Both pages are written from one document
model (reports/document.py) by two thin writers (reports/md_writer.py, reports/html_writer.py;
the HTML page's pictures are inline SVG, reports/svg.py).

Public API:
    render_markdown(results) -> str       pure
    render_html(results) -> str           pure, no JavaScript, no network
    to_json(results) -> str               strict JSON (NaN/inf become strings)
    write_report(results, out_dir)        writes index.md, index.html, results.json
"""

from __future__ import annotations

import contextlib
import html  # noqa: F401  (render.html.escape: the tests escape as the page does)
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from . import assemble, html_writer, md_writer, speed
from .document import CONTRACT_NOTE, SEVERITY_TEXT, UNDETERMINED_NOTE  # noqa: F401  (kept importable from here)

#: pytest-benchmark's JSON beside the report (``nox -s bench`` writes reports/out/benchmarks.json): the speed chart
BENCHMARKS = "benchmarks.json"


def write_report(results: dict, out_dir: str | Path, stem: str = "index", *,
                 benchmarks: str | Path | dict | None = None) -> dict[str, Path]:
    """Write index.md, index.html and results.json atomically into out_dir
    (``stem="thirdparty"``: thirdparty.md, thirdparty.html, thirdparty.json).  ``benchmarks``:
    pytest-benchmark's JSON (a path or as read) for the speed chart; by default
    ``out_dir/benchmarks.json`` where it exists.

    Returns {"index.md": path, "index.html": path, "results.json": path}.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = sanitize(results)
    if benchmarks is None and stem == "index" and (out / BENCHMARKS).is_file():
        benchmarks = out / BENCHMARKS
    doc = assemble.build(clean, benchmarks=speed.load(benchmarks), files=frozenset(p.name for p in out.iterdir()))
    contents = {
        f"{stem}.md": md_writer.render(doc),
        f"{stem}.html": html_writer.render(doc),
        "results.json" if stem == "index" else f"{stem}.json": to_json(clean),
    }
    paths: dict[str, Path] = {}
    for name, text in contents.items():
        paths[name] = out / name
        _atomic_write(paths[name], text)
    return paths


def render_markdown(results: dict, benchmarks: dict | None = None) -> str:
    """The whole report as GitHub-flavoured Markdown."""
    return md_writer.render(assemble.build(sanitize(results), benchmarks=benchmarks))


def render_html(results: dict, benchmarks: dict | None = None) -> str:
    """The whole report as one self-contained HTML page (inline CSS and SVG, no scripts)."""
    return html_writer.render(assemble.build(sanitize(results), benchmarks=benchmarks))


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
    text = json.dumps(sanitize(results), indent=2, ensure_ascii=False, allow_nan=False, default=str)
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
