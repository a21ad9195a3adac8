"""Tests of the report renderer (reports/render.py) on a small hand-made results dict."""

import copy
import dataclasses
import json
import os
import re

import pytest

from losscheck.reports import assemble, render, speed
from losscheck.reports.document import TONE_TEXT
from losscheck.reports.md_writer import slug
from losscheck.reports.render import render_html, render_markdown, write_report
from losscheck.reports.svg import FILL

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
                 {"property": "stability[float16]", "kind": "conformance", "verdict": "fails", "severity": "bug",
                  "examples": 3, "max_ulps": float("inf"), "allowed_ulps": 40.0,
                  "message": "value: got inf, expected 65504 <b>not bold</b>",
                  "counterexample": {"snippet": SNIPPET, "inputs": "x = [11.0, 12.0]",
                                     "expected": "12.31", "got": "inf"}},
                 {"property": "grad[float64]", "kind": "conformance", "verdict": "skipped",
                  "examples": 0, "max_ulps": None, "allowed_ulps": None,
                  "message": "no float64", "counterexample": None},
                 {"property": "contract:k", "kind": "contract", "verdict": "fails",
                  "examples": 1, "max_ulps": 0.0, "allowed_ulps": 0.0,  # a contract check measures no error
                  "message": "k = 0: no exception; k = -1: no exception",
                  "counterexample": {"inputs": "x = [[0, 1, 2]]", "expected": "ValueError naming 'k'",
                                     "got": "k = 0: no exception"}},
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


def benchmark_json():
    """pytest-benchmark's JSON as test_bench.py writes it: ours and peers per quantity and mode (ms)."""
    def bench(quantity, mode, label, ms, roofline_ms=None):
        out = {"name": f"test_bench[{quantity}-{mode}-{label}]", "stats": {"median": ms / 1e3, "min": ms / 2e3, "mean": ms / 1e3},
               "extra_info": {"quantity": quantity, "mode": mode, "implementation": label,
                              "ours": label.endswith(":losscheck"), "framework": label.split(":")[0]}}
        if roofline_ms is not None:  # asv_benchmarks/roofline.py's bounds, on our rows
            out["extra_info"]["roofline"] = {"seconds": roofline_ms / 1e3, "bound": "bytes", "bytes": roofline_ms / 1e3,
                                             "transcendentals": 0.0, "sort": 0.0}
        return out
    return {"benchmarks": [
        bench("logsumexp", "forward", "torch:losscheck", 1.0, roofline_ms=0.5),
        bench("logsumexp", "forward", "torch:torch.logsumexp", 4.0),
        bench("logsumexp", "forward", "jax:losscheck", 3.0), bench("logsumexp", "forward", "jax:jax.nn.logsumexp", 2.0),
        bench("logsumexp", "forward_backward", "torch:losscheck", 6.0),
        bench("logsumexp", "forward_backward", "torch:torch.logsumexp", 3.0),
        bench("softmax", "forward", "torch:losscheck", 2.5), bench("softmax", "forward", "torch:torch.softmax", 2.0),
        bench("entropy", "forward", "torch:losscheck", 1.0, roofline_ms=0.25),  # no peer: the roofline instead
        {"name": "test_engine_speed", "stats": {"median": 0.1}, "extra_info": {}},  # not ours vs a peer: ignored
    ]}


def svg_of(page, ident):
    """The <svg> element with id ``ident``."""
    start = page.index(f'<svg id="{ident}"')
    return page[start:page.index("</svg>", start)]


def cell_of(picture, tone):
    """The first heatmap cell of ``tone``."""
    start = picture.index(f'<g class="cell {tone}">')
    return picture[start:picture.index("</g>", start)]


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
    assert "stability[float16]" in line_with(md, "#### ✗ torch (ours)")


def test_matrix_cells_in_markdown(results):
    md = render_markdown(results)
    torch_row = line_with(md, "| torch (ours) | ✓ 1.5 ulp")
    assert "✗ bug inf ulp" in torch_row and "| – |" in torch_row
    jax_row = line_with(md, "| jax (ours) | ✓ 2 ulp")
    assert jax_row.count("–") == 2  # stability and grad not applicable for jax


def test_heatmap_cells_in_html(results):
    page = render_html(results)
    heatmap = svg_of(page, "heatmap-q-logsumexp")
    bug = cell_of(heatmap, "bug")
    assert ">inf</text>" in bug and "stability[float16]" in bug and FILL["bug"] in bug
    assert 'href="#f-1"' in heatmap and 'id="f-1"' in page  # the bug cell links to its counterexample
    holds = cell_of(heatmap, "holds")
    assert ">1.5</text>" in holds and "allowed 48 ulp" in holds
    assert '<g class="cell skipped">' in heatmap and '<g class="cell na">' in heatmap
    for tone, meaning in TONE_TEXT:  # the legend
        assert f">{meaning}</text>" in heatmap


def test_contract_cells_say_what_failed(results):
    md, page = render_markdown(results), render_html(results)
    contracts = md.split("### Contract checks", 1)[1].split("##", 1)[0]
    assert "✗ k = 0: no exception" in line_with(contracts, "| torch (ours) |")
    assert "ulp" not in contracts
    assert '✗ k = 0: no exception</a></td>' in page and "0 ulp" not in page.split("Contract checks", 1)[1].split("</table>")[0]
    failure = md.split("contract:k", 3)[-1]
    assert "**What failed:** k = 0: no exception" in failure and "Max error" not in failure


def test_undetermined_examples_are_counted_in_the_cell_and_explained(results):
    md, page = render_markdown(results), render_html(results)
    assert "undetermined" not in md and "undetermined" not in page
    results["audits"][1]["results"][0]["undetermined"] = 3
    md, page = render_markdown(results), render_html(results)
    assert "✓ 2 ulp (3 undetermined)" in line_with(md, "| jax (ours) | ✓")
    cell = [c for c in svg_of(page, "heatmap-q-logsumexp").split("<g ") if "jax (ours) · value[float32]" in c][0]
    assert "(3 undetermined)" in cell and ">2*</text>" in cell
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
    assert "**Overall: FAIL**" in md and "1 fail (1 bug, 0 accuracy, 0 range)" in md
    # torch: 1 holds, 1 fails, 0 error, 1 skipped, 0 deviates; contracts 0/1/0/0
    assert "| 1 | 1 | 0 | 1 | 0 | 0/1/0/0 |" in line_with(md, "| torch (ours) | `logsumexp`")
    assert "Overall: FAIL" in render_html(results)


def test_the_overall_verdict_is_at_the_default_gate(results):
    """A range or accuracy finding on our implementations is reported, and the verdict passes (the
    default gate is bug, as losscheck audit's exit status)."""
    import copy
    for r in (r for a in results["audits"] for r in a["results"] if r.get("severity") == "bug"):
        r["severity"] = "range"
    md = render_markdown(copy.deepcopy(results))
    assert "**Overall: PASS**" in md and "1 fail (0 bug, 0 accuracy, 1 range)" in md
    assert "accuracy and range findings are reported, not counted" in md


def test_overview_heatmap_shows_the_worst_finding(results):
    page = render_html(results)
    overview = svg_of(page, "overview-heatmap")
    assert ">1 bug</text>" in cell_of(overview, "bug") and ">✓ 1</text>" in cell_of(overview, "holds")
    assert 'href="#q-logsumexp"' in overview
    assert "| [logsumexp](#logsumexp) | ✗ 1 bug | ✓ 1 |" in render_markdown(results)


def test_claims_at_a_glance(results):
    page = render_html(results)
    assert '<span class="chip bad" title="logsumexp(x, k) = max(x): refuted">equals_max</span>' in page
    assert '<span class="chip good"' in line_with(page, ">limit_max</span>")
    assert "- [logsumexp](#logsumexp): ✓ limit_max, ❌ equals_max, ❌ bounds" in render_markdown(results)


def test_the_spec_is_stated_once_per_quantity_in_the_failures(results):
    results["audits"][1]["results"][0].update(verdict="fails", severity="accuracy", message="2 ULPs > 1")
    for text in (render_markdown(results), render_html(results)):
        failures = text.split("Failures of logsumexp", 1)[1]
        assert failures.count("The spec") == 1 and failures.count("reduces over the last axis") == 1
        assert failures.count("value[float32]") == 1 and failures.count("stability[float16]") == 1


def test_no_link_to_a_third_party_report_that_was_not_written(results, tmp_path):
    for text in (render_markdown(results), render_html(results)):
        assert "thirdparty." not in text
    paths = write_report(results, tmp_path)
    assert "thirdparty." not in paths["index.html"].read_text(encoding="utf-8")
    results["skipped_adapters"] = [{"adapter": "optax.dice", "quantity": "dice", "missing": "optax"}]
    assert 'href="thirdparty.html"' in render_html(results)  # the audit ran (it writes thirdparty.* first)
    assert "(thirdparty.md)" in render_markdown(results)
    paths = write_report(results, tmp_path)  # in a folder: only to files that are there
    assert "thirdparty." not in paths["index.html"].read_text(encoding="utf-8")
    for name in ("thirdparty.html", "thirdparty.md"):
        (tmp_path / name).write_text("written by audit_all", encoding="utf-8")
    paths = write_report(results, tmp_path)
    assert 'href="thirdparty.html"' in paths["index.html"].read_text(encoding="utf-8")
    assert "[thirdparty.md](thirdparty.md)" in paths["index.md"].read_text(encoding="utf-8")


def test_every_link_is_to_an_anchor_of_the_page(results):
    results["audits"][1]["results"][0].update(verdict="error", message="raised RuntimeError")
    page = render_html(results)
    ids = set(re.findall(r'id="([^"]+)"', page))
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs), sorted(set(h for h in hrefs if h[1:] not in ids))


def test_every_markdown_link_is_to_a_heading_of_the_file(results):
    results["skipped_adapters"] = []  # the third-party audit ran: its report is linked
    md = render_markdown(results, benchmarks=benchmark_json())
    headings = {slug(line.lstrip("#").strip()) for line in md.splitlines() if line.startswith("#")}
    links = re.findall(r"\]\(([^)]*)\)", md)
    assert {"#at-a-glance", "#logsumexp", "#failures", "thirdparty.md"} <= set(links)
    assert all(link[1:] in headings if link.startswith("#") else link in ("thirdparty.md", "thirdparty.html") for link in links)


def test_every_table_is_in_a_scrolling_container(results):
    page = render_html(results)
    assert page.count("<table") == page.count('<div class="scroll"><table')
    assert ".scroll { max-width: 100%; overflow-x: auto; }" in page
    assert re.findall(r'<svg [^>]*style="max-width:100%;height:auto"', page)


def test_speed_chart_from_pytest_benchmark_json(results, tmp_path):
    page = render_html(results)
    assert 'id="speed-chart"' not in page and "no speed chart" in page
    bench = benchmark_json()
    page = render_html(results, benchmarks=bench)
    chart = svg_of(page, "speed-chart")
    assert chart.count('<g class="bar') == 3  # logsumexp forward and forward_backward, softmax forward
    assert ">0.50×</text>" in chart and ">2.00×</text>" in chart and ">1.25×</text>" in chart
    assert "jax:jax.nn.logsumexp" in chart  # the fastest peer of any framework, in the bar's tooltip
    md = render_markdown(results, benchmarks=bench)
    assert "| logsumexp | forward | all | 1.000 | jax:jax.nn.logsumexp | 2.000 | 0.50 |" in md
    (tmp_path / "benchmarks.json").write_text(json.dumps(bench), encoding="utf-8")
    paths = write_report(results, tmp_path)  # found beside the report
    assert 'id="speed-chart"' in paths["index.html"].read_text(encoding="utf-8")
    assert "benchmarks.json" not in json.loads(paths["results.json"].read_text(encoding="utf-8"))


def test_speed_ratios():
    rows = speed.ratios(benchmark_json())
    by = {(r.quantity, r.mode, r.framework): r for r in rows}
    assert by[("logsumexp", "forward", "torch")].ratio == pytest.approx(1e-3 / 4e-3)
    assert by[("logsumexp", "forward", "all")].peer == "jax:jax.nn.logsumexp"
    assert by[("entropy", "forward", "torch")].ratio is None  # no peer: our time only
    assert [(r.quantity, r.mode, r.framework) for r in speed.headline(rows)] == [
        ("logsumexp", "forward", "all"), ("logsumexp", "forward_backward", "torch"), ("softmax", "forward", "torch")]
    assert "logsumexp  forward" in speed.format_table(rows)
    # the roofline of a call is the machine's: the same beside every framework's row (and "all")
    assert by[("logsumexp", "forward", "jax")].roofline == pytest.approx(0.5e-3)
    assert by[("logsumexp", "forward", "all")].of_roofline == pytest.approx(2.0)
    assert by[("logsumexp", "forward_backward", "torch")].roofline is None  # not measured
    assert [(r.quantity, r.framework, r.of_roofline) for r in speed.peerless(rows)] == [("entropy", "torch", pytest.approx(4.0))]
    entropy = next(line for line in speed.format_table(rows).splitlines() if line.startswith("entropy"))
    assert entropy.split()[-2:] == ["0.250", "4.0"]


def test_the_report_shows_ours_against_the_roofline_where_there_is_no_peer(results):
    md = render_markdown(results, benchmarks=benchmark_json())
    assert "| entropy | forward | torch | 1.000 | 0.250 | 4.0 |" in md
    assert "| logsumexp | forward | torch | 1.000 | 0.500" not in md  # it has a peer: the ratio table only
    page = render_html(results, benchmarks=benchmark_json())
    assert "<td>entropy</td><td>forward</td><td>torch</td><td>1.000</td><td>0.250</td><td>4.0</td>" in page


def test_html_is_self_contained_and_escaped(results):
    results["quantities"]["logsumexp"]["reference"] = "<script>alert(1)</script>"
    page = render_html(results, benchmarks=benchmark_json())
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower()
    assert "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert 'id="q-logsumexp"' in page and 'href="#q-logsumexp"' in page
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page


def test_document_model_is_frozen(results):
    doc = assemble.build(results)
    assert doc.overall.verdict == "FAIL" and doc.failure_count == 2
    cell = doc.quantities[0].conformance.rows[0].cells[1]
    assert (cell.tone, cell.text, cell.short, cell.anchor) == ("bug", "✗ bug inf ulp", "inf", "f-1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cell.tone = "holds"


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
    assert "✗ bug inf ulp" in paths["index.md"].read_text(encoding="utf-8")
    assert 'id="heatmap-q-logsumexp"' in paths["index.html"].read_text(encoding="utf-8")


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


# --------------------------------------------------------------------------
# The accuracy grade (implementations × dtypes) and the third-party findings by severity
# --------------------------------------------------------------------------

def conformance(prop, verdict, max_ulps=None, allowed=48.0, **extra):
    return {"property": prop, "kind": "conformance", "verdict": verdict, "examples": 15, "max_ulps": max_ulps,
            "allowed_ulps": allowed, "message": "", "counterexample": None, **extra}


def grade_of(grades, label, dtype):
    row = next(r for r in grades.rows if r.label == label)
    return row.cells[grades.columns.index(dtype)]


def graded_results():
    """torch: value[float32] 3.5 ulp beside a stability[float32] bug of 1e9 ulp (the extreme domain: not
    graded), an off-domain gradient failure, masked[float64], an error in bfloat16; a second quantity."""
    results = make_results()
    torch_results = results["audits"][0]["results"]
    torch_results[0]["max_ulps"] = 3.5
    torch_results += [
        conformance("stability[float32]", "fails", 1e9, severity="bug", off_domain=""),
        conformance("gradient[float32]", "fails", 1e6, 96.0, severity="range", off_domain="x = 3e38 beyond 1e4"),
        conformance("gradient[float64]", "fails", 2e5, 64.0, severity="range", off_domain="x = 1e-300 below 1e-30"),
        conformance("masked[float64]", "holds", 7.0, 52.0),
        conformance("value[float64]", "holds", 0.5, 40.0),
        {**conformance("gradient[bfloat16]", "error"), "message": "raised RuntimeError"},
    ]
    results["audits"].append({"label": "torch (ours)", "quantity": "softmax", "framework": "torch", "device": "cpu",
                              "third_party": False, "target": "losscheck.impls.torch_smoothing:softmax",
                              "results": [conformance("value[float32]", "holds", 9.0, 30.0),
                                          conformance("gradient[float32]", "holds", 2.0, 60.0)]})
    return results


def test_accuracy_grade_is_the_worst_ulps_on_the_typical_domain():
    doc = assemble.build(render.sanitize(graded_results()))
    grades = doc.quantities[0].accuracy
    assert grades.columns == ("float16", "bfloat16", "float32", "float64")
    cell = grade_of(grades, "torch (ours)", "float32")  # value 3.5; stability's 1e9 and the off-domain 1e6 do not count
    assert (cell.tone, cell.value, cell.allowed, cell.text) == ("holds", "3.5", "48", "✓ 3.5 / 48")
    assert "gradient[float32] fails outside the typical domain (x = 3e38 beyond 1e4): not counted" in cell.title
    assert grade_of(grades, "torch (ours)", "float16") == dataclasses.replace(cell, tone="na", value="–", allowed="", text="–",
                                                                              title="not run", anchor="")  # stability only
    masked = grade_of(grades, "torch (ours)", "float64")  # masked counts; the off-domain gradient does not
    assert (masked.value, masked.allowed, masked.tone) == ("7", "52", "holds") and "masked[float64] 7 ulp" in masked.title
    error = grade_of(grades, "torch (ours)", "bfloat16")
    assert (error.tone, error.value, error.text) == ("error", "error", "error") and error.anchor.startswith("f-")
    assert grade_of(grades, "jax (ours)", "float32").value == "2"
    # over every quantity: softmax's value[float32] is torch's worst in float32, with its own bound
    overall = grade_of(doc.accuracy, "torch (ours)", "float32")
    assert (overall.value, overall.allowed) == ("9", "30") and "softmax · value[float32] 9 ulp" in overall.title
    softmax = next(q for q in doc.quantities if q.name == "softmax")
    assert grade_of(softmax.accuracy, "torch (ours)", "float32").value == "9" and [r.label for r in softmax.accuracy.rows] == ["torch (ours)"]


def test_accuracy_grade_only_off_domain_failures_is_within_the_bound():
    results = make_results()
    results["audits"][1]["results"] = [conformance("value[float32]", "fails", 1e7, 48.0, severity="range",
                                                   off_domain="result of scale 1e-40 < 1e-30")]
    cell = grade_of(assemble.build(results).accuracy, "jax (ours)", "float32")
    assert (cell.tone, cell.value, cell.text) == ("holds", "≤ 48", "✓ ≤ 48") and "1e+07" not in cell.title and "not counted" in cell.title


def test_accuracy_grade_colours_by_the_worst_finding_and_links_to_it():
    results = make_results()
    results["audits"][1]["results"] = [
        conformance("value[float32]", "holds", 2.0, 48.0),
        conformance("gradient[float32]", "fails", 300.0, 96.0, severity="accuracy", off_domain="", message="300 ulp > 96"),
        conformance("value[float64]", "fails", "inf", 0.0, severity="bug", off_domain=""),  # a NaN: no bound of its own
        conformance("gradient[float64]", "holds", 3.0, 80.0),
        conformance("value[float16]", "deviates", 5e4, 48.0, conventions=["pixel+1"]),
    ]
    doc = assemble.build(render.sanitize(results))
    grades = doc.quantities[0].accuracy
    accuracy = grade_of(grades, "jax (ours)", "float32")
    assert (accuracy.tone, accuracy.value, accuracy.allowed, accuracy.text) == ("accuracy", "300", "96", "✗ accuracy 300 / 96")
    failure = next(f for g in doc.failures for f in g.failures if f.label == "jax (ours)" and f.property == "gradient[float32]")
    assert accuracy.anchor == failure.anchor
    bug = grade_of(grades, "jax (ours)", "float64")
    assert (bug.tone, bug.value, bug.allowed, bug.text) == ("bug", "inf", "80", "✗ bug inf / 80")
    assert (grade_of(grades, "jax (ours)", "float16").tone, grade_of(grades, "jax (ours)", "float16").value) == ("deviates", "≈")
    md = render_markdown(results)
    assert "| jax (ours) | ≈ | – | ✗ accuracy 300 / 96 | ✗ bug inf / 80 |" in md.split("### Accuracy grade", 1)[1]
    assert "| jax (ours) | ≈ | – | ✗ accuracy 300 / 96 | ✗ bug inf / 80 |" in md.split("### Accuracy\n", 1)[1].split("##", 1)[0]
    page = render_html(results)
    top = page.split('<h3 id="accuracy">', 1)[1].split("</table>", 1)[0]
    cell = re.search(r'<td class="accuracy" title="([^"]*)"><a href="#(f-\d+)">300 <span class="allowed">/ 96</span></a></td>', top)
    assert cell and cell.group(2) == accuracy.anchor and "gradient[float32] 300 ulp (allowed 96)" in cell.group(1)
    assert f"table.grades td.accuracy {{ background: {FILL['accuracy']};" in page  # the heatmap's colours
    assert '<a href="#accuracy">Accuracy</a>' in page and "[Accuracy](#accuracy)" in md


def thirdparty_results():
    """thirdparty.*: two adapters, findings of every kind, one explained by a known deviation."""
    results = make_results()
    results["kind"] = "thirdparty"
    known = {"reason": "the library clamps at 1e-7", "upstream": "lib#12"}
    a = [conformance("value[float32]", "fails", 1e9, severity="bug", off_domain="", known=known),
         conformance("value[float64]", "fails", 1e9, severity="bug", off_domain=""),
         conformance("gradient[float32]", "fails", 300.0, severity="accuracy", off_domain=""),
         conformance("stability[float32]", "fails", 1e20, severity="range", off_domain="x = 1e38"),
         {**conformance("gradient[float64]", "error"), "message": "raised ValueError"},
         conformance("masked[float32]", "deviates", conventions=["pixel+1"]),
         conformance("value[float16]", "holds", 1.0),
         {"property": "contract:k", "kind": "contract", "verdict": "fails", "examples": 1, "message": "no exception"}]
    b = [conformance("value[float32]", "holds", 1.0), conformance("gradient[float32]", "fails", 1e9, severity="bug", off_domain="")]
    results["audits"] = [{"label": label, "quantity": "logsumexp", "framework": "torch", "device": "cpu", "third_party": True,
                          "target": f"{label}:lse", "results": rs} for label, rs in (("liba.lse", a), ("libb.lse", b))]
    return results


def test_third_party_findings_are_counted_by_severity():
    doc = assemble.build(thirdparty_results())
    counts = {f.label: f.counts for f in doc.third_party.findings}
    assert counts["liba.lse"] == {"bug": 2, "accuracy": 1, "range": 1, "error": 1, "known": 1}  # not the contract, not ≈
    assert counts["libb.lse"] == {"bug": 1, "accuracy": 0, "range": 0, "error": 0, "known": 0}
    assert counts["Total (2 adapters)"] == {"bug": 3, "accuracy": 1, "range": 1, "error": 1, "known": 1}
    adapter = next(a for a in doc.third_party.adapters if a.label == "liba.lse")
    assert "findings: 2 bug, 1 accuracy, 1 range, 1 error (1 explained by a known deviation)" in adapter.counts
    assert "(1 of the failures and errors explained by a known deviation)" in doc.overall.explanation
    md = render_markdown(thirdparty_results())
    table = md.split("### Findings by severity", 1)[1].split("###", 1)[0]
    assert "| Adapter | Quantity | bug | accuracy | range | error | of which known |" in table
    assert "| liba.lse | `logsumexp` | 2 | 1 | 1 | 1 | 1 |" in table
    assert "| **Total (2 adapters)** |  | 3 | 1 | 1 | 1 | 1 |" in table
    assert "[Findings by severity](#findings-by-severity)" in md
    page = render_html(thirdparty_results())
    assert '<h3 id="findings-by-severity">' in page and '<td class="num bug"><strong>3</strong></td>' in page
    # index.*: the same counts in its third-party section (no third-party code: no table)
    results = thirdparty_results()
    del results["kind"]
    assert "| liba.lse | `logsumexp` | 2 | 1 | 1 | 1 | 1 |" in render_markdown(results)
    assert "Findings by severity" not in render_markdown(make_results())
