"""Tests of the report renderer (reports/render.py) on a small hand-made results dict."""

import copy
import json
import os

import pytest

from losscheck.reports import render
from losscheck.reports.render import render_html, render_markdown, write_report

SNIPPET = "import torch\nx = torch.tensor([11.0, 12.0], dtype=torch.float16)\nprint(logsumexp(x))"
REFUTED_CE = "k = 1, x = (0, 0): logsumexp = log 2 != 0 = max(x)"


def make_results():
    return {
        "generated": "2026-11-29T15:00:00Z",
        "losscheck_version": "0.1.0",
        "settings": {"profile": "ci", "max_examples": 25, "seed": None},
        "environment": {"python": "3.11.7", "torch": "2.13.0", "devices": ["cpu"],
                        "skipped_devices": ["cuda: not available"]},
        "quantities": {
            "logsumexp": {
                "family": "smoothing",
                "summary": "smooth maximum",
                "formula": "(1/k) · log Σ_i exp(k·x_i)",
                "signature": "logsumexp(x, k=1.0)",
                "conventions": ["k > 0", "reduces over the last axis"],
                "reference": "seed 004",
                "claims": [
                    {"name": "limit_max", "statement": "lim_{k→∞} logsumexp(x, k) = max(x)",
                     "kind": "symbolic", "status": "proved on instances", "detail": "3 instances",
                     "counterexample": None},
                    {"name": "equals_max", "statement": "logsumexp(x, k) = max(x)",
                     "kind": "symbolic", "status": "refuted", "detail": "off by log n / k",
                     "counterexample": REFUTED_CE},
                    {"name": "bounds", "statement": "max(x) <= logsumexp(x, k) <= max(x) + log(n)/k",
                     "kind": "numerical", "status": "failed", "examples": 50,
                     "detail": "broken on one implementation", "counterexample": None,
                     "per_implementation": {"torch (ours)": "failed", "jax (ours)": "held"}},
                ],
            },
        },
        "audits": [
            {"label": "torch (ours)", "target": "losscheck.impls.torch_smoothing:logsumexp",
             "framework": "torch", "device": "cpu", "quantity": "logsumexp", "third_party": False,
             "results": [
                 {"property": "value[float32]", "kind": "conformance", "verdict": "holds",
                  "examples": 25, "max_ulps": 1.5, "allowed_ulps": 48.0, "message": "",
                  "counterexample": None},
                 {"property": "stability[float16]", "kind": "conformance", "verdict": "fails",
                  "examples": 3, "max_ulps": float("inf"), "allowed_ulps": 40.0,
                  "message": "value: got inf, expected 65504 <b>not bold</b>",
                  "counterexample": {"snippet": SNIPPET, "inputs": "x = [11.0, 12.0]",
                                     "expected": "12.31", "got": "inf"}},
                 {"property": "grad[float64]", "kind": "conformance", "verdict": "skipped",
                  "examples": 0, "max_ulps": None, "allowed_ulps": None,
                  "message": "no float64", "counterexample": None},
                 {"property": "contract:k", "kind": "contract", "verdict": "fails",
                  "examples": 1, "max_ulps": None, "allowed_ulps": None,
                  "message": "k=0 accepted", "counterexample": None},
             ]},
            {"label": "jax (ours)", "target": "losscheck.impls.jax_smoothing:logsumexp",
             "framework": "jax", "device": "cpu", "quantity": "logsumexp", "third_party": False,
             "results": [
                 {"property": "value[float32]", "kind": "conformance", "verdict": "holds",
                  "examples": 25, "max_ulps": 2.0, "allowed_ulps": 48.0, "message": "",
                  "counterexample": None, "extra_nan": float("nan")},
                 {"property": "contract:k", "kind": "contract", "verdict": "holds",
                  "examples": 1, "max_ulps": None, "allowed_ulps": None, "message": "",
                  "counterexample": None},
             ]},
        ],
    }


@pytest.fixture
def results():
    return make_results()


def line_with(text, needle):
    lines = [line for line in text.splitlines() if needle in line]
    assert lines, f"no line contains {needle!r}"
    return lines[0]


def test_refuted_claim_is_marked_in_markdown(results):
    md = render_markdown(results)
    assert "**REFUTED**" in line_with(md, "`equals_max`")
    assert "REFUTED" not in line_with(md, "`limit_max`")
    assert "**FAILED**" in line_with(md, "`bounds`")
    assert REFUTED_CE in md


def test_refuted_claim_has_red_badge_in_html(results):
    page = render_html(results)
    row = line_with(page, "<code>equals_max</code>")
    assert '<span class="badge bad">REFUTED</span>' in row
    assert 'class="badge bad"' not in line_with(page, "<code>limit_max</code>")


def test_failing_snippet_in_markdown_and_html(results):
    md = render_markdown(results)
    page = render_html(results)
    assert "```python\n" + SNIPPET + "\n```" in md
    assert render.html.escape(SNIPPET) in page
    for text in ("x = [11.0, 12.0]", "12.31"):
        assert text in md and text in page
    assert "stability[float16]" in line_with(md, "### ✗ torch (ours)")


def test_matrix_cells(results):
    md = render_markdown(results)
    torch_row = line_with(md, "| torch (ours) | ✓ 1.5 ulp")
    assert "✗ inf ulp" in torch_row and "| – |" in torch_row
    jax_row = line_with(md, "| jax (ours) | ✓ 2 ulp")
    assert jax_row.count("–") == 2  # stability and grad not applicable for jax
    page = render_html(results)
    assert '<td class="holds">✓ 1.5 ulp</td>' in page
    assert '<td class="fails">✗ inf ulp</td>' in page
    assert '<td class="skipped">–</td>' in page


def test_undetermined_examples_are_counted_in_the_cell_and_explained(results):
    md, page = render_markdown(results), render_html(results)
    assert "undetermined" not in md and "undetermined" not in page
    results["audits"][1]["results"][0]["undetermined"] = 3
    md, page = render_markdown(results), render_html(results)
    assert "✓ 2 ulp (3 undetermined)" in line_with(md, "| jax (ours) | ✓")
    assert '<td class="holds">✓ 2 ulp (3 undetermined)</td>' in page
    assert render.UNDETERMINED_NOTE in md and render.html.escape(render.UNDETERMINED_NOTE) in page


def test_contract_matrix_is_separate_and_noted(results):
    md = render_markdown(results)
    conformance, contracts = md.split("### Contract checks", 1)
    assert "contract:k" not in conformance.split("## Failures")[0].split("### Conformance")[1]
    assert "do not affect the exit status" in contracts
    assert "contract:k" in contracts
    assert "do not affect the exit status" in render_html(results)


def test_summary_and_overall_verdict(results):
    md = render_markdown(results)
    assert "**Overall: FAIL**" in md
    # torch: 1 holds, 1 fails, 0 error, 1 skipped, 0 deviates; contracts 0/1/0/0
    assert "| 1 | 1 | 0 | 1 | 0 | 0/1/0/0 |" in line_with(md, "| torch (ours) | `logsumexp`")
    assert "Overall: FAIL" in render_html(results)


def test_html_is_self_contained_and_escaped(results):
    results["quantities"]["logsumexp"]["reference"] = "<script>alert(1)</script>"
    page = render_html(results)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower()
    assert "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert 'id="q-logsumexp"' in page and 'href="#q-logsumexp"' in page
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page


def test_renderers_are_pure(results):
    before = copy.deepcopy(results)
    render_markdown(results)
    render_html(results)
    assert json.dumps(results, default=str) == json.dumps(before, default=str)


def test_tolerates_missing_fields():
    for minimal in ({}, {"audits": [{"label": "x", "results": [{"verdict": "fails"}]}]}):
        assert "losscheck report" in render_markdown(minimal)
        assert "losscheck report" in render_html(minimal)


def test_write_report(tmp_path, results):
    out = tmp_path / "nested" / "report"
    paths = write_report(results, out)
    assert set(paths) == {"index.md", "index.html", "results.json"}
    assert all(p.is_file() and p.parent == out for p in paths.values())
    assert sorted(os.listdir(out)) == ["index.html", "index.md", "results.json"]

    text = paths["results.json"].read_text(encoding="utf-8")
    for bare in ("NaN", "Infinity"):
        assert bare not in text
    data = json.loads(text)
    json.dumps(data, allow_nan=False)
    stability = data["audits"][0]["results"][1]
    assert stability["max_ulps"] == "inf"
    assert data["audits"][1]["results"][0]["extra_nan"] == "nan"
    assert data["quantities"]["logsumexp"]["formula"] == "(1/k) · log Σ_i exp(k·x_i)"

    assert SNIPPET in paths["index.md"].read_text(encoding="utf-8")
    assert "✗ inf ulp" in paths["index.html"].read_text(encoding="utf-8")


def test_failed_write_keeps_old_file_and_no_temp(tmp_path, results, monkeypatch):
    paths = write_report(results, tmp_path)
    old = paths["index.md"].read_text(encoding="utf-8")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(render.os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_report({"generated": "later"}, tmp_path)
    assert paths["index.md"].read_text(encoding="utf-8") == old
    assert sorted(os.listdir(tmp_path)) == ["index.html", "index.md", "results.json"]


def test_a_counterexample_cut_short_by_the_shrink_budget_says_so():
    results = make_results()
    failing = results["audits"][0]["results"][1]
    failing.update(shrunk="time", calls=151)
    for text in (render_markdown(results), render_html(results)):
        assert "not fully shrunk" in text and "time budget ran out" in text and "151 calls" in text
    failing["shrunk"] = "full"
    assert "not fully shrunk" not in render_markdown(results)
