"""Every quantity in the registry has both implementations, a benchmark and a
report row — the registry cannot grow a half-finished record."""

import json
import re
import tomllib
from pathlib import Path

import pytest

from losscheck import impls, spec

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fw", ["torch", "jax"])
def test_every_quantity_is_implemented(fw):
    pytest.importorskip(fw)
    missing = set(spec.QUANTITIES) - set(impls.implementations(fw))
    assert not missing, f"no {fw} implementation of {sorted(missing)}"


def test_every_quantity_has_benchmarks():
    from asv_benchmarks import benchmarks
    covered = set(benchmarks.benchmarked_quantities())
    assert set(spec.QUANTITIES) <= covered, set(spec.QUANTITIES) - covered


def test_asv_environment_follows_the_constraints_and_has_the_peers():
    """asv.conf.json's matrix pins torch, jax and jaxlib as constraints.txt does (a fresh clone's asv
    environment is the CPU build CI uses) and installs every peer of the `bench` extra."""
    text = (ROOT / "asv.conf.json").read_text(encoding="utf-8")
    conf = json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))
    req = conf["matrix"]["req"]
    pins = dict(re.match(r"([\w-]+)==(\S+)", line).groups() for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#"))
    assert {name: req.get(name) for name in pins} == {name: [version] for name, version in pins.items()}
    bench = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bench"]
    peers = {re.match(r"[\w-]+", r).group(0) for r in bench} - {"asv", "pytest-benchmark", "virtualenv"}
    assert peers <= set(req), peers - set(req)
    assert "{build_dir}/constraints.txt" in conf["install_command"][0]


def test_every_quantity_has_a_report_row():
    from losscheck.reports.build import build_results
    from losscheck.reports.render import render_markdown
    results = build_results([], symbolic=False)
    md = render_markdown(results)
    for name, q in spec.QUANTITIES.items():
        assert name in results["quantities"]
        assert q.formula in md


def test_records_are_complete():
    for q in spec.QUANTITIES.values():
        assert q.formula and q.reference and q.claims, q.name
        assert q.array_args, q.name
        for c in q.numerical_claims:
            assert c.tolerance, f"{q.name}.{c.name} has no tolerance reason"
