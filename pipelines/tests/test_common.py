import json

import numpy as np
import pytest

from builder_pipelines.common import contract, metrics, thresholds
from builder_pipelines.common.errors import SpecError
from builder_pipelines.common.spec import load_spec


def _spec(tmp_path, **over):
    spec = {
        "schema_version": 1,
        "job_id": "j1",
        "command": "train",
        "kind": "tabular",
        "problem": "binary",
        "data": {
            "root": str(tmp_path),
            "table": str(tmp_path / "t.csv"),
            "id_col": "id",
            "label_cols": ["y"],
            "data_cols": ["a"],
        },
        "split": {"seed": 1, "train": ["1"], "val": ["2"], "test": ["3"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": "fast", "time_budget_s": 10},
        "seed": 1,
        "device": "cpu",
        "out_dir": str(tmp_path / "out"),
    }
    spec.update(over)
    return spec


def test_valid_spec_loads(tmp_path):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(_spec(tmp_path)))
    assert load_spec(str(p))["kind"] == "tabular"


def test_invalid_spec_lists_every_problem(tmp_path):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(_spec(tmp_path, metric="accuracy", seed="x")))
    with pytest.raises(SpecError) as err:
        load_spec(str(p))
    assert "metric" in str(err.value) and "seed" in str(err.value)


def test_schemas_are_valid_json_schema():
    for name in ("job-spec", "manifest", "event"):
        contract.validator(name)


def test_binary_metrics_and_intervals():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    p1 = np.clip(y * 0.6 + rng.random(200) * 0.5, 0, 1)
    s = np.stack([1 - p1, p1], 1)
    yo = np.stack([1 - y, y], 1)
    dec = thresholds.apply_thresholds("binary", s, thresholds.choose_thresholds("binary", yo, s, "f_macro"))
    m = metrics.classification_metrics("binary", yo, s, dec, groups=np.arange(200), n_boot=100)
    assert 0.8 < m["auc"]["value"] <= 1
    assert m["auc"]["ci_low"] <= m["auc"]["value"] <= m["auc"]["ci_high"]
    assert set(m["auc"]["per_class"]) == {"0", "1"}
    assert contract.errors("manifest", {}) != []  # the schema rejects an empty manifest


def test_precision_rule_respects_recall_floor():
    y = np.array([0] * 50 + [1] * 50)
    s = np.linspace(0, 1, 100)
    t = thresholds.choose_threshold(y, s, "precision")
    pred = s >= t
    assert (pred & (y == 1)).sum() / 50 >= thresholds.RECALL_FLOOR


def test_bootstrap_keeps_patients_together():
    groups = np.array(["a", "a", "b", "b", "c"])
    for rows in metrics._bootstrap(groups, 20, 0):
        picked = groups[rows]
        for g in set(picked):
            assert (picked == g).sum() % (groups == g).sum() == 0


def test_spec_metric_follows_the_problem(tmp_path):
    # The same rules TypeScript's contract-drift test checks: regression is selected on rmse, detection on map50.
    assert (
        contract.errors("job-spec", _spec(tmp_path, problem="regression", metric="rmse", threshold_metric=None)) == []
    )
    assert contract.errors("job-spec", _spec(tmp_path, problem="regression", metric="auc", threshold_metric=None))
    assert (
        contract.errors(
            "job-spec",
            _spec(tmp_path, problem="detection", kind="detection", metric="map50", threshold_metric="recall"),
        )
        == []
    )
    assert contract.errors(
        "job-spec", _spec(tmp_path, problem="detection", kind="detection", metric="map50", threshold_metric="auc")
    )
    assert contract.errors("job-spec", _spec(tmp_path, metric="rmse"))
