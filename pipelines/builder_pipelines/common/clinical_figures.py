"""The two binary figures a clinician reads for decisions, shared by the tabular and image pipelines: the decision
curve and the calibration plot with each bin's patient count. Hand-written SVG, sized like the other charts:
480 x 360 user units shown at least 480 px wide on the result page (web/src/styles.css), so 14-unit axis text
displays at 12 px or more; a figure's numbers also go to report.json's ``figure_tables`` for screen readers.
"""

from __future__ import annotations

import math
from html import escape

W, H = 480, 360
L, R, TOP, B = 72, 16, 56, 62  # the row under the title holds the legend or a note
TICK, LABEL, TITLE = 14, 15, 16  # font sizes in user units (= px at the page's smallest display width)
MODEL, ALL, NONE = "#1f77b4", "#d62728", "#555"


def _open(title: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="{TICK}">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="{TITLE}">{escape(title)}</text>',
    ]


def _axes(out: list[str], xlabel: str, ylabel: str, x0: float, x1: float, y0: float, y1: float, ystep: float = 0.2):
    """Axes with x ticks every 0.2 and y ticks every ``ystep`` (y0 and y1 multiples of it)."""
    pw, ph = W - L - R, H - TOP - B
    sx = lambda x: L + pw * (x - x0) / ((x1 - x0) or 1)  # noqa: E731
    sy = lambda y: TOP + ph - ph * (y - y0) / ((y1 - y0) or 1)  # noqa: E731
    out.append(f'<rect x="{L}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    for i in range(6):
        fx = x0 + (x1 - x0) * i / 5
        out.append(f'<text x="{sx(fx):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{fx:.2g}</text>')
    for i in range(round((y1 - y0) / ystep) + 1):
        fy = y0 + ystep * i
        out.append(
            f'<line x1="{L}" y1="{sy(fy):.1f}" x2="{L + pw}" y2="{sy(fy):.1f}" stroke="{"#999" if abs(fy) < 1e-9 else "#eee"}"/>'
        )
        out.append(f'<text x="{L - 6}" y="{sy(fy) + 5:.1f}" text-anchor="end">{fy:.2f}</text>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 14}" text-anchor="middle" font-size="{LABEL}">{escape(xlabel)}</text>')
    out.append(
        f'<text x="18" y="{TOP + ph / 2}" text-anchor="middle" font-size="{LABEL}" '
        f'transform="rotate(-90 18 {TOP + ph / 2})">{escape(ylabel)}</text>'
    )
    out.append(f'<clipPath id="plot"><rect x="{L}" y="{TOP}" width="{pw}" height="{ph}"/></clipPath>')
    return sx, sy


def _legend(out: list[str], items: list[tuple[str, str, str]]) -> None:
    """One row under the title, outside the plot (inside, it hid the curves): (label, colour, dash)."""
    for i, (label, colour, dash) in enumerate(items):
        x, y = L + 125 * i, TOP - 12
        out.append(
            f'<line x1="{x}" y1="{y - 5}" x2="{x + 22}" y2="{y - 5}" stroke="{colour}" stroke-width="2.5" stroke-dasharray="{dash}"/>'
        )
        out.append(f'<text x="{x + 28}" y="{y}">{escape(label)}</text>')


def decision_curve_svg(curve: dict, positive_name: str) -> tuple[str, dict]:
    """(SVG, data table). The y axis runs from a little below 0 to a little above the prevalence: treat-all falls
    far below 0 at high thresholds, and a chart scaled to show all of it would flatten the part that matters."""
    t, model, treat_all = curve["thresholds"], curve["model"], curve["treat_all"]
    prevalence = max(0.0, treat_all[0] if treat_all else 0.0)
    top = max([prevalence] + [v for v in model if v is not None]) or 0.1
    step = next(st for st in (0.01, 0.02, 0.05, 0.1, 0.2) if top * 1.25 / st <= 7)
    y0, y1 = -step, step * math.ceil(top * 1.05 / step)
    out = _open(f"Decision curve: acting on {positive_name}"[:60])
    sx, sy = _axes(out, "threshold probability", "net benefit", 0, 1, y0, y1, step)
    for values, colour, dash in ((model, MODEL, "none"), (treat_all, ALL, "6 4"), ([0.0] * len(t), NONE, "2 3")):
        pts = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(t, values) if y is not None)
        out.append(
            f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2.5" stroke-dasharray="{dash}" clip-path="url(#plot)"/>'
        )
    _legend(out, [("model", MODEL, "none"), ("treat all", ALL, "6 4"), ("treat none", NONE, "2 3")])
    rows = [[x, m, a, 0.0] for x, m, a in zip(t, model, treat_all) if round(x * 100) % 5 == 0]
    table = {
        "columns": ["threshold probability", "net benefit: model", "net benefit: treat all", "net benefit: treat none"],
        "rows": [[_r(v) for v in row] for row in rows],
    }
    return "\n".join(out + ["</svg>"]), table


def calibration_svg(calibration: dict, positive_name: str, title: str) -> tuple[str, dict]:
    """Binned calibration of the positive class: one point per non-empty bin, its area proportional to the bin's
    count of cases (rows or images) and the count written beside it, so that the few patients of the middle bins (most predictions
    near 0 and 1, as on WDBC) read as the thin evidence they are instead of a broken zig-zag line."""
    mean_pred, frac, count = calibration["mean_predicted"], calibration["fraction_positive"], calibration["count"]
    pts = [(x, y, n) for x, y, n in zip(mean_pred, frac, count) if x is not None and y is not None and n]
    out = _open(title)
    sx, sy = _axes(
        out, f"mean predicted probability of {positive_name}"[:48], f"observed share {positive_name}"[:34], 0, 1, 0, 1
    )
    out.append(f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(1)}" y2="{sy(1)}" stroke="#999" stroke-dasharray="5 4"/>')
    peak = max([n for _, _, n in pts] + [1])
    for x, y, n in pts:  # no line joins the bins: a one-case bin at 0 or 1 made it zig-zag like a broken chart
        lo, hi = _wilson(y, n)
        out.append(
            f'<line x1="{sx(x):.1f}" y1="{sy(lo):.1f}" x2="{sx(x):.1f}" y2="{sy(hi):.1f}" stroke="{MODEL}" stroke-opacity="0.6"/>'
        )
    for x, y, n in pts:
        r = 3 + 11 * (n / peak) ** 0.5
        out.append(
            f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{r:.1f}" fill="{MODEL}" fill-opacity="0.45" stroke="{MODEL}"/>'
        )
        above = sy(y) - r - 4 > TOP + 10
        ty = sy(y) - r - 4 if above else sy(y) + r + 14
        out.append(f'<text x="{sx(x):.1f}" y="{ty:.1f}" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{L}" y="{TOP - 8}">point size, number: cases in the bin; bar: 95% interval</text>')
    table = {
        "columns": ["mean predicted probability", f"observed share {positive_name}", "cases in the bin"],
        "rows": [[_r(x), _r(y), int(n)] for x, y, n in pts],
    }
    return "\n".join(out + ["</svg>"]), table


def _wilson(share: float, n: int) -> tuple[float, float]:
    """95% Wilson interval of an observed share of n cases (a one-case bin spans most of 0..1, as it should)."""
    z = 1.96
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _r(v):
    return None if v is None else round(float(v), 4)
