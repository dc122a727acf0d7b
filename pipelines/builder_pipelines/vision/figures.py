"""Hand-written SVG charts for the dashboard (no plotting library): line charts and a confusion matrix."""

from __future__ import annotations

from xml.sax.saxutils import escape

# 480 user units shown at least 480 px wide on the result page: 14-unit axis text displays at 12 px or more.
W, H, PAD = 480, 360, 64
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


def _num(v: float) -> str:
    return f"{v:.2f}"


def line_chart(
    series: list[dict],
    title: str,
    xlabel: str,
    ylabel: str,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    diagonal: bool = False,
) -> str:
    """``series``: [{"label", "x": [...], "y": [...]}]; None values are skipped."""
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
            f'<text x="{W - PAD + 4 - 150}" y="{PAD + 18 + 17 * i}" font-size="14" fill="{colour}">{escape(str(s["label"]))[:18]}</text>'
        )
    out.append(f'<text x="{W / 2}" y="{H - 14}" font-size="15" text-anchor="middle">{escape(xlabel)}</text>')
    out.append(
        f'<text x="18" y="{H / 2}" font-size="15" text-anchor="middle" transform="rotate(-90 18 {H / 2})">{escape(ylabel)}</text>'
    )
    return "\n".join(out + ["</svg>"])


def confusion_chart(matrix: list[list[int]], labels: list[str], title: str) -> str:
    k = len(matrix)
    size = min(80, (W - 2 * PAD - 40) // max(k, 1))
    peak = max((max(r) for r in matrix), default=1) or 1
    out = [_open(title)]
    for i, row in enumerate(matrix):
        out.append(
            f'<text x="{PAD + 30}" y="{PAD + size * i + size / 2 + 5}" font-size="14" text-anchor="end">{escape(labels[i])[:10]}</text>'
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
            f'<text x="{PAD + 36 + size * j + size / 2}" y="{PAD + size * k + 18}" font-size="14" text-anchor="middle">{escape(labels[j])[:10]}</text>'
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
        f'<text x="{W / 2}" y="24" font-size="16" text-anchor="middle">{escape(title)}</text>'
    )
