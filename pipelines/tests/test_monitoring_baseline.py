"""The monitoring baseline in manifest.json (issue 49 item 1): aggregates of the validation and test patients only,
binned as serving bins (src/monitoring/baseline.ts binOf), valid against the manifest schema, for every table task."""

from types import SimpleNamespace

import numpy as np
import pytest

from builder_pipelines.common import contract, monitoring_baseline
from test_tabular import make_spec, small_search, train_in_process  # noqa: F401 (small_search: the fast plan)


def test_bins_match_serving_rule_and_counts_sum_to_rows():
    rng = np.random.default_rng(0)
    x = rng.normal(100, 15, 500)
    x[:7] = np.nan
    codes = rng.integers(0, 3, 500).astype(float)
    cols = [
        SimpleNamespace(name="glucose", type="numeric"),
        SimpleNamespace(name="site", type="categorical", codes={"a": 0, "b": 1, "c": 2}),
    ]
    scores = rng.uniform(0, 1, 500)
    b = monitoring_baseline.build("binary", cols, np.c_[x, codes], np.c_[1 - scores, scores], [0.6, 0.4], 1)
    g, site = b["columns"]
    assert g["missing"] == 7 and sum(g["counts"]) == 493 and len(g["counts"]) == len(g["edges"]) + 1 == 10
    # A value on an edge goes above it (count of edges <= value), as serving's binOf does.
    edge = g["edges"][3]
    assert int(np.searchsorted(g["edges"], edge, side="right")) == 4
    assert g["quantiles"]["p05"] < g["quantiles"]["p50"] < g["quantiles"]["p95"]
    assert sum(site["counts"].values()) == 500 and set(site["counts"]) == {"0", "1", "2"}
    assert b["positive_index"] == 1 and b["positive_rate"] == pytest.approx(np.mean(scores >= 0.4), abs=1e-6)
    assert len(b["score"]["counts"]) == 20 and sum(b["score"]["counts"]) == 500
    # No row is in it: nothing but aggregates (bins, counts, deciles).
    assert b["n"] == 500


def test_positive_class_zero_counts_class_zero_decisions():
    scores = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]])
    b = monitoring_baseline.build("binary", None, None, scores, [0.5, 0.5], 0)
    assert b["positive_index"] == 0 and b["positive_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert "columns" not in b


@pytest.mark.train
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_every_table_task_publishes_a_valid_baseline(tmp_path, task):
    m, _ = train_in_process(make_spec(tmp_path, task))
    assert contract.errors("manifest", m) == []
    b = m["monitoring_baseline"]
    counts = m["provenance"]["split_counts"]
    # split_counts counts patients; a patient may have several rows, and the baseline counts rows.
    assert b["n"] >= counts["val"] + counts["test"] > 0
    assert [c["name"] for c in b["columns"]] == [c["name"] for c in m["input"]["columns"]]
    for c in b["columns"]:
        total = sum(c["counts"].values()) if c["type"] == "categorical" else sum(c["counts"]) + c["missing"]
        assert total == b["n"], c["name"]
    assert sum(b["score"]["counts"]) == b["n"]
    if task == "binary":
        assert b["positive_index"] == m["clinical"]["positive_class"]["index"] and 0 < b["positive_rate"] < 1
    else:
        assert "positive_rate" not in b
