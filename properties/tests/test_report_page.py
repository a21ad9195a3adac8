"""The HTML report in a browser: headless Chromium lays out a report at 1400 px, and the page must
be no wider than the window and show its pictures (the heatmaps, the speed chart).  Skipped, with
the reason, where no Chromium is installed (``apt-get install chromium``)."""

import json
import re
import shutil
import subprocess

import pytest
from test_render import benchmark_json, make_results

from losscheck.reports.render import write_report

WIDTH = 1400
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((path for path in map(shutil.which, BROWSERS) if path), None)

pytestmark = pytest.mark.skipif(BROWSER is None, reason=f"no headless Chromium on PATH ({', '.join(BROWSERS)}): "
                                                        "the report page is not checked in a browser")

#: appended to a copy of the page (the report itself carries no script): the layout's widths, into the DOM
MEASURE = """<script>
const wrapped = [...document.querySelectorAll('.scroll')].map(d => d.scrollWidth - d.clientWidth);
const pictures = [...document.querySelectorAll('svg')].map(s => Math.round(s.getBoundingClientRect().right));
document.body.setAttribute('data-measure', JSON.stringify({page: document.documentElement.scrollWidth,
  window: window.innerWidth, overflow: Math.max(0, ...wrapped), right: Math.max(0, ...pictures),
  ids: [...document.querySelectorAll('svg')].map(s => s.id),
  grades: [...document.querySelectorAll('table.grades')].map(t => Math.round(t.getBoundingClientRect().right))}));
</script>"""


def wide_results():
    """A report that strains the width: many properties with long names, long labels, messages,
    snippets and contract findings, a third-party adapter."""
    results = make_results()
    torch_results = results["audits"][0]["results"]
    for family in ("value", "gradient", "stability", "masked"):
        for dtype in ("float16", "bfloat16", "float32", "float64"):
            torch_results.append({"property": f"{family}[{dtype}]", "kind": "conformance", "verdict": "holds",
                                  "examples": 25, "max_ulps": 0.125, "allowed_ulps": 48.0, "message": ""})
    for i in range(8):
        torch_results.append({"property": f"claim:a_rather_long_claim_name_number_{i}", "kind": "conformance",
                              "verdict": "fails" if i == 3 else "holds", "severity": "accuracy", "examples": 25,
                              "max_ulps": 1234.5 if i == 3 else None, "message": "x" * 400,
                              "counterexample": {"snippet": "import torch\nprint(" + "1 + " * 200 + "1)"}})
    for arg in ("scores", "labels", "weights", "smoothing_constant"):
        torch_results.append({"property": f"contract:{arg}", "kind": "contract", "verdict": "fails", "examples": 1,
                              "max_ulps": 0.0, "message": "no exception",
                              "counterexample": {"got": f"{arg} = [[nan, inf, -inf, 1e308, -1e308]]: no exception, "
                                                        "the function returned a value instead of raising ValueError"}})
    results["audits"].append({"label": "seed042.a_third_party_adapter_with_a_long_name", "quantity": "logsumexp",
                              "framework": "torch", "device": "cpu", "third_party": True, "target": "seeds/seed042.py:lse",
                              "results": [dict(r) for r in torch_results[:12]]})
    results["environment"]["devices"] = [f"torch:cuda:{i}" for i in range(40)]
    return results


def chromium(*args, cwd):
    """Run headless Chromium; its stdout."""
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={WIDTH},1000",
               f"--user-data-dir={cwd / 'profile'}", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    (out / "benchmarks.json").write_text(json.dumps(benchmark_json()), encoding="utf-8")
    return write_report(wide_results(), out)["index.html"]


def test_the_page_fits_the_window_and_shows_its_pictures(page):
    measured = page.with_name("measured.html")
    measured.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "\n</body>"), encoding="utf-8")
    dom = chromium("--dump-dom", measured.as_uri(), cwd=page.parent)
    found = re.search(r'data-measure="([^"]*)"', dom)
    assert found, dom[:2000]
    measure = json.loads(found.group(1).replace("&quot;", '"'))
    assert measure["window"] == WIDTH
    assert measure["page"] <= WIDTH, measure  # nothing wider than the window
    assert measure["right"] <= WIDTH, measure  # every picture within it
    assert measure["overflow"] == 0, measure  # no table needs its scroll bar
    assert {"overview-heatmap", "speed-chart", "heatmap-q-logsumexp"} <= set(measure["ids"])
    assert len(measure["grades"]) == 2 and max(measure["grades"]) <= WIDTH, measure  # the accuracy grades: overall, logsumexp
    ids = set(re.findall(r' id="([^"]+)"', dom))
    for href in set(re.findall(r' href="([^"]*)"', dom)):  # no dead link
        assert href[1:] in ids if href.startswith("#") else (page.parent / href).is_file(), href


def test_screenshot(page):
    shot = page.with_name("report.png")
    chromium(f"--screenshot={shot}", page.as_uri(), cwd=page.parent)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
