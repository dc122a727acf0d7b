"""The numbers behind each figure, as small tables: report.json ``figure_tables`` keyed by figure name, shown on the
result page in a <details> under the figure so that a screen reader (or anyone) can read the values drawn."""

from __future__ import annotations

MAX_ROWS = 40  # a long curve (hundreds of ROC points) is thinned to evenly spaced points, first and last kept


def _thin(points: list, limit: int = MAX_ROWS) -> list:
    if len(points) <= limit:
        return points
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def _r(v):
    return round(float(v), 4) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def series_table(xlabel: str, ylabel: str, series: list[tuple[str, list, list]]) -> dict:
    """A line or scatter chart: one row per (thinned) point, with the curve's name where there are several."""
    many = len(series) > 1
    rows = []
    for name, xs, ys in series:
        pts = _thin([(x, y) for x, y in zip(xs, ys) if x is not None and y is not None])
        rows += [([name] if many else []) + [_r(x), _r(y)] for x, y in pts]
    return {"columns": (["curve"] if many else []) + [xlabel, ylabel], "rows": rows}


def matrix_table(matrix: list[list[int]], labels: list[str]) -> dict:
    """A confusion matrix: rows the true class, one column per predicted class."""
    return {
        "columns": ["true \\ predicted"] + [str(x) for x in labels],
        "rows": [[str(labels[i])] + [int(v) for v in row] for i, row in enumerate(matrix)],
    }


def bars_table(label: str, values: dict[str, float], top: int = 20) -> dict:
    items = sorted(values.items(), key=lambda kv: -kv[1])[:top]
    return {"columns": ["feature", label], "rows": [[k, _r(v)] for k, v in items]}


def split_tables(entries: list[dict]) -> tuple[list[dict], dict]:
    """Manifest figure entries (name, file, title) and the tables they carried, for report.json."""
    tables = {e["name"]: e["table"] for e in entries if e.get("table")}
    return [{k: e[k] for k in ("name", "file", "title")} for e in entries], tables
