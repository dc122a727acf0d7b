"""Unfamiliar-input detection for table models (issue 49 item 5; serving: src/serving/input-check.ts).

Per numeric column the training rows' range (min and max) and a scale (their 1st-99th percentile spread, else the
whole range, else 1). A row's score is its largest distance outside a column's range, in that column's scales (0
when every value lies inside; a missing value is not counted: the model was trained with gaps there). The threshold
is the validation rows' 99.5th percentile, never below MIN_THRESHOLD: a value half a spread beyond anything seen in
training is still ordinary variation (an age of 85 when training went to 81), one many spreads beyond (an age of 500,
a glucose of 10^9) is not. Categorical columns need no score: serving refuses an unknown category with 400 already.
"""

from __future__ import annotations

import numpy as np

QUANTILE = 99.5
MIN_THRESHOLD = 0.5


def _scale(v: np.ndarray) -> float:
    lo, hi = np.percentile(v, [1, 99])
    spread = float(hi - lo) or float(v.max() - v.min())
    return spread if spread > 0 else 1.0


def fit(columns, x_train: np.ndarray) -> list[dict]:
    """The numeric columns' ranges and scales from the training rows (columns: table.Column, in input order)."""
    out = []
    for j, c in enumerate(columns):
        if c.type != "numeric":
            continue
        v = x_train[:, j].astype(np.float64)
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        out.append({"name": c.name, "low": float(v.min()), "high": float(v.max()), "scale": round(_scale(v), 6)})
    return out


def scores(columns, ranges: list[dict], x: np.ndarray) -> np.ndarray:
    """[N]: each row's largest excess outside a column's range, in scales (the rule serving applies)."""
    index = {c.name: j for j, c in enumerate(columns)}
    worst = np.zeros(len(x))
    for r in ranges:
        v = x[:, index[r["name"]]].astype(np.float64)
        excess = np.where(v < r["low"], r["low"] - v, np.where(v > r["high"], v - r["high"], 0.0))
        worst = np.maximum(worst, np.nan_to_num(excess, nan=0.0) / r["scale"])
    return worst


def build(columns, x_train: np.ndarray, x_val: np.ndarray, x_test: np.ndarray) -> dict:
    """The manifest's ``input_check.table`` record: ranges, the calibrated threshold, and the test rows' rate."""
    ranges = fit(columns, x_train)
    val = scores(columns, ranges, x_val)
    threshold = max(MIN_THRESHOLD, float(np.percentile(val, QUANTILE))) if len(val) else MIN_THRESHOLD
    flagged = int((scores(columns, ranges, x_test) > threshold).sum())
    return {
        "columns": ranges,
        "threshold": round(threshold, 6),
        "quantile": QUANTILE,
        "calibration": "validation split",
        "calibration_rows": len(x_val),
        "test_rows": len(x_test),
        "test_flagged": flagged,
        "test_flagged_rate": round(flagged / max(len(x_test), 1), 4),
    }
