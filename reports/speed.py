"""Speed ratios ours / fastest peer from pytest-benchmark's JSON.

``pytest properties/tests/test_bench.py --benchmark-only --benchmark-json FILE`` (``nox -s bench``
writes ``reports/out/benchmarks.json``) records one benchmark per quantity, mode and
implementation; :func:`ratios` turns it into one row per quantity, mode and framework: our time,
the fastest peer of that framework and the ratio (> 1: ours is slower), and a row ``all`` that
compares our fastest framework with the fastest peer of any framework; and beside each, the
machine's roofline for the call where the benchmark measured one (asv_benchmarks/roofline.py),
the only comparison a framework without a peer has (:func:`peerless`).  The report draws them
(reports/svg.py); ``python -m asv_benchmarks.ratios FILE`` prints them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Ratio:
    """One comparison: our time against the fastest peer's (times in seconds)."""
    quantity: str
    mode: str
    #: the framework compared ("torch", "jax") or "all" (our fastest against any framework's fastest peer)
    framework: str
    ours: float | None
    peer: str | None
    peer_seconds: float | None
    ratio: float | None
    #: the machine's least time for the call (asv_benchmarks/roofline.py: bytes, transcendentals, sorts), where measured
    roofline: float | None = None

    @property
    def of_roofline(self) -> float | None:
        """Our time / the roofline (> 1: slower than the machine's bound, as every real call is)."""
        return self.ours / self.roofline if self.ours is not None and self.roofline else None

    def __iter__(self):  # unpacks as the tuple asv_benchmarks.ratios has always printed
        return iter((self.quantity, self.mode, self.framework, self.ours, self.peer, self.peer_seconds, self.ratio))


def _record(bench: dict) -> dict | None:
    info = bench.get("extra_info") or {}
    params = bench.get("params") or {}
    quantity = info.get("quantity", params.get("quantity"))
    mode = info.get("mode", params.get("mode"))
    label = info.get("implementation", params.get("label"))
    if not (quantity and mode and label and ":" in label and isinstance(bench.get("stats"), dict)):
        return None
    framework, who = label.split("@", 1)[0].split(":", 1)
    roof = info.get("roofline")
    roof = roof.get("seconds") if isinstance(roof, dict) else None
    return {"quantity": quantity, "mode": mode, "framework": framework, "label": label,
            "ours": info.get("ours", who == "losscheck"), "stats": bench["stats"],
            "roofline": roof if isinstance(roof, (int, float)) and roof > 0 else None}


def ratios(data: dict, stat: str = "median") -> list[Ratio]:
    """Rows (quantity, mode, framework, ours s, peer label, peer s, ratio; and the roofline s): peer
    entries are None where there is no peer, the roofline where the benchmark did not measure one."""
    groups: dict = defaultdict(lambda: defaultdict(dict))
    roofs: dict = {}
    for bench in data.get("benchmarks", ()) if isinstance(data, dict) else ():
        r = _record(bench) if isinstance(bench, dict) else None
        if r is None or not isinstance(r["stats"].get(stat), (int, float)):
            continue
        side = "ours" if r["ours"] else "peers"
        groups[(r["quantity"], r["mode"])][r["framework"]].setdefault(side, {})[r["label"]] = r["stats"][stat]
        if r["ours"] and r["roofline"] is not None:  # the machine's bound: the same call in every framework
            roofs[(r["quantity"], r["mode"])] = r["roofline"]
    rows = []
    for (quantity, mode), frameworks in groups.items():
        best: dict[str, Any] = {"ours": None, "peers": None}
        for framework, sides in sorted(frameworks.items()):
            ours = min(sides.get("ours", {}).values(), default=None)
            peer = min(sides.get("peers", {}).items(), key=lambda kv: kv[1], default=None)
            if ours is None and peer is None:
                continue
            rows.append(Ratio(quantity, mode, framework, ours, *(peer or (None, None)),
                              ours / peer[1] if ours is not None and peer and peer[1] > 0 else None,
                              roofs.get((quantity, mode))))
            if ours is not None and (best["ours"] is None or ours < best["ours"]):
                best["ours"] = ours
            if peer and (best["peers"] is None or peer[1] < best["peers"][1]):
                best["peers"] = peer
        if len(frameworks) > 1 and best["ours"] is not None and best["peers"] and best["peers"][1] > 0:
            rows.append(Ratio(quantity, mode, "all", best["ours"], *best["peers"], best["ours"] / best["peers"][1],
                              roofs.get((quantity, mode))))
    return rows


def headline(rows: list[Ratio]) -> list[Ratio]:
    """One comparison per quantity and mode, as the report's chart shows it: the ``all`` row where
    there is one (our fastest against the fastest peer of any framework), else the framework's row;
    quantities without a peer are left out."""
    best: dict[tuple[str, str], Ratio] = {}
    for r in rows:
        if r.ratio is None:
            continue
        key = (r.quantity, r.mode)
        if key not in best or r.framework == "all":
            best[key] = r
    return list(best.values())


#: What the report says of the roofline table (reports/md_writer.py and html_writer.py)
ROOFLINE_NOTE = ("Without a peer: our time / the machine's roofline, the least time the call's bytes, transcendental "
                 "functions or sort take at this machine's measured rates (asv_benchmarks/roofline.py).")


def peerless(rows: list[Ratio]) -> list[Ratio]:
    """The rows of a framework without a peer for the quantity that have a roofline: ours against the
    machine's bound (one per quantity, mode and framework)."""
    return [r for r in rows if r.ratio is None and r.framework != "all" and r.of_roofline is not None]


def load(source: str | Path | dict | None) -> dict | None:
    """pytest-benchmark's JSON from a path or as already read; None where there is none (a missing
    or unreadable file, not a benchmark file)."""
    if source is None or isinstance(source, dict):
        return source
    try:
        with open(source, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def format_table(rows: list[Ratio], stat: str = "median") -> str:
    """The rows as a plain-text table (milliseconds)."""
    header = ("quantity", "mode", "framework", f"ours {stat} ms", "fastest peer", f"peer {stat} ms", "ours/peer",
              "roofline ms", "ours/roofline")
    body = [(r.quantity, r.mode, r.framework, _ms(r.ours), r.peer or "-", _ms(r.peer_seconds),
             "-" if r.ratio is None else f"{r.ratio:.2f}", _ms(r.roofline),
             "-" if r.of_roofline is None else f"{r.of_roofline:.1f}") for r in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip()
             for line in (header, tuple("-" * w for w in widths), *body)]
    return "\n".join(lines)
