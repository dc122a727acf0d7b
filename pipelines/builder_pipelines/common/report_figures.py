"""One SVG chart API for the split reports of every task (no plotting library): line charts, scatter, horizontal
bars and a confusion matrix, each returning the SVG text; ``write_figures`` writes them beside the manifest and
returns its ``figures`` entries. ``common/clinical_figures.py`` draws the calibration and decision curves.

Series are ``(label, xs, ys)`` rows, the shape ``figure_tables.series_table`` takes for the figure's data table;
None values are skipped.

``look``: the tabular and the vision pipelines drew their charts with two modules (merged here, issue 37 item 9)
that differ in margins, tick count, legend and stroke. Both looks are kept byte for byte (tests/test_report_golden.py)
so the merge changed no figure; drawing every task's charts one way is a visible change to make on its own, judged
on the result page's screenshots.

Sized for the result page: 480 user units shown at least 480 px wide (web/src/styles.css), so the 14-unit axis text
displays at 12 px or more (test/browser/dashboard-figures.test.ts measures it)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape as xml_escape

Look = Literal["tabular", "vision"]
Series = tuple[str, Sequence, Sequence]

# The "tabular" look
W, H = 480, 360
L, R, TOP, B = 72, 16, 40, 62  # margins
TICK, LABEL, TITLE = 14, 15, 16  # font sizes
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
# The "vision" look
PAD = 64
COLOURS = COLORS + ["#bcbd22", "#17becf"]


def line_chart(
    series: list[Series],
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    look: Look,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    diagonal: bool = False,
    markers: bool = False,
) -> str:
    """Lines through each series' points; ``diagonal``: the y = x reference line; ``markers``: a dot on every
    point, as well as the line ("tabular") or instead of it ("vision"). The "tabular" look always spans 0..1 on
    both axes (its charts are rates and probabilities); the "vision" one ``xlim``/``ylim``, else the data's range."""
    if look == "tabular":
        return _tab_lines(title, xlabel, ylabel, series, "up" if diagonal else None, markers)
    dicts = [{"label": label, "x": xs, "y": ys, **({"markers": True} if markers else {})} for label, xs, ys in series]
    return _vis_line(dicts, title, xlabel, ylabel, xlim, ylim, diagonal)


def scatter_chart(xs, ys, title: str, xlabel: str, ylabel: str, *, look: Look, label: str = "test rows") -> str:
    """Predicted against actual values: dots, with the y = x line over the common range of both axes."""
    if look == "tabular":
        return _tab_scatter(title, xlabel, ylabel, xs, ys)
    xs, ys = list(xs), list(ys)
    lo, hi = (min(xs + ys), max(xs + ys)) if xs else (0, 1)
    series = [{"label": label, "x": xs, "y": ys, "markers": True}]
    return _vis_line(series, title, xlabel, ylabel, (lo, hi), (lo, hi), diagonal=True)


def write_figures(out_dir: str | Path, figs: list[tuple]) -> list[dict]:
    """``(name, title, svg, table?)`` tuples to ``name.svg`` files and the manifest entries carrying their tables
    (figure_tables.split_tables moves those to report.json)."""
    entries = []
    for name, title, svg, *table in figs:
        Path(out_dir, f"{name}.svg").write_text(svg)
        entries.append({"name": name, "file": f"{name}.svg", "title": title, **({"table": table[0]} if table else {})})
    return entries


# ---- the "tabular" look


def _frame(title: str, xlabel: str, ylabel: str, x0=0.0, x1=1.0, y0=0.0, y1=1.0) -> list[str]:
    pw, ph = W - L - R, H - TOP - B
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="{TICK}">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="{TITLE}">{escape(title)}</text>',
        f'<rect x="{L}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>',
        f'<text x="{L + pw / 2}" y="{H - 14}" text-anchor="middle" font-size="{LABEL}">{escape(xlabel)}</text>',
        f'<text x="18" y="{TOP + ph / 2}" text-anchor="middle" font-size="{LABEL}" transform="rotate(-90 18 {TOP + ph / 2})">{escape(ylabel)}</text>',
    ]
    for i in range(6):
        fx, fy = x0 + (x1 - x0) * i / 5, y0 + (y1 - y0) * i / 5
        px, py = L + pw * i / 5, TOP + ph - ph * i / 5
        out.append(f'<text x="{px:.1f}" y="{TOP + ph + 18}" text-anchor="middle">{fx:.3g}</text>')
        out.append(f'<text x="{L - 6}" y="{py + 5:.1f}" text-anchor="end">{fy:.3g}</text>')
        out.append(f'<line x1="{L}" y1="{py:.1f}" x2="{L + pw}" y2="{py:.1f}" stroke="#eee"/>')
    return out


def _mapper(x0, x1, y0, y1):
    pw, ph = W - L - R, H - TOP - B
    sx = lambda x: L + pw * (x - x0) / ((x1 - x0) or 1)  # noqa: E731
    sy = lambda y: TOP + ph - ph * (y - y0) / ((y1 - y0) or 1)  # noqa: E731
    return sx, sy


def _legend(out: list[str], labels: list[str], corner: str = "top") -> None:
    """Top-right, or bottom-right (``corner="bottom"``) where a rising curve leaves room."""
    for i, lab in enumerate(labels):
        y = TOP + 18 + 18 * i if corner == "top" else H - B - 10 - 18 * (len(labels) - 1 - i)
        out.append(f'<rect x="{W - R - 150}" y="{y - 11}" width="12" height="12" fill="{COLORS[i % len(COLORS)]}"/>')
        out.append(f'<text x="{W - R - 133}" y="{y + 1}">{escape(lab[:16])}</text>')


def _tab_lines(
    title: str,
    xlabel: str,
    ylabel: str,
    series: list[tuple[str, list, list]],
    diagonal: str | None = None,
    markers: bool = False,
) -> str:
    """``diagonal``: None or "up" (y = x), a reference line."""
    out = _frame(title, xlabel, ylabel)
    sx, sy = _mapper(0, 1, 0, 1)
    if diagonal == "up":
        out.append(f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(1)}" y2="{sy(1)}" stroke="#999" stroke-dasharray="4 3"/>')
    for i, (_, xs, ys) in enumerate(series):
        pts = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
        color = COLORS[i % len(COLORS)]
        if pts:
            d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"/>')
        if markers:
            out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>' for x, y in pts]
    _legend(out, [s[0] for s in series], "bottom" if diagonal == "up" else "top")
    return "\n".join(out + ["</svg>"])


def _tab_scatter(title: str, xlabel: str, ylabel: str, xs, ys) -> str:
    lo = float(min(min(xs), min(ys))) if len(xs) else 0.0
    hi = float(max(max(xs), max(ys))) if len(xs) else 1.0
    out = _frame(title, xlabel, ylabel, lo, hi, lo, hi)
    sx, sy = _mapper(lo, hi, lo, hi)
    out.append(f'<line x1="{sx(lo)}" y1="{sy(lo)}" x2="{sx(hi)}" y2="{sy(hi)}" stroke="#999" stroke-dasharray="4 3"/>')
    out += [
        f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{COLORS[0]}" fill-opacity="0.6"/>'
        for x, y in zip(xs, ys)
    ]
    return "\n".join(out + ["</svg>"])


def bar_chart(values: dict[str, float], title: str, top: int = 20) -> str:
    """The ``top`` largest values as horizontal bars, largest first (feature importance)."""
    items = sorted(values.items(), key=lambda kv: -kv[1])[:top]
    h = TOP + 24 * len(items) + 20
    vmax = max([v for _, v in items] + [1e-12])
    lw, pw = 180, W - 180 - R - 60
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="{TICK}">',
        f'<rect width="{W}" height="{h}" fill="white"/>',
        f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="{TITLE}">{escape(title)}</text>',
    ]
    for i, (name, v) in enumerate(items):
        y = TOP + 24 * i
        out.append(f'<text x="{lw - 6}" y="{y + 14}" text-anchor="end">{escape(name[:20])}</text>')
        out.append(f'<rect x="{lw}" y="{y + 2}" width="{pw * v / vmax:.1f}" height="17" fill="{COLORS[0]}"/>')
        out.append(f'<text x="{lw + pw * v / vmax + 4:.1f}" y="{y + 14}">{v:.3g}</text>')
    return "\n".join(out + ["</svg>"])


# ---- the "vision" look


def _num(v: float) -> str:
    return f"{v:.2f}"


def _vis_line(
    series: list[dict],
    title: str,
    xlabel: str,
    ylabel: str,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    diagonal: bool = False,
) -> str:
    """``series``: [{"label", "x": [...], "y": [...], "markers"?}]; markers: dots instead of a line."""
    pts = [(x, y) for s in series for x, y in zip(s["x"], s["y"]) if x is not None and y is not None]
    xs, ys = [p[0] for p in pts] or [0, 1], [p[1] for p in pts] or [0, 1]
    x0, x1 = xlim or (min(xs), max(xs))
    y0, y1 = ylim or (min(ys), max(ys))
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    sx = lambda v: PAD + (v - x0) / (x1 - x0) * (W - 2 * PAD)  # noqa: E731
    sy = lambda v: H - PAD - (v - y0) / (y1 - y0) * (H - 2 * PAD)  # noqa: E731
    out = [
        _open(title),
        f'<rect x="{PAD}" y="{PAD}" width="{W - 2 * PAD}" height="{H - 2 * PAD}" fill="none" stroke="#999"/>',
    ]
    for i in range(5):  # axis ticks
        fx, fy = x0 + (x1 - x0) * i / 4, y0 + (y1 - y0) * i / 4
        out.append(f'<text x="{_num(sx(fx))}" y="{H - PAD + 18}" font-size="14" text-anchor="middle">{fx:.3g}</text>')
        out.append(f'<text x="{PAD - 6}" y="{_num(sy(fy) + 5)}" font-size="14" text-anchor="end">{fy:.3g}</text>')
    if diagonal:
        out.append(
            f'<line x1="{_num(sx(x0))}" y1="{_num(sy(y0))}" x2="{_num(sx(x1))}" y2="{_num(sy(y1))}" stroke="#bbb" stroke-dasharray="4 3"/>'
        )
    for i, s in enumerate(series):
        p = [(x, y) for x, y in zip(s["x"], s["y"]) if x is not None and y is not None]
        if not p:
            continue
        colour = COLOURS[i % len(COLOURS)]
        if s.get("markers"):  # scatter
            out += [
                f'<circle cx="{_num(sx(x))}" cy="{_num(sy(y))}" r="2.2" fill="{colour}" fill-opacity="0.6"/>'
                for x, y in p
            ]
        else:
            path = " ".join(f"{_num(sx(x))},{_num(sy(y))}" for x, y in p)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
        out.append(
            f'<text x="{W - PAD + 4 - 150}" y="{PAD + 18 + 17 * i}" font-size="14" fill="{colour}">{xml_escape(str(s["label"]))[:18]}</text>'
        )
    out.append(f'<text x="{W / 2}" y="{H - 14}" font-size="15" text-anchor="middle">{xml_escape(xlabel)}</text>')
    out.append(
        f'<text x="18" y="{H / 2}" font-size="15" text-anchor="middle" transform="rotate(-90 18 {H / 2})">{xml_escape(ylabel)}</text>'
    )
    return "\n".join(out + ["</svg>"])


def confusion_chart(matrix: list[list[int]], labels: list[str], title: str) -> str:
    k = len(matrix)
    size = min(80, (W - 2 * PAD - 40) // max(k, 1))
    peak = max((max(r) for r in matrix), default=1) or 1
    out = [_open(title)]
    for i, row in enumerate(matrix):
        out.append(
            f'<text x="{PAD + 30}" y="{PAD + size * i + size / 2 + 5}" font-size="14" text-anchor="end">{xml_escape(labels[i])[:10]}</text>'
        )
        for j, v in enumerate(row):
            shade = int(255 - 200 * v / peak)
            out.append(
                f'<rect x="{PAD + 36 + size * j}" y="{PAD + size * i}" width="{size}" height="{size}" fill="rgb({shade},{shade},255)" stroke="#fff"/>'
            )
            out.append(
                f'<text x="{PAD + 36 + size * j + size / 2}" y="{PAD + size * i + size / 2 + 5}" font-size="14" text-anchor="middle">{v}</text>'
            )
    for j in range(k):
        out.append(
            f'<text x="{PAD + 36 + size * j + size / 2}" y="{PAD + size * k + 18}" font-size="14" text-anchor="middle">{xml_escape(labels[j])[:10]}</text>'
        )
    out.append(
        f'<text x="{PAD + 36 + size * k / 2}" y="{PAD + size * k + 38}" font-size="15" text-anchor="middle">predicted</text>'
    )
    out.append(
        f'<text x="16" y="{PAD + size * k / 2}" font-size="15" text-anchor="middle" transform="rotate(-90 16 {PAD + size * k / 2})">true</text>'
    )
    return "\n".join(out + ["</svg>"])


def _open(title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif">\n'
        f'<rect width="{W}" height="{H}" fill="#fff"/>\n'
        f'<text x="{W / 2}" y="24" font-size="16" text-anchor="middle">{xml_escape(title)}</text>'
    )
