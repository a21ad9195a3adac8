"""Ratio table from pytest-benchmark's JSON: ours / fastest peer.

Usage::

    python -m asv_benchmarks.ratios FILE [--stat median|min|mean]

FILE is what ``pytest properties/tests/test_bench.py --benchmark-only
--benchmark-json FILE`` wrote.  One row per quantity, mode and framework:
our time, the fastest peer of that framework and the ratio (> 1: ours is
slower); a row ``all`` compares our fastest framework with the fastest peer
of any framework.  Quantities without peers show our times only.  The
computation is ``losscheck.reports.speed`` (the report draws the same ratios).
"""

from __future__ import annotations

import argparse
import json


def __getattr__(name):
    """``ratios``, ``format_table`` and ``_record`` of losscheck.reports.speed, imported when first used: asv
    imports every module of asv_benchmarks/ to discover benchmarks, on commits whose losscheck lacks them too."""
    if name in ("ratios", "format_table", "_record"):
        from losscheck.reports import speed
        return getattr(speed, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m asv_benchmarks.ratios", description=__doc__.split("\n")[0])
    parser.add_argument("file", help="pytest-benchmark JSON (--benchmark-json FILE)")
    parser.add_argument("--stat", default="median", choices=("median", "min", "mean"))
    args = parser.parse_args(argv)
    from losscheck.reports.speed import format_table, ratios
    with open(args.file) as fh:
        data = json.load(fh)
    rows = ratios(data, args.stat)
    if not rows:
        print(f"no losscheck benchmarks in {args.file}")
        return 1
    print(format_table(rows, args.stat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
