"""The cross-fitted ensemble's plan for larger image sets, its fallback, and the test-time augmentation rule."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch

from builder_pipelines.common import events
from builder_pipelines.vision import crossfit_plan, run
from builder_pipelines.vision.crossfit import Round, choose_flip_tta, ensemble_oof
from builder_pipelines.vision.export import check_parity
from builder_pipelines.vision.models import CamNet, ExportModel
from builder_pipelines.vision.train import Candidate, TrainData

sys.path.insert(0, str(Path(__file__).parent))
from device_choice import TORCH_DEVICE  # noqa: E402
from vision_data import make_dataset  # noqa: E402

CPU = TORCH_DEVICE  # the name is kept: CPU unless BUILDER_TEST_DEVICE says cuda


def _train(tmp_path, budget_s: float):
    spec = make_dataset(tmp_path, "binary")
    spec["budget"] = {"mode": "best", "time_budget_s": budget_s}
    saved_stdout, saved_out = sys.stdout, events._out
    try:
        name = run(spec, spec["out_dir"])
    finally:
        sys.stdout, events._out = saved_stdout, saved_out
    out = Path(spec["out_dir"])
    return spec, out, json.loads((out / name).read_text())


def _probe(train_s: float = 1e-3, export_s: float = 0.0, metrics_s: float = 0.0) -> crossfit_plan.Probe:
    return crossfit_plan.Probe(train_s, 0.0, export_s, metrics_s, metrics_s, 0.0, 5000, 600)


def test_plan_takes_the_most_folds_that_fit_and_asks_for_the_small_recipe_before_going_lower():
    # 5,000 pooled images at 1 ms per training image: 5 folds x 8 epochs x 4,000 images = 160 s of training; the
    # finish (nothing to export or score in this probe) keeps its fixed 5 s
    plan = crossfit_plan.large_plan(5000, _probe(), 205.0, CPU, 600)
    assert plan is not None and plan.folds == 5 and plan.planned_rounds == 1 and "5 folds" in plan.why
    assert {c.family for c in plan.recipes} == {"resnet"}
    # 4 folds need 4 x 8 x 3,750 = 120 s
    assert crossfit_plan.large_plan(5000, _probe(), 155.0, CPU, 600).folds == 4
    # below that the ladder's next rung is the smaller recipe, which this probe did not time: no plan yet (choose_plan
    # times it then; the ladder itself: test_vision_plan_ladder.py)
    assert crossfit_plan.large_plan(5000, _probe(), 105.0, CPU, 600) is None
    timed = dataclasses.replace(_probe(), small_train_s=1e-3)  # as costly as the main one: 3 folds x 4 epochs, 40 s
    assert crossfit_plan.large_plan(5000, timed, 105.0, CPU, 600).folds == 3
    assert crossfit_plan.large_plan(5000, timed, 53.0, CPU, 600).folds == 3


def test_plan_fills_the_budget_with_whole_rounds_and_stretched_schedules():
    # Issue 43: a fast machine used to end each model at its ~1,500-step schedule (13 epochs of 3,600 images here,
    # a 234 s round at 5 folds) and start no round that did not wholly fit, leaving much of the budget unused.
    plan = crossfit_plan.large_plan(4500, _probe(), 1005.0, CPU, 600)
    assert plan.folds == 5 and plan.planned_rounds == 3  # 3 x 234 s fit 85 % of 1,000 s; 4 do not
    # Every model's schedule may stretch to fill its share: 15 models x cap epochs x 3.6 s cover the 1,000 s.
    assert plan.epoch_cap > 13 and 15 * plan.epoch_cap * 3.6 >= 1000.0
    assert "3 planned rounds" in plan.why


def test_the_finish_is_measured_and_kept_out_of_the_training_time():
    probe = _probe(export_s=2.0, metrics_s=10.0)
    # 5 graphs to export at 2 s, metrics 10 s on the out-of-fold rows + 10 s on the test rows, 15 % margin, 5 s fixed
    assert probe.finish_seconds(5, 0) == pytest.approx(1.15 * (10 + 10 + 10) + 5)
    plan = crossfit_plan.large_plan(5000, probe, 195.0, CPU, 0)
    assert plan.folds == 4 and plan.finish_s == pytest.approx(1.15 * (8 + 20) + 5)  # 5 folds no longer fit
    # The metrics' cost at other sizes lies on the line through the two measured ones.
    two = crossfit_plan.Probe(1e-3, 0.0, 0.0, 30.0, 10.0, 0.0, 5000, 1000)
    assert two.metrics_seconds(3000) == pytest.approx(20.0)
    assert two.finish_seconds(1, 0, 3000) == pytest.approx(1.15 * (20 + 10) + 5)


def test_only_larger_sets_are_held_to_the_memory_cap():
    small, large = np.array([f"p{i}" for i in range(3000)]), np.array([f"p{i}" for i in range(6000)])
    too_big = crossfit_plan.MAX_POOLED_BYTES + 1
    assert crossfit_plan.eligible("best", small, too_big)  # the small-set path as before
    assert crossfit_plan.eligible("best", large, 6000 * 28 * 28 * 4)
    assert not crossfit_plan.eligible("best", large, too_big)
    assert not crossfit_plan.eligible("fast", small, 1)
    assert not crossfit_plan.eligible("best", np.repeat(["a", "b"], 50), 1)  # too few patients for 5 folds


@pytest.mark.train
def test_larger_set_takes_the_probed_plan_and_publishes_a_checked_graph(tmp_path, monkeypatch):
    # The tiny set (72 train + validation images) stands in for a set above the small-set limit.
    monkeypatch.setattr(crossfit_plan, "SMALL_MAX_IMAGES", 40)
    # The finish estimate has its own test above; here its measured parts (export, bootstrap metrics: tens of seconds
    # on a loaded 2-core host) are left out so that the tiny budget still admits a plan whatever the load.
    monkeypatch.setattr(crossfit_plan, "_metrics_seconds", lambda *a, **k: 0.0)
    monkeypatch.setattr(crossfit_plan, "_export_seconds", lambda *a, **k: 0.0)
    monkeypatch.setattr(crossfit_plan, "FINISH_FIXED_S", 0.0)
    spec, out, m = _train(tmp_path, 40)
    sel = m["model_summary"]["selection"]
    spent = m["model_summary"]["seconds"]  # how the budget was spent, as the report says it
    assert {"budget", "plan_probe", "search", "export", "evaluation", "kept_for_export_and_evaluation"} <= set(spent)
    assert spent["budget"] == 40 and len(sel["round_seconds"]) == len(sel["candidates"])
    assert sel["method"] == "cross-fitted ensemble" and sel["rows"] == 72
    assert sel["folds"] in crossfit_plan.LARGE_FOLDS and f"{sel['folds']} folds" in sel["plan"]
    for c in sel["candidates"]:
        assert c["architecture"] == "resnet-w16-d1-lr0.003" and c["models"] == sel["folds"]
    tta = sel["test_time_augmentation"]
    assert tta["kept"] == m["model_summary"]["flip_tta"] and tta["why"]
    kept = [c for c in sel["candidates"] if c["kept"]]
    assert m["model_summary"]["ensemble_size"] == sel["folds"] * len(kept)
    assert max(m["model_summary"]["onnx_parity"]["max_abs_diff"].values()) <= 1e-4
    x = np.random.default_rng(0).normal(size=(3, 1, 16, 16)).astype(np.float32)
    scores, cam = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        ["scores", "cam"], {"input": x}
    )
    np.testing.assert_allclose(scores.sum(1), 1.0, atol=1e-5)
    assert (cam >= 0).all() and cam.shape[:2] == (3, 2)


@pytest.mark.train
def test_no_plan_falls_back_to_the_search(tmp_path, monkeypatch):
    monkeypatch.setattr(crossfit_plan, "SMALL_MAX_IMAGES", 40)
    monkeypatch.setattr(crossfit_plan, "PLAN_SAFETY", 1e-9)  # as if even one round of 3 folds took forever
    _, _, m = _train(tmp_path, 12)
    assert "selection" not in m["model_summary"] and not m["model_summary"]["flip_tta"]
    assert m["model_summary"]["ensemble_size"] >= 1


def _rounds(oof, flipped):
    return [Round(Candidate("resnet", 8, 1, 1e-3), 0, [], oof, flipped)]


def test_flip_tta_is_kept_only_when_it_clearly_pays():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    data = TrainData(None, None, None, None, np.eye(2, dtype=int)[y], "binary", "auc", 2, None, True)
    groups = np.array([f"p{i}" for i in range(300)])
    view = lambda noise: np.stack([np.zeros(300), (y * 2 - 1) + rng.normal(0, noise, 300)], 1)  # noqa: E731
    helpful = _rounds(view(1.5), view(1.5))  # independent errors: the average is clearly better
    useless = _rounds(view(1.5), np.stack([np.zeros(300), rng.normal(0, 1.5, 300)], 1))  # flipped view is noise
    kept = choose_flip_tta(helpful, data, groups, seed=0)
    assert kept["kept"] and kept["gain"] > kept["paired_se"] > 0 and "2 network evaluations" in kept["serving_cost"]
    dropped = choose_flip_tta(useless, data, groups, seed=0)
    assert not dropped["kept"] and "not used" in dropped["why"]
    np.testing.assert_allclose(ensemble_oof(helpful, True), (helpful[0].oof + helpful[0].oof_flipped) / 2)
    # Flips off (left/right-sensitive anatomy): not even a clearly helpful flip average is used.
    off = choose_flip_tta(helpful, dataclasses.replace(data, allow_flips=False), groups, seed=0)
    assert not off["kept"] and "flips are off" in off["why"]


def test_flip_tta_graph_passes_parity_on_a_regression_head(tmp_path):
    from builder_pipelines.vision.export import export_onnx

    torch.manual_seed(0)
    model = ExportModel([CamNet("resnet", 1, 1, 16, width=8).eval()], "regression", 3.0, 1.0, flip_tta=True).eval()
    x = torch.randn(4, 1, 16, 16)
    export_onnx(model, x, str(tmp_path / "m.onnx"))
    assert max(check_parity(model, str(tmp_path / "m.onnx"), x).values()) <= 1e-4
    with pytest.raises(RuntimeError, match="disagree"):
        model.flip_tta = False  # a graph that averages two views against a model that does not
        check_parity(model, str(tmp_path / "m.onnx"), x)
