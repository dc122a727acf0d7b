"""Tabular pipeline: binary (through the real CLI), multiclass, regression, categorical features,
parity, reproducibility and failure paths. Generated data only; each test takes a few seconds."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from builder_pipelines.common import contract
from builder_pipelines.common import events as _events
from builder_pipelines.tabular import export, models, search

PIPELINES = Path(__file__).resolve().parents[1]
_guard = _events.install_stdout_guard


@pytest.fixture(autouse=True)
def small_search(monkeypatch):
    """A short, time-independent search so runs are fast and reproducible (the CLI test uses the real plan)."""
    monkeypatch.setitem(
        search.PLANS, "fast", search.SearchPlan(folds=3, repeats=1, max_lgb_trials=2, linear_grid=3, ensemble_pool=3)
    )


def make_data(tmp_path: Path, problem: str, n_patients: int = 160, seed: int = 0, categorical: bool = True):
    """Rows per patient 1-2; features x1, x2 numeric, site categorical (when asked); split by patient."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_patients):
        for _ in range(1 + (p % 3 == 0)):
            x1, x2 = rng.normal(), rng.normal()
            site = rng.choice(["north", "south", "east"])
            bump = {"north": 0.0, "south": 1.5, "east": -1.5}[site] if categorical else 0.0
            z = 1.5 * x1 - x2 + bump + rng.normal() * 0.5
            if problem == "binary":
                label = "pos" if z > 0 else "neg"
            elif problem == "multiclass":
                label = str(int(np.digitize(z, [-1.0, 1.0])) + 1)  # "1", "2", "3"
            else:
                label = f"{z:.4f}"
            row = {"pid": f"P{p:03d}", "outcome": label, "x1": f"{x1:.4f}", "x2": f"{x2:.3f}"}
            if categorical:
                row["site"] = site
            rows.append(row)
    table = tmp_path / "table.csv"
    with open(table, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ids = [f"P{p:03d}" for p in range(n_patients)]
    rng.shuffle(ids)
    a, b = int(0.6 * n_patients), int(0.8 * n_patients)
    return (
        table,
        [c for c in rows[0] if c not in ("pid", "outcome")],
        {"seed": seed, "train": ids[:a], "val": ids[a:b], "test": ids[b:]},
    )


def make_spec(tmp_path: Path, problem: str, metric: str = "auc", seed: int = 7, budget: float = 10, **data_kw) -> dict:
    table, cols, split = make_data(tmp_path, problem, **data_kw)
    return {
        "schema_version": 1,
        "job_id": "t",
        "command": "train",
        "kind": "tabular",
        "problem": problem,
        "data": {
            "root": str(tmp_path),
            "table": str(table),
            "id_col": "pid",
            "label_cols": ["outcome"],
            "data_cols": cols,
        },
        "split": split,
        # As src/experiments/study.ts translates optimization_metric: regression is selected on rmse, no thresholds.
        "metric": "rmse" if problem == "regression" else metric,
        "threshold_metric": None if problem == "regression" else metric,
        "budget": {"mode": "fast", "time_budget_s": budget},
        "seed": seed,
        "device": "cpu",
        "out_dir": str(tmp_path / "out"),
    }


def run_cli(spec: dict, tmp_path: Path, name: str = "spec.json"):
    path = tmp_path / name
    path.write_text(json.dumps(spec))
    proc = subprocess.run(
        [sys.executable, "-m", "builder_pipelines", spec["command"], "--spec", str(path), "--out", spec["out_dir"]],
        cwd=PIPELINES,
        capture_output=True,
        text=True,
        timeout=120,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines()]  # every stdout line must be an event
    for ev in events:
        assert contract.errors("event", ev) == [], ev
    return proc, events


def train_in_process(spec: dict) -> tuple[dict, Path]:
    """run() in this process; its events go to a buffer and sys.stdout is restored (run() redirects it)."""
    from builder_pipelines.common import events
    from builder_pipelines.tabular import run

    out = Path(spec["out_dir"])
    saved_stdout, saved_out = sys.stdout, events._out
    try:
        events.install_stdout_guard = lambda: None  # keep pytest's capture in place
        events._out = io.StringIO()
        assert run(spec, str(out)) == "manifest.json"
    finally:
        sys.stdout, events._out = saved_stdout, saved_out
        events.install_stdout_guard = _guard
    return json.loads((out / "manifest.json").read_text()), out


def onnx_scores(out: Path, X: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["input"] and [o.name for o in sess.get_outputs()] == ["scores"]
    return sess.run(["scores"], {"input": X.astype(np.float32)})[0]


@pytest.mark.train
def test_binary_through_cli(tmp_path, monkeypatch):
    monkeypatch.undo()  # the real fast plan, bounded by the 8 s budget
    spec = make_spec(tmp_path, "binary", metric="f_macro", budget=8)
    proc, events = run_cli(spec, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert events[-1] == {"type": "result", "manifest": "manifest.json"}
    trials = [e for e in events if e["type"] == "progress" and "trial" in e]
    assert trials and all(e["trials"] >= e["trial"] for e in trials) and any(e.get("eta_s") is not None for e in trials)
    assert any(e["type"] == "metric" and e["name"] == "cv_f_macro" for e in events)
    out = Path(spec["out_dir"])
    m = json.loads((out / "manifest.json").read_text())
    assert contract.errors("manifest", m) == []
    assert [c["code"] for c in m["classes"]] == ["neg", "pos"]
    site = m["input"]["columns"][2]
    assert site == {
        "name": "site",
        "type": "categorical",
        "codes": {"east": 0, "north": 1, "south": 2},
        "fill": site["fill"],
    }
    assert site["fill"] in site["codes"]  # what Retrospective studies use for a category the model never saw
    assert m["input"]["columns"][0]["type"] == "numeric" and m["input"]["columns"][0]["min"] < 0
    assert len(m["thresholds"]) == 2 and abs(sum(m["thresholds"]) - 1) < 1e-6
    assert m["threshold_rule"].startswith("threshold maximising F1")
    assert m["metrics"]["test"]["auc"]["value"] > 0.85
    assert (
        m["metrics"]["test"]["auc"]["ci_low"]
        <= m["metrics"]["test"]["auc"]["value"]
        <= m["metrics"]["test"]["auc"]["ci_high"]
    )
    assert "validation" in m["metrics"]
    assert m["model_summary"]["onnx_parity"]["max_abs_diff"]["scores"] <= export.PARITY_TOL
    for fig in m["figures"]:
        assert (out / fig["file"]).read_text().startswith("<svg")
    assert {f["name"] for f in m["figures"]} >= {"roc", "pr", "calibration", "importance"}
    report = json.loads((out / "report.json").read_text())
    assert report["trials"] and report["test"]["confusion_matrix"] and "calibration" in report
    # The operating point's material: the positive class's validation and test scores, patients numbered, no ids.
    op = json.loads((out / m["operating_scores_file"]).read_text())
    counts = m["provenance"]["split_counts"]
    assert op["positive_index"] == m["clinical"]["positive_class"]["index"]
    assert len(op["validation"]["score"]) == len(op["validation"]["label"]) > 0
    assert len(op["test"]["score"]) == len(op["test"]["label"]) == len(op["test"]["patient"])
    assert max(op["test"]["patient"]) + 1 == counts["test"] and set(op["test"]["label"]) == {0, 1}
    s = onnx_scores(out, np.array([[0.5, -0.2, 2.0], [-1.0, 1.0, 0.0]]))
    assert s.shape == (2, 2) and np.allclose(s.sum(1), 1, atol=1e-6) and s[0, 1] > s[1, 1]


@pytest.mark.train
def test_multiclass(tmp_path):
    m, out = train_in_process(make_spec(tmp_path, "multiclass"))
    assert [c["code"] for c in m["classes"]] == ["1", "2", "3"]
    assert m["threshold_rule"].startswith("multiclass")
    assert m["metrics"]["test"]["auc"]["value"] > 0.8 and set(m["metrics"]["test"]["auc"]["per_class"]) == {
        "0",
        "1",
        "2",
    }
    s = onnx_scores(out, np.array([[2.0, -1.0, 1.0], [-2.0, 1.0, 0.0]]))
    assert s.shape == (2, 3) and np.allclose(s.sum(1), 1, atol=1e-5)
    assert s[0].argmax() == 2 and s[1].argmax() == 0  # high z -> class "3", low z -> class "1"
    report = json.loads((out / "report.json").read_text())
    assert np.array(report["test"]["confusion_matrix"]).shape == (3, 3)


@pytest.mark.train
def test_regression(tmp_path):
    m, out = train_in_process(make_spec(tmp_path, "regression"))
    assert m["classes"] == [{"index": 0, "code": "outcome", "name": "outcome"}]
    assert "thresholds" not in m and m["metric"] == "rmse"
    assert m["metrics"]["test"]["r2"]["value"] > 0.7 and m["metrics"]["test"]["rmse"]["value"] > 0
    s = onnx_scores(out, np.array([[1.0, 0.0, 2.0], [-1.0, 0.0, 2.0]]))
    assert s.shape == (2, 1) and s[0, 0] > s[1, 0]
    assert {f["name"] for f in m["figures"]} == {"predicted_vs_true", "importance"}


@pytest.mark.train
def test_categorical_codes_carry_the_signal(tmp_path):
    """The label depends on the category strongly; the graph must see the code, not a string."""
    m, out = train_in_process(make_spec(tmp_path, "binary", n_patients=200))
    codes = m["input"]["columns"][2]["codes"]
    s = onnx_scores(out, np.array([[0.0, 0.0, codes["south"]], [0.0, 0.0, codes["east"]]]))
    assert s[0, 1] > s[1, 1] + 0.3
    imp = json.loads((out / "report.json").read_text())["importance"]
    first = next(iter(imp.values()))
    assert set(first) == {"x1", "x2", "site"}


def test_linear_only_export_has_preprocessing_inside(tmp_path):
    """A linear model on raw (unscaled, categorical) inputs: the graph must standardise and one-hot itself."""
    from builder_pipelines.tabular.table import Column

    rng = np.random.default_rng(1)
    X = np.c_[rng.normal(100, 30, 300), rng.integers(0, 3, 300)].astype(np.float32).astype(np.float64)
    y = ((X[:, 0] - 100) / 30 + (X[:, 1] == 2) + rng.normal(size=300) * 0.3 > 0.5).astype(int)
    cols = [Column("a", "numeric", min=0, max=1), Column("b", "categorical", codes={"x": 0, "y": 1, "z": 2})]
    cfg = {"model": "linear", "params": {"C": 1.0}}
    est = models.fit(cfg, "binary", cols, X, y, 0, 1)
    cal = {"method": "platt", "a": 1.3, "b": -0.2}
    from builder_pipelines.tabular import calibration

    g = export.build_onnx(est, cfg, "binary", 2, 2, cal)
    got, diff = export.check_parity(g, X, calibration.apply(cal, models.predict(est, "binary", X)), "binary")
    assert diff <= export.PARITY_TOL and got.shape == (300, 2)


def test_selection_auc_matches_sklearn():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 200)
    s = rng.dirichlet([1, 1, 1], 200)
    s[:20, 0] = 0.5  # ties
    want = np.mean([roc_auc_score(y == c, s[:, c]) for c in range(3)])
    assert abs(search.selection_score("multiclass", "auc", y, s) - want) < 1e-12
    yb = (y == 1).astype(int)
    assert abs(search.selection_score("binary", "auc", yb, s[:, :2]) - roc_auc_score(yb, s[:, 1])) < 1e-12


def test_float32_thresholds_match_onnx():
    """LightGBM thresholds just below a float32 value flip decisions once rounded; float32_exact fixes them."""
    rng = np.random.default_rng(0)
    X = np.round(rng.random((400, 2)), 3).astype(np.float32).astype(np.float64)
    y = (X[:, 0] + 0.3 * rng.random(400) > 0.6).astype(int)
    cfg = {"model": "lightgbm", "params": {"min_child_samples": 2, "num_leaves": 31}, "n_estimators": 200}
    est = models.fit(cfg, "binary", [], X, y, 0, 1)
    before = models.predict(est, "binary", X)
    models.float32_exact(est)
    after = models.predict(est, "binary", X)
    assert np.array_equal(before, after)  # same decisions on every float32 input
    g = export.build_onnx(est, cfg, "binary", 2, 2, None)
    export.check_parity(g, X, after, "binary")


@pytest.mark.parametrize("problem", ["multiclass", "regression"])
def test_blend_export_parity(problem):
    """A weighted ensemble of a linear model and two LightGBM models is one graph that matches Python."""
    from builder_pipelines.tabular.table import Column

    rng = np.random.default_rng(4)
    X = np.c_[rng.normal(size=(300, 2)), rng.integers(0, 3, 300)].astype(np.float32).astype(np.float64)
    z = X[:, 0] - X[:, 1] + (X[:, 2] == 1)
    y = np.digitize(z, [-0.5, 0.5]) if problem == "multiclass" else z
    cols = [Column("a", "numeric"), Column("b", "numeric"), Column("c", "categorical", codes={"p": 0, "q": 1, "r": 2})]
    lin = {"model": "linear", "params": {"C": 1.0} if problem == "multiclass" else {"alpha": 1.0}}
    gbm = {"model": "lightgbm", "params": {"num_leaves": 7}, "n_estimators": 30}
    gbm2 = {"model": "lightgbm", "params": {"num_leaves": 3, "learning_rate": 0.2}, "n_estimators": 20}
    cfg = {"model": "blend", "params": {"weights": [0.5, 0.3, 0.2]}, "parts": [lin, gbm, gbm2]}
    est = models.fit(cfg, problem, cols, X, y, 0, 1)
    for part in est.parts[1:]:
        models.float32_exact(part)
    k = 3 if problem == "multiclass" else 1
    cal = {"method": "temperature", "temperature": 0.8} if problem == "multiclass" else None
    from builder_pipelines.tabular import calibration

    g = export.build_onnx(est, cfg, problem, 3, k, cal)
    got, diff = export.check_parity(g, X, calibration.apply(cal, models.predict(est, problem, X)), problem)
    assert got.shape == (300, k) and diff <= export.PARITY_TOL * (1 if problem == "multiclass" else 10)
    imp = models.importance(est, cfg, cols, X)
    assert set(imp) == {"abs_coefficient_standardised", "gain", "mean_abs_contribution"}


@pytest.mark.train
def test_parity_failure_fails_the_job(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "PARITY_TOL", -1.0)  # nothing can pass
    spec = make_spec(tmp_path, "binary")
    with pytest.raises(export.ParityError):
        train_in_process(spec)
    assert not (Path(spec["out_dir"]) / "manifest.json").exists()


@pytest.mark.train
def test_reproducible_with_the_same_seed(tmp_path):
    a = make_spec(tmp_path / "a", "binary", seed=3) if (tmp_path / "a").mkdir() is None else None
    b = make_spec(tmp_path / "b", "binary", seed=3) if (tmp_path / "b").mkdir() is None else None
    ma, oa = train_in_process(a)
    mb, ob = train_in_process(b)
    assert ma["metrics"] == mb["metrics"] and ma["model_summary"]["params"] == mb["model_summary"]["params"]
    X = np.random.default_rng(0).normal(size=(50, 3))
    X[:, 2] = np.arange(50) % 3
    assert np.array_equal(onnx_scores(oa, X), onnx_scores(ob, X))


@pytest.mark.train
def test_wrong_class_count_is_a_data_error(tmp_path):
    spec = make_spec(tmp_path, "multiclass")
    spec["problem"] = "binary"
    proc, events = run_cli(spec, tmp_path)
    assert proc.returncode == 3
    assert "exactly 2 classes" in proc.stderr and events[-1]["type"] == "log"


@pytest.mark.train
def test_best_mode_cross_validates_catboost_and_publishes_with_parity(tmp_path, monkeypatch):
    """Best mode's plan, shortened (3 linear settings, 2 repeats, 2 random LightGBM settings), with a budget that leaves
    room for everything: both CatBoost candidates are scored, and the published model passes parity."""
    import dataclasses

    plan = dataclasses.replace(search.PLANS["best"], repeats=2, max_lgb_trials=2, linear_grid=3)
    monkeypatch.setitem(search.PLANS, "best", plan)
    spec = make_spec(tmp_path, "binary", budget=600)
    spec["budget"]["mode"] = "best"
    manifest, out = train_in_process(spec)
    report = json.loads((out / "report.json").read_text())
    cb = [t for t in report["trials"] if t["model"] == "catboost"]
    assert [t["params"] for t in cb] == [{}, {"depth": 4}] and all(0.5 < t["cv_score"] <= 1 for t in cb)
    assert "dropped" not in report["selection"] and not manifest["model_summary"]["search_stopped_by_time"]
    assert manifest["model_summary"]["onnx_parity"]["max_abs_diff"]["scores"] <= export.PARITY_TOL
    assert manifest["provenance"]["framework"]["catboost"]
    assert contract.errors("manifest", manifest) == []
