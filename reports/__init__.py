"""Report rendering for losscheck audit results (Markdown, HTML, JSON)."""

from .render import render_html, render_markdown, write_report

__all__ = ["render_html", "render_markdown", "write_report"]
