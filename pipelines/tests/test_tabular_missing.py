"""Missing-value markers in numeric columns ("NA", "?", ...): read as numbers with gaps, not as categories; every
model family and its ONNX graph take the gaps (NaN) with parity; Retrospective data may have them where training did."""

import csv
import json

import numpy as np
import pytest

from builder_pipelines.common import contract
from builder_pipelines.common.data import Table
from builder_pipelines.common.errors import DataError
from builder_pipelines.tabular import export, models
from builder_pipelines.tabular.table import Column, Unseen, encode_features, infer_columns, set_fills
from test_tabular import make_data, make_spec, onnx_scores, run_cli, small_search, train_in_process  # noqa: F401 (fixture)
from test_tabular_evaluate import evaluate_spec


def _table(rows: list[dict]) -> Table:
    return Table(header=list(rows[0]), rows=rows)


def test_markers_make_a_numeric_column_with_missing_values():
    t = _table(
        [
            {"a": "1.5", "b": "x", "c": "2"},
            {"a": "NA", "b": "y", "c": "3"},
            {"a": "?", "b": "NA", "c": "n/a"},
            {"a": "10", "b": "x", "c": "4"},
        ]
    )
    a, b, c = infer_columns(t, ["a", "b", "c"])
    assert (a.type, a.min, a.max, a.missing) == ("numeric", 1.5, 10.0, True)
    assert b.type == "categorical" and b.codes == {"NA": 0, "x": 1, "y": 2}  # text with "NA" stays a category
    assert c.manifest() == {"name": "c", "type": "numeric", "min": 2.0, "max": 4.0, "missing": True}
    X = encode_features(t, [a, b, c])
    assert np.isnan(X[1, 0]) and np.isnan(X[2, 0]) and X[3, 0] == 10 and np.isnan(X[2, 2])
    assert Column.from_manifest(c.manifest()).missing


def test_the_markers_are_the_ones_the_dataset_checks_use():
    """src/datasets/csv.ts decides what the dataset report calls numeric; the two lists must not drift apart."""
    import re
    from pathlib import Path

    from builder_pipelines.tabular.table import MISSING_MARKERS

    ts = (Path(__file__).resolve().parents[2] / "src" / "datasets" / "csv.ts").read_text()
    listed = re.search(r"MISSING_MARKERS[^=]*= new Set\(\[([^\]]*)\]\)", ts).group(1)
    assert set(re.findall(r'"([^"]*)"', listed)) == MISSING_MARKERS


def test_a_marker_where_training_had_none_names_the_row_and_column():
    trained = [Column("a", "numeric", min=0, max=1)]
    with pytest.raises(
        DataError, match=r"data row 2, column 'a': 'NA' is not a number; the model's training data had no missing"
    ):
        encode_features(_table([{"a": "0.5"}, {"a": "NA"}]), trained)
    with pytest.raises(DataError, match=r"column 'a': empty value .*write NA where a number is missing"):
        infer_columns(_table([{"a": "0.5"}, {"a": " "}]), ["a"])


def test_fills_are_the_training_median_and_most_frequent_category_and_only_retrospective_uses_them():
    train = _table([{"a": "1", "b": "x"}, {"a": "NA", "b": "y"}, {"a": "3", "b": "y"}, {"a": "10", "b": "x"}])
    a, b = infer_columns(train, ["a", "b"])
    set_fills([a, b], encode_features(train, [a, b]))
    assert (a.fill, b.fill) == (3.0, "x")  # median of 1, 3, 10 (NA left out); x and y tie: the lowest code wins
    assert Column.from_manifest(a.manifest()).fill == 3.0 and b.manifest()["fill"] == "x"
    c = Column("c", "numeric", min=0, max=5, fill=2.5)  # trained without gaps
    new = _table([{"a": "?", "b": "z", "c": "NA"}, {"a": "4", "b": "w", "c": "1"}, {"a": "5", "b": "z", "c": "2"}])
    with pytest.raises(
        DataError, match=r"data row 1, column 'b': unknown category \(a value the model never saw\)"
    ) as err:
        encode_features(new, [a, b, c])  # /predict's rule: no fills
    assert "'z'" not in str(err.value)  # the value may identify a patient (issue 42)
    unseen: dict[str, Unseen] = {}
    X = encode_features(new, [a, b, c], unseen=unseen)
    assert np.isnan(X[0, 0])  # a had gaps in training: NaN, as the model learnt them, not a fill
    assert X[:, 1].tolist() == [b.codes["x"]] * 3 and X[0, 2] == 2.5
    assert unseen == {"b": Unseen(3, ["z", "w"]), "c": Unseen(1, ["NA"])}
    with pytest.raises(DataError, match=r"data row 1, column 'c': the value is not a number") as err:
        encode_features(_table([{"c": "<5"}]), [c], unseen={})  # text that is no marker stays an error
    assert "<5" not in str(err.value)  # data, not a marker: not repeated in the failure reason (issue 42)


@pytest.mark.parametrize("model", ["linear", "random_forest", "extra_trees", "lightgbm", "catboost", "blend"])
@pytest.mark.parametrize("problem", ["binary", "regression"])
def test_every_family_takes_missing_values_with_parity(model, problem):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3)).astype(np.float32).astype(np.float64)
    gap = rng.random(300) < 0.3
    X[gap, 0] = np.nan
    z = np.where(gap, 1.5, np.nan_to_num(X[:, 0])) + X[:, 1]  # the gap itself carries signal
    y = z if problem == "regression" else (z > 0.5).astype(int)
    cols = [Column("a", "numeric", missing=True), Column("b", "numeric"), Column("c", "numeric")]
    linear = {"model": "linear", "params": {"alpha" if problem == "regression" else "C": 1.0}}
    cfg = (
        {"model": "blend", "params": {"weights": [0.5, 0.5]}, "parts": [linear, {"model": "lightgbm", "params": {}}]}
        if model == "blend"
        else linear
        if model == "linear"
        else {"model": model, "params": {"depth": 4} if model == "catboost" else {}}
    )
    est = models.fit(cfg, problem, cols, X, y, seed=0, threads=1)
    ref = models.predict(est, problem, X)
    assert np.isfinite(ref).all()
    n_out = 1 if problem == "regression" else 2
    _, diff = export.check_parity(export.build_onnx(est, cfg, problem, 3, n_out, None), X, ref, problem)
    assert diff <= export.PARITY_TOL * (max(1.0, float(np.abs(ref).max())) if problem == "regression" else 1.0)
    if model in ("random_forest", "lightgbm", "linear") and problem == "binary":
        # Trees see the gap as a value of its own, the linear model as its flag: rows with a gap score high, as the
        # data says (the median alone, about 0, would put them near the middle).
        assert ref[gap, 1].mean() > ref[~gap, 1].mean() + 0.15
    if model == "linear":
        imp = models.importance(est, cfg, cols, X[:20])["abs_coefficient_standardised"]
        assert set(imp) == {"a", "b", "c"} and imp["a"] > imp["c"]


@pytest.mark.parametrize("model", ["linear", "random_forest", "extra_trees", "lightgbm", "catboost"])
def test_gaps_only_in_rows_the_model_was_not_fitted_on_keep_parity(model):
    # A column with one NA in a held-out zip of 200 rows: Builder's own split can put that row in test, so the model
    # is fitted without a gap and the export's parity check (on the test rows) meets one. It must not fail the build.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3)).astype(np.float32).astype(np.float64)
    y = (X[:, 0] + X[:, 1] > 0.5).astype(int)
    cols = [Column("a", "numeric", missing=True), Column("b", "numeric"), Column("c", "numeric")]
    cfg = {"model": model, "params": {"C": 1.0} if model == "linear" else {"depth": 4} if model == "catboost" else {}}
    est = models.fit(cfg, "binary", cols, X, y, seed=0, threads=1)
    test = X[:30].copy()
    test[::3, 0] = np.nan
    ref = models.predict(est, "binary", test)
    assert np.isfinite(ref).all()
    _, diff = export.check_parity(export.build_onnx(est, cfg, "binary", 3, 2, None), test, ref, "binary")
    assert diff <= export.PARITY_TOL


def _with_markers(table_path, every: int = 4):
    """Rewrites x1 as "NA" / "?" in every `every`-th row of the generated table (the signal of x1 is lost there)."""
    rows = list(csv.DictReader(open(table_path)))
    for i, r in enumerate(rows):
        if i % every == 0:
            r["x1"] = "NA" if i % 8 == 0 else "?"
    with open(table_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


@pytest.mark.train
def test_training_and_retrospective_with_markers(tmp_path):
    spec = make_spec(tmp_path, "binary")
    _with_markers(spec["data"]["table"])
    manifest, out = train_in_process(spec)
    assert contract.errors("manifest", manifest) == []
    x1 = manifest["input"]["columns"][0]
    assert x1["name"] == "x1" and x1["type"] == "numeric" and x1["missing"] is True
    assert "missing" not in manifest["input"]["columns"][1]
    assert manifest["metrics"]["test"]["auc"]["value"] > 0.8
    assert manifest["model_summary"]["onnx_parity"]["max_abs_diff"]["scores"] <= export.PARITY_TOL
    s = onnx_scores(out, np.array([[np.nan, -0.2, 2.0], [0.5, -0.2, 2.0]]))
    assert np.isfinite(s).all() and np.allclose(s.sum(1), 1, atol=1e-6)

    new_dir = tmp_path / "new"
    new_dir.mkdir()
    table, _, split = make_data(new_dir, "binary", n_patients=60, seed=3)
    _with_markers(table, every=3)
    ev = evaluate_spec(new_dir, out, table, split["train"] + split["val"] + split["test"])
    proc, _ = run_cli(ev, new_dir)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((new_dir / "eval" / "manifest.json").read_text())
    assert result["metrics"]["test"]["auc"]["value"] > 0.7
