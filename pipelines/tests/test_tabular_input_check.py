"""The unfamiliar-row check of table models (tabular/input_check.py): ranges, scales, the calibrated threshold."""

from __future__ import annotations

import numpy as np

from builder_pipelines.tabular import input_check
from builder_pipelines.tabular.table import Column


def _columns():
    return [
        Column("glucose", "numeric", {}, 0, 199),
        Column("site", "categorical", {"A": 0, "B": 1}),
        Column("age", "numeric", {}, 21, 81),
    ]


def _rows(rng, n):
    return np.c_[rng.normal(120, 30, n).clip(0, 199), rng.integers(0, 2, n), rng.uniform(21, 81, n)]


def test_far_values_are_unfamiliar_and_ordinary_rows_are_not():
    rng = np.random.default_rng(0)
    cols = _columns()
    record = input_check.build(cols, _rows(rng, 400), _rows(rng, 120), _rows(rng, 120))
    assert [c["name"] for c in record["columns"]] == ["glucose", "age"]  # categorical columns have no range
    assert record["threshold"] >= input_check.MIN_THRESHOLD
    assert record["test_flagged_rate"] <= 0.05
    rows = np.array(
        [
            [130, 0, 50],  # ordinary
            [1e9, 0, 50],  # glucose 10^9
            [-10, 1, 500],  # glucose -10 with age 500
            [-10, 1, 50],  # glucose -10 alone: a little below the range, still ordinary variation
            [np.nan, 0, 50],  # a missing value is not counted
            [130, 0, 88],  # an age a little above training's
        ]
    )
    flagged = input_check.scores(cols, record["columns"], rows) > record["threshold"]
    assert flagged.tolist() == [False, True, True, False, False, False]
