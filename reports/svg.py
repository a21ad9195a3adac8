"""The report's pictures as inline SVG (no script, no network): a heatmap of a document Matrix and
the chart of speed ratios.  Sizes are estimated from the text (no font metrics); every picture
carries a viewBox and ``max-width: 100%``, so it shrinks to the page and is never wider than it."""

from __future__ import annotations

import math
from html import escape

from .document import TONE_TEXT, Matrix, Speed

#: fill and ink of each tone (document.TONES)
FILL = {"holds": "#c7e9c0", "bug": "#d7301f", "fails": "#d7301f", "accuracy": "#fc8d59", "range": "#fdd49e",
        "error": "#6a3d9a", "deviates": "#9ecae1", "skipped": "#e3e3e3", "na": "#f7f7f7"}
INK = {"bug": "#fff", "fails": "#fff", "error": "#fff", "na": "#aaa", "skipped": "#666"}
FASTER, SLOWER = ("#1a9850", "#a6d96a"), ("#d73027", "#fdae61")  # (forward, forward + backward)
FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"'
CHAR = 0.6  # a character's width, in font sizes (an estimate for a sans-serif font)
MAX_WIDTH = 1160  # the page's width for a picture (reports/html_writer.py: 1200 px less a margin)
MAX_LABEL, MAX_COLUMN_NAME = 240, 200  # pixels of a row label, of a column name (longer ones are cut, the tooltip has them)
ANGLE = 55  # degrees the column names are turned
SIN, COS = math.sin(math.radians(ANGLE)), math.cos(math.radians(ANGLE))


def _width(text: str, size: float) -> float:
    return len(text) * size * CHAR


def _svg(body: list[str], width: float, height: float, ident: str, cls: str, label: str) -> str:
    w, h = math.ceil(width), math.ceil(height)
    return (f'<svg id="{escape(ident)}" class="{cls}" role="img" aria-label="{escape(label)}" '
            f'width="{w}" height="{h}" viewBox="0 0 {w} {h}" style="max-width:100%;height:auto" {FONT} font-size="12">\n'
            + "\n".join(body) + "\n</svg>")


def _legend(items: list[tuple[str, str]], y: float, width: float, x0: float = 4) -> tuple[list[str], float]:
    """Swatches (fill, text) laid out in lines that fit width; returns (elements, height used)."""
    out, x, line = [], x0, 0
    for fill, label in items:
        step = 18 + _width(label, 11) + 14
        if x + step > width and x > x0:
            x, line = x0, line + 1
        yy = y + line * 18
        out.append(f'<rect x="{x:.0f}" y="{yy:.0f}" width="12" height="12" fill="{fill}" stroke="#999" stroke-width="0.5"/>'
                   f'<text x="{x + 17:.0f}" y="{yy + 10:.0f}" font-size="11">{escape(label)}</text>')
        x += step
    return out, (line + 1) * 18


def _clip(text: str, size: float, room: float) -> str:
    """text cut to fit ``room`` pixels (with "…")."""
    most = max(4, int(room / (size * CHAR)))
    return text if len(text) <= most else text[:most - 1] + "…"


def _layout(columns: tuple[str, ...], label_w: float, size: float) -> tuple[float, float, float]:
    """(column width, header height, picture width) for rotated column names: the widest columns
    (at most 56 px) whose grid and names fit MAX_WIDTH; 34 px where none does (the picture then shrinks)."""
    lengths = [_width(c, size) for c in columns]
    head_h = max(lengths, default=0) * SIN + 18
    for col_w in range(56, 33, -2):
        width = max([label_w + len(columns) * col_w + 8]
                    + [label_w + j * col_w + col_w / 2 + n * COS + 4 for j, n in enumerate(lengths)])
        if width <= MAX_WIDTH:
            break
    return col_w, head_h, width


def heatmap(matrix: Matrix, ident: str, label: str, *, rotate: bool = True, note: str = "",
            legend: tuple[tuple[str, str], ...] = TONE_TEXT) -> str:
    """Rows × columns of coloured cells with their short text (the full sentence as a tooltip); a
    failing cell links to its failure block, a row label to its section (where the row has an
    anchor); a legend below.  ``rotate``: column names at an angle (many narrow columns)."""
    row_h, size = 24, 11
    labels = [row.label + (" ✦" if row.third_party else "") for row in matrix.rows]
    label_w = min(MAX_LABEL, max((_width(t, 12) for t in labels), default=40)) + 14
    columns = tuple(_clip(c, size, MAX_COLUMN_NAME) for c in matrix.columns)
    if rotate:
        col_w, head_h, width = _layout(columns, label_w, size)
    else:
        col_w = max([96] + [_width(c, size) + 16 for c in columns])
        head_h, width = 24, label_w + len(columns) * col_w + 8
    width = max(width, 360)
    body = []
    for j, (column, full) in enumerate(zip(columns, matrix.columns)):
        x = label_w + j * col_w + col_w / 2
        place = (f'transform="translate({x - 3:.1f},{head_h - 6:.1f}) rotate(-{ANGLE})"' if rotate
                 else f'x="{x:.1f}" y="{head_h - 8:.1f}" text-anchor="middle" font-weight="600"')
        body.append(f'<text class="col" font-size="{size}" {place}><title>{escape(full)}</title>{escape(column)}</text>')
    for i, (row, shown) in enumerate(zip(matrix.rows, labels)):
        y = head_h + i * row_h
        name = (f'<text x="{label_w - 8:.0f}" y="{y + 16:.0f}" text-anchor="end"><title>{escape(shown)}</title>'
                f'{escape(_clip(shown, 12, MAX_LABEL))}</text>')
        body.append(f'<a href="#{escape(row.anchor)}">{name}</a>' if row.anchor else name)
        for j, cell in enumerate(row.cells):
            x = label_w + j * col_w
            fits = min(size, (col_w - 6) / (max(len(cell.short), 1) * CHAR))  # a long figure in a smaller font
            piece = (f'<g class="cell {cell.tone}"><title>{escape(cell.title)}</title>'
                     f'<rect x="{x + 1:.1f}" y="{y + 1}" width="{col_w - 2:.1f}" height="{row_h - 2}" rx="2" '
                     f'fill="{FILL.get(cell.tone, FILL["na"])}"/><text x="{x + col_w / 2:.1f}" y="{y + 16}" text-anchor="middle" '
                     f'font-size="{fits:.1f}" fill="{INK.get(cell.tone, "#222")}">{escape(cell.short)}</text></g>')
            body.append(f'<a href="#{escape(cell.anchor)}">{piece}</a>' if cell.anchor else piece)
    y = head_h + len(matrix.rows) * row_h + 10
    items = [(FILL[tone], meaning) for tone, meaning in legend] + ([("#fff", note)] if note else [])
    key, used = _legend(items, y, width)
    return _svg(body + key, width, y + used + 4, ident, "heatmap", label)


def _tick(power: int) -> str:
    return f"{2 ** power}×" if power >= 0 else f"1/{2 ** -power}×"


def speed_chart(speed: Speed, ident: str) -> str:
    """Horizontal bars on a log scale centred at 1×: left of it ours is faster (green), right of it
    slower (red); one bar per mode, its ratio written at its end."""
    modes = list(dict.fromkeys(bar.mode for bar in speed.bars))
    quantities = list(dict.fromkeys(bar.quantity for bar in speed.bars))
    by_key = {(bar.quantity, bar.mode): bar for bar in speed.bars}
    bar_h, gap = 10, 2
    row_h = len(modes) * (bar_h + gap) + 8
    label_w = max((_width(q, 12) for q in quantities), default=40) + 14
    plot_w, top = 440, 34
    extent = max((abs(math.log2(bar.ratio)) for bar in speed.bars if bar.ratio and bar.ratio > 0), default=1)
    span = max(1, min(6, math.ceil(extent)))
    centre = label_w + plot_w / 2
    unit = plot_w / 2 / span
    width = label_w + plot_w + 70
    height = top + len(quantities) * row_h
    body = [f'<text x="{centre - 8:.0f}" y="12" text-anchor="end" fill="{FASTER[0]}" font-weight="600">← ours faster</text>',
            f'<text x="{centre + 8:.0f}" y="12" fill="{SLOWER[0]}" font-weight="600">ours slower →</text>']
    body += [f'<rect x="0" y="{top + i * row_h:.0f}" width="{label_w + plot_w}" height="{row_h}" fill="#f4f4f4"/>'
             for i in range(1, len(quantities), 2)]  # every other row shaded
    for power in range(-span, span + 1):
        x = centre + power * unit
        body.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height:.0f}" stroke="{"#555" if power == 0 else "#ddd"}" '
                    f'stroke-width="{1.2 if power == 0 else 0.8}"/>'
                    f'<text x="{x:.1f}" y="{top - 10}" text-anchor="middle" font-size="10" fill="#555">{_tick(power)}</text>')
    for i, quantity in enumerate(quantities):
        y = top + i * row_h + 4
        body.append(f'<text x="{label_w - 8:.0f}" y="{y + row_h / 2:.0f}" text-anchor="end">{escape(quantity)}</text>')
        for k, mode in enumerate(modes):
            bar = by_key.get((quantity, mode))
            if bar is None or not bar.ratio or bar.ratio <= 0:
                continue
            yy = y + k * (bar_h + gap)
            power = max(-span, min(span, math.log2(bar.ratio)))
            x0, x1 = sorted((centre, centre + power * unit))
            fill = (FASTER if bar.ratio < 1 else SLOWER)[min(k, 1)]
            where = "the fastest peer of any framework" if bar.framework == "all" else f"{bar.framework}'s fastest peer"
            tip = (f"{quantity} {mode}: ours {bar.ours * 1e3:.3f} ms, {where} {bar.peer} {bar.peer_seconds * 1e3:.3f} ms "
                   f"({speed.stat}); ours/peer = {bar.ratio:.2f}")
            tx, anchor = (centre + 4, "start") if bar.ratio < 1 else (centre - 4, "end")  # beside the 1× line, opposite its bar
            body.append(f'<g class="bar {escape(mode)}"><title>{escape(tip)}</title>'
                        f'<rect x="{x0:.1f}" y="{yy:.1f}" width="{max(x1 - x0, 1):.1f}" height="{bar_h}" fill="{fill}"/>'
                        f'<text x="{tx:.1f}" y="{yy + bar_h - 1:.1f}" text-anchor="{anchor}" font-size="10" fill="#333">'
                        f'{bar.ratio:.2f}×</text></g>')
    items = [(FASTER[0], "ours faster (forward)"), (FASTER[1], "ours faster (forward + backward)"),
             (SLOWER[0], "ours slower (forward)"), (SLOWER[1], "ours slower (forward + backward)")]
    legend, used = _legend(items if len(modes) > 1 else items[::2], height + 10, width)
    return _svg(body + legend, width, height + 14 + used, ident, "speed-chart", f"speed: ours / fastest peer ({speed.stat})")
