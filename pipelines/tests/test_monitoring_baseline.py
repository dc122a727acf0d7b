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


def test_detection_baseline_counts_boxes_sizes_and_scores_never_coordinates():
    # Three images as served: 2 boxes, none, 1 box. Sizes are sqrt(box area / image area).
    served = [
        (np.array([[0, 0, 50, 50], [10, 10, 30, 30]]), np.array([0.9, 0.6]), np.array([0, 0])),
        (np.zeros((0, 4)), np.zeros(0), np.zeros(0, dtype=int)),
        (np.array([[0, 0, 200, 100]]), np.array([0.75]), np.array([1])),
    ]
    b = monitoring_baseline.detection(served, [(100, 100), (64, 64), (200, 400)])
    assert b["schema_version"] == 1 and b["n"] == 3
    d = b["detection"]
    assert d["images"] == 3 and d["boxes"] == 3
    boxes, size, score = d["descriptors"]
    assert [boxes["name"], size["name"], score["name"]] == ["det:boxes", "det:size", "det:score"]
    assert boxes["edges"] == monitoring_baseline.BOX_COUNT_EDGES
    # One image with 0 boxes, one with 1, one with 2: bins 0, 1 and 2.
    assert boxes["counts"][:3] == [1, 1, 1] and sum(boxes["counts"]) == 3
    assert sum(size["counts"]) == 3 and sum(score["counts"]) == 3
    assert size["quantiles"]["p50"] == pytest.approx(
        0.5
    )  # sqrt(2500/10000), sqrt(400/10000)=0.2, sqrt(20000/80000)=0.5
    assert 0.6 <= score["quantiles"]["p05"] < score["quantiles"]["p95"] <= 0.9
    # No coordinate of any box is in the baseline.
    text = str(b)
    assert "200" not in text and "50," not in text
