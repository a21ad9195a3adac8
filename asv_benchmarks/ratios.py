"""Ratio table from pytest-benchmark's JSON: ours / fastest peer.

Usage::

    python -m asv_benchmarks.ratios FILE [--stat median|min|mean]

FILE is what ``pytest properties/tests/test_bench.py --benchmark-only
--benchmark-json FILE`` wrote.  One row per quantity, mode and framework:
our time, the fastest peer of that framework and the ratio (> 1: ours is
slower); a row ``all`` compares our fastest framework with the fastest peer
of any framework.  Quantities without peers show our times only.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict


def _record(bench: dict) -> dict | None:
    info = bench.get("extra_info") or {}
    params = bench.get("params") or {}
    quantity = info.get("quantity", params.get("quantity"))
    mode = info.get("mode", params.get("mode"))
    label = info.get("implementation", params.get("label"))
    if not (quantity and mode and label):
        return None
    framework, who = label.split("@", 1)[0].split(":", 1)
    return {"quantity": quantity, "mode": mode, "framework": framework, "label": label,
            "ours": info.get("ours", who == "losscheck"), "stats": bench["stats"]}


def ratios(data: dict, stat: str = "median") -> list[tuple]:
    """Rows (quantity, mode, framework, ours s, peer label, peer s, ratio);
    peer entries are None where there is no peer."""
    groups: dict = defaultdict(lambda: defaultdict(dict))
    for bench in data.get("benchmarks", ()):
        r = _record(bench)
        if r is None:
            continue
        side = "ours" if r["ours"] else "peers"
        groups[(r["quantity"], r["mode"])][r["framework"]].setdefault(side, {})[r["label"]] = r["stats"][stat]
    rows = []
    for (quantity, mode), frameworks in groups.items():
        best = {"ours": None, "peers": None}
        for framework, sides in sorted(frameworks.items()):
            ours = min(sides.get("ours", {}).values(), default=None)
            peer = min(sides.get("peers", {}).items(), key=lambda kv: kv[1], default=None)
            if ours is None and peer is None:
                continue
            rows.append((quantity, mode, framework, ours, *(peer or (None, None)),
                         ours / peer[1] if ours is not None and peer else None))
            if ours is not None and (best["ours"] is None or ours < best["ours"]):
                best["ours"] = ours
            if peer and (best["peers"] is None or peer[1] < best["peers"][1]):
                best["peers"] = peer
        if len(frameworks) > 1 and best["ours"] is not None and best["peers"]:
            rows.append((quantity, mode, "all", best["ours"], *best["peers"],
                         best["ours"] / best["peers"][1]))
    return rows


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def format_table(rows: list[tuple], stat: str = "median") -> str:
    header = ("quantity", "mode", "framework", f"ours {stat} ms", "fastest peer",
              f"peer {stat} ms", "ours/peer")
    body = [(q, m, f, _ms(o), p or "-", _ms(pt), "-" if r is None else f"{r:.2f}")
            for q, m, f, o, p, pt, r in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip()
             for line in (header, tuple("-" * w for w in widths), *body)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m asv_benchmarks.ratios", description=__doc__.split("\n")[0])
    parser.add_argument("file", help="pytest-benchmark JSON (--benchmark-json FILE)")
    parser.add_argument("--stat", default="median", choices=("median", "min", "mean"))
    args = parser.parse_args(argv)
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
