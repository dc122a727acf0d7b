"""End-to-end detection: a generated dataset (shapes on noise, boxes known) trains to mAP@0.5 well above
chance; the exported ONNX matches PyTorch; the manifest validates; evaluate runs through the CLI."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch

from builder_pipelines.common import contract
from builder_pipelines.detection import run
from builder_pipelines.detection.export import export_onnx, session
from builder_pipelines.detection.model import Detector

sys.path.insert(0, os.path.dirname(__file__))
from detection_synthetic import make_dataset, write_spec  # noqa: E402
from device_choice import DEVICE  # noqa: E402

PIPELINES = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("det")
    spec = make_dataset(root / "data")
    out = root / "out"
    spec["out_dir"] = str(out)
    spec["budget"]["time_budget_s"] = 45
    assert run(spec, str(out)) == "manifest.json"
    with open(out / "manifest.json") as fh:
        return spec, out, json.load(fh)


@pytest.mark.train
def test_trains_well_above_chance(trained):
    _, _, manifest = trained
    test = manifest["metrics"]["test"]
    # Chance is ~0: a random box rarely overlaps a 10-24 px shape in a 64 px image at IoU 0.5.
    assert test["map50"]["value"] > 0.7, test["map50"]
    assert test["map50"]["ci_low"] <= test["map50"]["value"] <= test["map50"]["ci_high"]
    assert set(test["map50"]["per_class"]) == {"0", "1"}
    assert [c["name"] for c in manifest["classes"]] == ["circle", "rect"]
    assert "validation" in manifest["metrics"]


@pytest.mark.train
def test_manifest_states_serving(trained):
    _, out, manifest = trained
    assert contract.errors("manifest", manifest) == []
    image = manifest["input"]["image"]
    assert image["resize"] == "letterbox" and image["width"] == 64 and image["height"] == 64
    det = manifest["detection"]
    assert 0 < det["score_threshold"] < 1 and det["max_detections"] >= 100
    assert manifest["outputs"] == {"scores": "scores", "boxes": "boxes"}
    # The monitoring baseline (issue 49): boxes per image, box sizes and scores on the validation and test images.
    mb = manifest["monitoring_baseline"]["detection"]
    names = [d["name"] for d in mb["descriptors"]]
    assert names == ["det:boxes", "det:size", "det:score"]
    boxes, size, score = mb["descriptors"]
    assert sum(boxes["counts"]) == mb["images"] == manifest["monitoring_baseline"]["n"] > 0
    assert sum(size["counts"]) == sum(score["counts"]) == mb["boxes"] > 0
    assert 0 < size["quantiles"]["p50"] <= 1 and det["score_threshold"] <= score["quantiles"]["p05"] <= 1
    # The device it trained on, as the spec asked (detection used to write "cpu" whatever it was given).
    assert manifest["model_summary"]["device"] == manifest["provenance"]["device"] == DEVICE
    for fig in manifest["figures"]:
        assert (out / fig["file"]).is_file()
    graph = onnx.load(str(out / "model.onnx"))
    onnx.checker.check_model(graph)
    assert graph.opset_import[0].version >= 17
    sess = session(str(out / "model.onnx"), 1)
    boxes, scores = sess.run(["boxes", "scores"], {"input": np.zeros((1, 3, 64, 64), np.float32)})
    assert boxes.shape[0] == 1 and boxes.shape[2] == 4 and scores.shape == (1, boxes.shape[1], 2)


def test_onnx_parity_with_pytorch(tmp_path):
    torch.manual_seed(0)
    model = Detector(3, 128, 96, "fast").eval()
    for mod in model.modules():  # non-trivial BN statistics, so folding them is exercised
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
    x = np.random.default_rng(0).normal(size=(3, 96, 128)).astype(np.float32)
    report = export_onnx(model, str(tmp_path / "m.onnx"), [x])
    assert report["max_abs_diff_scores"] <= 1e-4
    ob, _ = session(str(tmp_path / "m.onnx"), 1).run(["boxes", "scores"], {"input": x[None]})
    with torch.no_grad():
        tb, _ = model(torch.from_numpy(x[None]))
    assert np.abs(ob - tb.numpy()).max() <= 1e-3  # pixels


def test_export_leaves_nothing_when_the_check_fails(tmp_path, monkeypatch):
    from builder_pipelines.detection import export as det_export

    model = Detector(3, 64, 64, "fast").eval()
    x = np.zeros((3, 64, 64), np.float32)
    monkeypatch.setattr(det_export, "PARITY_TOL", -1.0)  # any difference, even 0, now fails the parity check
    with pytest.raises(RuntimeError, match="differs from PyTorch"):
        export_onnx(model, str(tmp_path / "m.onnx"), [x])
    assert list(tmp_path.iterdir()) == []  # neither model.onnx nor the temp file


@pytest.mark.train
def test_evaluate_through_the_cli(trained, tmp_path):
    spec, out, manifest = trained
    ev = dict(spec, command="evaluate", source_model={"dir": str(out)}, out_dir=str(tmp_path / "ev"))
    ev["split"] = dict(spec["split"], train=[], val=[], test=spec["split"]["test"] + spec["split"]["val"])
    path = write_spec(ev, tmp_path / "spec.json")
    proc = subprocess.run(
        [sys.executable, "-m", "builder_pipelines", "evaluate", "--spec", path, "--out", ev["out_dir"]],
        cwd=PIPELINES,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    for event in lines:
        assert contract.errors("event", event) == []
    assert lines[-1] == {"type": "result", "manifest": "manifest.json"}
    with open(tmp_path / "ev" / "manifest.json") as fh:
        new = json.load(fh)
    assert set(new["metrics"]) == {"test"}
    assert new["detection"] == manifest["detection"] and new["input"] == manifest["input"]
    assert new["metrics"]["test"]["map50"]["value"] > 0.4
    assert (tmp_path / "ev" / "model.onnx").read_bytes() == (out / "model.onnx").read_bytes()


def test_pretrained_backbone_loads_from_a_local_path(tmp_path):
    from builder_pipelines.detection.pipeline import _load_pretrained

    torch.manual_seed(1)
    source = Detector(2, 64, 64, "fast")
    torch.save(source.backbone.state_dict(), tmp_path / "backbone.pt")
    target = Detector(3, 64, 64, "fast")
    _load_pretrained(target, str(tmp_path / "backbone.pt"))
    for k, v in source.backbone.state_dict().items():
        assert torch.equal(v, target.backbone.state_dict()[k]), k


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a host without CUDA")
def test_cuda_job_on_a_host_without_cuda_is_refused_not_run_on_cpu(tmp_path):
    # The runner asks for "cuda" on a GPU slot; detection used to ignore the device and train on the CPU.
    from builder_pipelines.common.errors import DataError

    spec = make_dataset(tmp_path / "data")
    spec["device"] = "cuda"
    with pytest.raises(DataError, match="no CUDA device"):
        run(spec, str(tmp_path / "out"))
    assert not (tmp_path / "out" / "manifest.json").exists()
