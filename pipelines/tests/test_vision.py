"""Vision pipeline end to end on tiny generated images (16x16 blobs), a few seconds of training each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from builder_pipelines.common import contract, events
from builder_pipelines.common.errors import DataError
from builder_pipelines.vision import run
from builder_pipelines.vision.preprocess import preprocess_file

sys.path.insert(0, str(Path(__file__).parent))
from device_choice import TORCH_DEVICE  # noqa: E402
from vision_data import make_dataset, write_spec  # noqa: E402

PIPELINES = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _restore_stdout():
    """run() installs the stdout guard for the CLI; undo it between tests."""
    saved_stdout, saved_out = sys.stdout, events._out
    yield
    sys.stdout, events._out = saved_stdout, saved_out


def _train(tmp_path_factory, task: str, data_over: dict | None = None, **spec_over):
    tmp = tmp_path_factory.mktemp(task)
    spec = make_dataset(tmp, task)
    spec.update(spec_over)
    spec["data"].update(data_over or {})
    saved_stdout, saved_out = sys.stdout, events._out
    try:
        name = run(spec, spec["out_dir"])
    finally:
        sys.stdout, events._out = saved_stdout, saved_out
    out = Path(spec["out_dir"])
    return spec, out, json.loads((out / name).read_text())


@pytest.fixture(scope="module")
def multiclass(tmp_path_factory):
    # A subgroup column beside the image path (issue 37 item 5): here the class name, so every group is small.
    return _train(tmp_path_factory, "multiclass", data_over={"subgroup_cols": ["label_name"]})


def _test_inputs(spec, manifest, limit=8):
    import csv

    test = set(spec["split"]["test"])
    with open(spec["data"]["table"], encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["patient"] in test][:limit]
    return np.stack(
        [preprocess_file(os.path.join(spec["data"]["root"], r["path"]), manifest["input"]["image"]) for r in rows]
    )


def _check_manifest_files(out: Path, manifest: dict):
    assert contract.errors("manifest", manifest) == []
    for fig in manifest["figures"]:
        svg = (out / fig["file"]).read_text()
        assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    report = json.loads((out / manifest["report_file"]).read_text())
    assert "test" in report and "metrics" in report


@pytest.mark.train
def test_multiclass_model_manifest_and_onnx(multiclass):
    spec, out, m = multiclass
    _check_manifest_files(out, m)
    assert [c["name"] for c in m["classes"]] == ["none", "left", "right"]  # from class_name_col, codes sorted
    assert m["input"]["image"]["width"] == 16 and m["input"]["image"]["channels"] == 1
    assert m["threshold_rule"] and len(m["thresholds"]) == 3
    # Unfamiliar inputs: calibrated on the validation split, the test split's rate measured (never chosen on it).
    check = m["input_check"]
    assert check["mode"] == "flag" and check["image"]["calibration"] == "validation split"
    assert check["image"]["test_images"] == len(spec["split"]["test"]) * 2  # two images per patient
    assert 0 <= check["image"]["test_flagged_rate"] <= 1 and check["image"]["descriptors"]["width_quantiles"][0] == 16
    # The monitoring baseline (issue 49): the validation and test images' scores and descriptors, counts only.
    b = m["monitoring_baseline"]
    images = (len(spec["split"]["val"]) + len(spec["split"]["test"])) * 2  # two images per patient
    assert b["n"] == images and sum(b["score"]["counts"]) == images and "positive_rate" not in b
    by = {d["name"]: d for d in b["image"]["descriptors"]}
    assert b["image"]["images"] == images and sum(by["img:mean"]["counts"]) == images
    assert by["img:channels"]["counts"] == {"1": images} and "img:modality" not in by  # PNGs: no DICOM categories
    for name in ("auc", "f_macro", "precision", "recall", "accuracy", "ece"):
        entry = m["metrics"]["test"][name]
        assert entry["ci_low"] is None or entry["ci_low"] <= entry["value"] <= entry["ci_high"]
    assert m["metrics"]["test"]["accuracy"]["value"] >= 0.7  # blobs left/right/none are easy to tell apart
    # 9 test patients: each class name is held by fewer than 20, so they pool as "other", too small for figures.
    (sub,) = m["clinical"]["subgroups"]
    assert (sub["column"], sub["kind"]) == ("label_name", "categorical")
    assert [(g["label"], g["patients"], g["flag"], g["auc"]) for g in sub["groups"]] == [
        ("other", len(spec["split"]["test"]), "too_small", None)
    ]
    assert {f["name"] for f in m["figures"]} >= {
        "roc",
        "pr",
        "calibration",
        "confusion",
        "training_loss",
        "training_metric",
    }

    model = onnx.load(out / "model.onnx")
    assert model.opset_import[0].version >= 17
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["input"]
    x = _test_inputs(spec, m)
    for batch in (x[:1], x):  # dynamic batch size
        scores, cam = sess.run(["scores", "cam"], {"input": batch})
        assert scores.shape == (len(batch), 3)
        np.testing.assert_allclose(scores.sum(1), 1.0, atol=1e-5)
        assert cam.shape[:2] == (len(batch), 3) and cam.shape[2:] == (4, 4)  # 16 px -> two stride-2 stages
        assert (cam >= 0).all()


@pytest.mark.train
def test_multilabel(tmp_path_factory):
    spec, out, m = _train(tmp_path_factory, "multilabel")
    _check_manifest_files(out, m)
    assert [c["code"] for c in m["classes"]] == ["left", "right"]
    assert len(m["thresholds"]) == 2
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    scores, cam, check = sess.run(["scores", "cam", "input_check"], {"input": _test_inputs(spec, m)})
    # the unfamiliar-input check (vision/input_check.py), then the feature summary's projections for monitoring
    assert check.shape == (len(scores), 6 + m["input_check"]["image"]["projected_components"])
    assert scores.shape[1] == 2 and ((scores >= 0) & (scores <= 1)).all()
    assert not np.allclose(scores.sum(1), 1.0)  # independent sigmoids, not a softmax
    assert cam.shape[1] == 2
    assert m["metrics"]["test"]["auc"]["value"] >= 0.75


@pytest.mark.train
def test_regression(tmp_path_factory):
    spec, out, m = _train(tmp_path_factory, "regression")
    _check_manifest_files(out, m)
    assert "thresholds" not in m and set(m["metrics"]["test"]) == {"mae", "rmse", "r2"}
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    scores, cam, check = sess.run(["scores", "cam", "input_check"], {"input": _test_inputs(spec, m)})
    # the unfamiliar-input check (vision/input_check.py), then the feature summary's projections for monitoring
    assert check.shape == (len(scores), 6 + m["input_check"]["image"]["projected_components"])
    assert scores.shape[1] == 1 and cam.shape[1] == 1
    assert 1.0 < float(scores.mean()) < 7.0  # values in the target's units (blob radius 1.5..6), not standardised
    assert m["metrics"]["test"]["r2"]["value"] > 0.3


@pytest.mark.train
def test_evaluate_on_new_images(multiclass, tmp_path):
    _, src, source = multiclass
    spec = make_dataset(tmp_path, "multiclass", n=40, seed=7)
    pids = spec["split"]["train"] + spec["split"]["val"] + spec["split"]["test"]
    spec.update(
        command="evaluate", source_model={"dir": str(src)}, split={"seed": 1, "train": [], "val": [], "test": pids}
    )
    saved = sys.stdout, events._out
    try:
        name = run(spec, spec["out_dir"])
    finally:
        sys.stdout, events._out = saved
    out = Path(spec["out_dir"])
    m = json.loads((out / name).read_text())
    _check_manifest_files(out, m)
    assert (out / "model.onnx").read_bytes() == (src / "model.onnx").read_bytes()
    assert set(m["metrics"]) == {"test"} and m["metrics"]["test"] != source["metrics"]["test"]
    assert m["provenance"]["split_counts"]["test"] == 20 and m["provenance"] != source["provenance"]
    # clinical describes the new images (their confusion matrix), like metrics.
    same = {k: v for k, v in source.items() if k not in ("metrics", "provenance", "clinical")}
    assert {k: v for k, v in m.items() if k not in ("metrics", "provenance", "clinical")} == same
    assert m["clinical"]["confusion_matrix"]["labels"] == source["clinical"]["confusion_matrix"]["labels"]
    images = json.loads((out / "report.json").read_text())["test"]["n"]  # 20 patients, several images each
    assert sum(map(sum, m["clinical"]["confusion_matrix"]["counts"])) == images


@pytest.mark.train
def test_cli_events_and_exit_code(tmp_path):
    spec = make_dataset(tmp_path, "binary", n=60)
    spec["budget"]["time_budget_s"] = 6
    path = write_spec(tmp_path, spec)
    proc = subprocess.run(
        [sys.executable, "-m", "builder_pipelines", "train", "--spec", path, "--out", spec["out_dir"]],
        cwd=PIPELINES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    evs = [json.loads(line) for line in proc.stdout.splitlines()]
    for e in evs:
        assert contract.errors("event", e) == [], e
    assert evs[-1] == {"type": "result", "manifest": "manifest.json"}
    assert any(e["type"] == "metric" and e["split"] == "test" and e["name"] == "auc" for e in evs)
    assert any(e["type"] == "progress" and e["stage"] == "training" for e in evs)
    # one denominator for the whole build ("trial 1 of up to N" ... "trial k of up to N"), never below the trial number
    training = [e for e in evs if e["type"] == "progress" and "trials" in e]
    assert len({e["trials"] for e in training}) == 1 and all(e["trial"] <= e["trials"] for e in training)
    m = json.loads((Path(spec["out_dir"]) / "manifest.json").read_text())
    assert m["problem"] == "binary" and len(m["thresholds"]) == 2
    # The operating point's material: validation and test scores of the positive class, patients numbered.
    op = json.loads((Path(spec["out_dir"]) / m["operating_scores_file"]).read_text())
    assert op["validation"]["source"] == "validation split" and len(op["validation"]["score"]) == len(
        op["validation"]["label"]
    )
    assert len(op["test"]["score"]) == len(op["test"]["patient"]) == len(op["test"]["label"])
    assert max(op["test"]["patient"]) + 1 == len(spec["split"]["test"])


@pytest.mark.train
def test_data_errors(tmp_path):
    spec = make_dataset(tmp_path, "multiclass", n=20)
    bad = dict(spec, problem="binary")  # three classes in a binary task
    with pytest.raises(DataError, match="exactly 2 classes"):
        run(bad, spec["out_dir"])
    table = Path(spec["data"]["table"])
    text = table.read_text().splitlines()
    text[1] = text[1].rsplit(",", 1)[0] + ",another name"  # one code, two names
    table.write_text("\n".join(text) + "\n")
    with pytest.raises(DataError, match="one to one"):
        run(spec, spec["out_dir"])


@pytest.mark.train
def test_best_mode_publishes_a_cross_fitted_ensemble(tmp_path_factory):
    spec, out, m = _train(tmp_path_factory, "binary", budget={"mode": "best", "time_budget_s": 25})
    _check_manifest_files(out, m)
    sel = m["model_summary"]["selection"]
    n_train_val = sum(
        1 for p in spec["split"]["train"] + spec["split"]["val"] for _ in range(2)
    )  # two images per patient
    assert sel["method"] == "cross-fitted ensemble" and sel["rows"] == n_train_val
    assert len(sel["candidates"]) >= 2  # at least the planned rounds, each of a different recipe
    assert len({c["architecture"] for c in sel["candidates"]}) == len(sel["candidates"][:3])
    for c in sel["candidates"]:
        assert c["models"] == 5 and c["ci_low"] <= c["oof_auc"] <= c["ci_high"] and c["why"]
    kept = [c for c in sel["candidates"] if c["kept"]]
    assert kept and m["model_summary"]["ensemble_size"] == 5 * len(kept)
    assert len(m["model_summary"]["trials"]) == 5 * len(sel["candidates"])
    # validation metrics are out of fold over the pooled train + validation images: the bootstrap resamples those patients
    assert m["metrics"]["validation"]["auc"]["value"] >= 0.7
    # The operating point is chosen on the same out-of-fold scores as the thresholds.
    op = json.loads((out / m["operating_scores_file"]).read_text())
    assert op["validation"]["source"] == "out-of-fold (cross-fitted)" and len(op["validation"]["score"]) == n_train_val
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    scores, cam = sess.run(["scores", "cam"], {"input": _test_inputs(spec, m)})
    np.testing.assert_allclose(scores.sum(1), 1.0, atol=1e-5)
    assert (cam >= 0).all() and cam.shape[1] == 2
    assert max(m["model_summary"]["onnx_parity"]["max_abs_diff"].values()) <= 1e-4


def test_folds_keep_patients_together_and_classes_balanced():
    from builder_pipelines.vision.crossfit import assign_folds

    rng = np.random.default_rng(0)
    groups = np.repeat([f"p{i}" for i in range(50)], 2)
    labels = np.repeat(rng.integers(0, 2, 50), 2)
    folds = assign_folds(groups, labels, 5, seed=4)
    assert (folds == assign_folds(groups, labels, 5, seed=4)).all()  # seeded
    for g in np.unique(groups):
        assert len(set(folds[groups == g])) == 1
    per_fold = np.array([[((folds == f) & (labels == c)).sum() // 2 for c in (0, 1)] for f in range(5)])
    assert (per_fold.max(0) - per_fold.min(0) <= 1).all() and set(folds) == set(range(5))


@pytest.mark.train
def test_keep_last_uses_no_validation_choice():
    import time

    import torch

    from builder_pipelines.vision.train import Candidate, TrainData, train_trial

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(40, 1, 16, 16, generator=gen)
    y = torch.randint(0, 2, (40,), generator=gen)  # noise labels: the best epoch and the last one differ
    data = TrainData(
        x[:30], y[:30], x[30:], y[30:], np.eye(2, dtype=int)[y[30:].numpy()], "binary", "auc", 2, None, False
    )
    r = train_trial(
        Candidate("resnet", 8, 1, 3e-3), data, 16, 0, TORCH_DEVICE, time.monotonic() + 60, epochs=12, keep="last"
    )
    assert r.epochs_run == 12 and r.stopped == "schedule"
    assert r.val_score == pytest.approx(r.history[-1]["val_metric"], abs=1e-6)
    with pytest.raises(ValueError, match="keep"):
        train_trial(
            Candidate("resnet", 8, 1, 3e-3), data, 16, 0, TORCH_DEVICE, time.monotonic() + 60, epochs=1, keep="median"
        )


def test_a_round_is_left_out_only_when_clearly_worse():
    from builder_pipelines.vision.crossfit import Round, choose_rounds
    from builder_pipelines.vision.train import Candidate, TrainData

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    onehot = np.eye(2, dtype=int)[y]
    data = TrainData(None, None, None, None, onehot, "binary", "auc", 2, None, False)
    good = np.stack([np.zeros(200), (y * 2 - 1) * 1.0 + rng.normal(0, 1.0, 200)], 1)  # AUC about 0.92
    close = np.stack([np.zeros(200), (y * 2 - 1) * 1.0 + rng.normal(0, 1.05, 200)], 1)  # about the same
    noise = np.stack([np.zeros(200), rng.normal(0, 1.0, 200)], 1)  # AUC about 0.5
    rounds = [Round(Candidate("resnet", 8, 1, 1e-3), s, [], oof, oof) for s, oof in enumerate([good, close, noise])]
    choose_rounds(rounds, data, np.array([f"p{i}" for i in range(200)]), seed=0)
    assert [r.kept for r in rounds] == [True, True, False]
    assert rounds[0].ci[0] <= rounds[0].score <= rounds[0].ci[1]
    assert "left out" in rounds[2].why
    assert sorted(r.why.split(":")[0] for r in rounds[:2]) == ["best out-of-fold score", "kept"]
