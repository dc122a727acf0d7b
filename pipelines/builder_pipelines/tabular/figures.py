"""Small hand-written SVG charts (no plotting library): line charts, scatter and horizontal bars.

Sized for the result page: 480 user units shown at least 480 px wide (web/src/styles.css), so the 14-unit axis
text displays at 12 px or more (test/browser/dashboard-figures.test.ts measures it)."""

from __future__ import annotations

from html import escape
from pathlib import Path

W, H = 480, 360
L, R, TOP, B = 72, 16, 40, 62  # margins
TICK, LABEL, TITLE = 14, 15, 16  # font sizes
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


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


def lines(
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    series: list[tuple[str, list, list]],
    diagonal: str | None = None,
    markers: bool = False,
) -> None:
    """``diagonal``: None, "up" (y = x) or "down" — a reference line."""
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
    path.write_text("\n".join(out + ["</svg>"]))


def scatter(path: Path, title: str, xlabel: str, ylabel: str, xs, ys) -> None:
    lo = float(min(min(xs), min(ys))) if len(xs) else 0.0
    hi = float(max(max(xs), max(ys))) if len(xs) else 1.0
    out = _frame(title, xlabel, ylabel, lo, hi, lo, hi)
    sx, sy = _mapper(lo, hi, lo, hi)
    out.append(f'<line x1="{sx(lo)}" y1="{sy(lo)}" x2="{sx(hi)}" y2="{sy(hi)}" stroke="#999" stroke-dasharray="4 3"/>')
    out += [
        f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{COLORS[0]}" fill-opacity="0.6"/>'
        for x, y in zip(xs, ys)
    ]
    path.write_text("\n".join(out + ["</svg>"]))


def bars(path: Path, title: str, values: dict[str, float], top: int = 20) -> None:
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
    path.write_text("\n".join(out + ["</svg>"]))
