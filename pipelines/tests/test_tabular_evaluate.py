"""``evaluate`` (Retrospective) of a trained tabular model on new data, through the real CLI."""

import csv
import json
from pathlib import Path

import pytest

from builder_pipelines.common import contract
from test_tabular import make_data, make_spec, run_cli, small_search, train_in_process  # noqa: F401 (fixture)

# Every test here evaluates a model it trains first.
pytestmark = pytest.mark.train


@pytest.fixture
def trained(tmp_path):
    spec = make_spec(tmp_path / "train", "binary") if (tmp_path / "train").mkdir() is None else None
    manifest, out = train_in_process(spec)
    return manifest, out


def evaluate_spec(tmp_path: Path, source: Path, table: Path, ids: list[str]) -> dict:
    return {
        "schema_version": 1,
        "job_id": "e",
        "command": "evaluate",
        "kind": "tabular",
        "problem": "binary",
        "data": {
            "root": str(tmp_path),
            "table": str(table),
            "id_col": "pid",
            "label_cols": ["outcome"],
            "data_cols": ["x1", "x2", "site"],
        },
        "split": {"seed": 0, "train": [], "val": [], "test": ids},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": "fast", "time_budget_s": 10},
        "seed": 1,
        "device": "cpu",
        "out_dir": str(tmp_path / "eval"),
        "source_model": {"dir": str(source)},
    }


def test_evaluate_new_data(tmp_path, trained):
    src_manifest, src_out = trained
    (tmp_path / "new").mkdir()
    table, _, split = make_data(tmp_path / "new", "binary", n_patients=80, seed=11)
    ids = split["train"] + split["val"] + split["test"]
    spec = evaluate_spec(tmp_path, src_out, table, ids)
    proc, events = run_cli(spec, tmp_path, "eval.json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert events[-1] == {"type": "result", "manifest": "manifest.json"}
    out = Path(spec["out_dir"])
    m = json.loads((out / "manifest.json").read_text())
    assert contract.errors("manifest", m) == []
    assert (out / "model.onnx").read_bytes() == (src_out / "model.onnx").read_bytes()
    assert set(m["metrics"]) == {"test"}
    assert m["metrics"]["test"] != src_manifest["metrics"]["test"] and m["metrics"]["test"]["auc"]["value"] > 0.8
    assert m["provenance"]["split_counts"] == {"train": 0, "val": 0, "test": 80}
    # operating_scores_file: the source's validation scores are not a study's (an operating point is chosen on the source).
    assert "operating_scores_file" in src_manifest and "operating_scores_file" not in m
    for key in set(src_manifest) - {"metrics", "provenance", "clinical", "operating_scores_file"}:
        assert m[key] == src_manifest[key], key
    # clinical describes the new data (its confusion matrix), for the source model's positive class.
    assert m["clinical"]["positive_class"] == {
        **src_manifest["clinical"]["positive_class"],
        "rule": "the evaluated model's positive class",
    }
    rows = json.loads((out / "report.json").read_text())["rows"]  # 80 patients, some with several rows
    assert sum(map(sum, m["clinical"]["confusion_matrix"]["counts"])) == rows
    for fig in m["figures"]:
        assert (out / fig["file"]).is_file()
    assert any(e["type"] == "metric" and e["split"] == "test" and e["name"] == "auc" for e in events)


def _rewrite(table: Path, change) -> list[dict]:
    rows = list(csv.DictReader(open(table, newline="")))
    change(rows)
    with open(table, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def test_a_few_unseen_values_take_the_training_fill_and_are_reported(tmp_path, trained):
    src_manifest, src_out = trained
    cols = {c["name"]: c for c in src_manifest["input"]["columns"]}
    assert isinstance(cols["x1"]["fill"], float) and cols["site"]["fill"] in cols["site"]["codes"]
    (tmp_path / "new").mkdir()
    table, _, _ = make_data(tmp_path / "new", "binary", n_patients=30, seed=12)

    def change(rows):
        rows[4]["site"] = "west"  # a category the model never saw
        rows[7]["x1"] = "NA"  # a gap in a column trained without gaps
        rows[9]["x1"] = "?"

    rows = _rewrite(table, change)
    spec = evaluate_spec(tmp_path, src_out, table, sorted({r["pid"] for r in rows}))
    proc, events = run_cli(spec, tmp_path, "eval.json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((Path(spec["out_dir"]) / "report.json").read_text())
    assert report["unseen_values"] == [
        {
            "column": "x1",
            "rows": 2,
            "examples": ["NA", "?"],
            "filled_with": "training median",
            "value": cols["x1"]["fill"],
        },
        {"column": "site", "rows": 1, "examples": ["west"], "filled_with": "most frequent training category"},
    ]
    warns = [e["message"] for e in events if e["type"] == "log" and e["level"] == "warn"]
    assert any("column 'site': 1 of" in w for w in warns)
    # The unseen values stay in the owner's report: the job log names the column and counts the rows (issue 42).
    assert not any(v in e.get("message", "") for e in events for v in ("west", "'NA'", "'?'"))
    # The training categories stay unnamed (issue 19): not even the one used as the fill.
    assert not any(v in w for w in warns for v in ("north", "south", "east"))


def test_unknown_category_names_row_and_column_for_a_model_without_fills(tmp_path, trained):
    # Models published before fills existed: an unseen value is still an error naming the row and column.
    _, src_out = trained
    manifest = json.loads((src_out / "manifest.json").read_text())
    for col in manifest["input"]["columns"]:
        del col["fill"]
    (src_out / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "new").mkdir()
    table, _, split = make_data(tmp_path / "new", "binary", n_patients=30, seed=12)
    rows = _rewrite(table, lambda rows: rows[4].update(site="west"))
    spec = evaluate_spec(tmp_path, src_out, table, sorted({r["pid"] for r in rows}))
    proc, events = run_cli(spec, tmp_path, "eval.json")
    assert proc.returncode == 3
    assert "data row 5, column 'site': unknown category" in proc.stderr
    line = next(x for x in proc.stderr.splitlines() if "unknown category" in x)
    assert "3 values" in line and not any(v in line for v in ("north", "south", "east"))  # issue 19
    assert "west" not in proc.stderr + proc.stdout  # nor the new value (issue 42)
    assert not (Path(spec["out_dir"]) / "manifest.json").exists()


def test_a_column_mostly_unseen_is_refused_as_a_coding_mismatch(tmp_path, trained):
    _, src_out = trained
    (tmp_path / "new").mkdir()
    table, _, _ = make_data(tmp_path / "new", "binary", n_patients=30, seed=12)
    # Issue 42: a column of names where the model expects categories. The failure reason (which the chat repeats,
    # and may send to a model server outside the hospital) names the column and counts the rows, never a value.
    rows = _rewrite(table, lambda rows: [r.update(site=f"Richard Roe-{i}") for i, r in enumerate(rows)])
    spec = evaluate_spec(tmp_path, src_out, table, sorted({r["pid"] for r in rows}))
    proc, events = run_cli(spec, tmp_path, "eval.json")
    assert proc.returncode == 3
    assert f"column 'site': {len(rows)} of {len(rows)} rows hold values the model never saw in training" in proc.stderr
    assert "is the column coded as in the training data?" in proc.stderr
    assert "Richard Roe" not in proc.stderr + proc.stdout
    assert not (Path(spec["out_dir"]) / "manifest.json").exists()


def test_evaluate_a_regression_model_published_before_metric_was_required(tmp_path):
    # Regression manifests used to carry no `metric`; the contract now requires one (rmse). Evaluating such an older
    # model must still publish a manifest that passes the schema, naming rmse as the spec does.
    (tmp_path / "train").mkdir()
    _, src_out = train_in_process(make_spec(tmp_path / "train", "regression", budget=4))
    legacy = json.loads((src_out / "manifest.json").read_text())
    del legacy["metric"]
    (src_out / "manifest.json").write_text(json.dumps(legacy))
    (tmp_path / "new").mkdir()
    table, _, split = make_data(tmp_path / "new", "regression", n_patients=40, seed=5)
    spec = dict(
        evaluate_spec(tmp_path, src_out, table, split["train"] + split["val"] + split["test"]),
        problem="regression",
        metric="rmse",
        threshold_metric=None,
    )
    proc, _ = run_cli(spec, tmp_path, "eval.json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = json.loads((Path(spec["out_dir"]) / "manifest.json").read_text())
    assert m["metric"] == "rmse" and contract.errors("manifest", m) == []
