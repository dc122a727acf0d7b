"""Issue 52: an installed pretrained backbone, pinned by SHA-256. No weights can be downloaded here, so the test builds
its own small checkpoint (a tiny CamNet saved with torch.save) and installs it as an administrator would."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from builder_pipelines.common import events
from builder_pipelines.vision import backbone as bb
from builder_pipelines.vision import run
from builder_pipelines.vision.models import CamNet
from builder_pipelines.vision.train import BACKBONE_LR_SCALE, Candidate, TrainData, train_trial

sys.path.insert(0, str(Path(__file__).parent))
from vision_data import make_dataset  # noqa: E402


def _checkpoint(tmp_path, width: int = 8) -> tuple[Path, str, CamNet]:
    torch.manual_seed(3)
    donor = CamNet("resnet", 1, 7, 16, width=width, depth=1)  # pretrained on another task: 7 classes
    path = tmp_path / "tiny-backbone.pt"
    torch.save(donor.state_dict(), path)
    return path, hashlib.sha256(path.read_bytes()).hexdigest(), donor


def _with_backbone(spec: dict, path: Path, sha: str, native_side: int = 16) -> dict:
    spec["options"] = {
        **spec.get("options", {}),
        "pretrained_weights": str(path),
        "backbone": {
            "name": "tiny-test-net",
            "sha256": sha,
            "licence": "CC0-1.0 (built by this test)",
            "source": "built by test_vision_backbone.py",
            "family": "resnet",
            "width": 8,
            "depth": 1,
            "native_side": native_side,
        },
    }
    return spec


def _run(spec: dict) -> dict:
    saved_stdout, saved_out = sys.stdout, events._out
    try:
        name = run(spec, spec["out_dir"])
    finally:
        sys.stdout, events._out = saved_stdout, saved_out
    return json.loads((Path(spec["out_dir"]) / name).read_text())


def test_a_weights_file_that_does_not_match_its_pin_is_refused_in_plain_words(tmp_path):
    path, sha, _ = _checkpoint(tmp_path)
    spec = _with_backbone(make_dataset(tmp_path, "binary"), path, "0" * 64)
    with pytest.raises(bb.BackboneError) as err:
        _run(spec)
    text = str(err.value)
    assert "tiny-test-net" in text and "refused" in text and sha in text and "0" * 64 in text
    assert "nothing was trained on it" in text
    assert not (Path(spec["out_dir"]) / "model.onnx").exists()
    # a file swapped after installation is refused the same way
    backbone = bb.from_spec(_with_backbone(make_dataset(tmp_path / "b", "binary"), path, sha))
    assert bb.load_checked(backbone)  # the pinned file loads
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(bb.BackboneError, match="changed after installation"):
        bb.load_checked(backbone)


def test_fine_tuning_moves_the_backbone_at_a_tenth_of_the_head_rate(tmp_path):
    _, _, donor = _checkpoint(tmp_path)
    x = torch.randn(16, 1, 16, 16)
    y = torch.arange(16) % 2
    data = TrainData(x, y, x, y, np.eye(2, dtype=int)[y.numpy()], "binary", "auc", 2, None, False)
    seen = []
    real_adamw = torch.optim.AdamW

    def spy(groups, **kw):
        opt = real_adamw(groups, **kw)
        seen.append(opt)
        return opt

    torch.optim.AdamW, saved = spy, torch.optim.AdamW
    try:
        train_trial(Candidate("resnet", 8, 1, 1e-3, ema=False), data, 16, 0, torch.device("cpu"), float("inf"),
                    init_state=donor.state_dict(), epochs=1)  # fmt: skip
        # another recipe (width 16) cannot take these tensors: trained from scratch at the full rate
        train_trial(Candidate("resnet", 16, 1, 1e-3, ema=False), data, 16, 0, torch.device("cpu"), float("inf"),
                    init_state=donor.state_dict(), epochs=1)  # fmt: skip
    finally:
        torch.optim.AdamW = saved
    fine, scratch = seen
    assert [g["lr_scale"] for g in fine.param_groups] == [BACKBONE_LR_SCALE, 1.0]
    assert len(fine.param_groups[1]["params"]) == 2  # the head's weight and bias
    assert [g["lr_scale"] for g in scratch.param_groups] == [1.0]


@pytest.mark.train
def test_the_manifest_says_which_backbone_was_used_and_none_when_none(tmp_path):
    path, sha, donor = _checkpoint(tmp_path)
    spec = _with_backbone(make_dataset(tmp_path / "with", "binary", side=24), path, sha, native_side=16)
    spec["budget"] = {"mode": "fast", "time_budget_s": 8}
    m = _run(spec)
    used = m["model_summary"]["backbone"]
    assert used["name"] == "tiny-test-net" and used["sha256"] == sha and used["licence"].startswith("CC0")
    assert used["architecture"] == "resnet-w8-d1-lr0.001"
    assert m["input"]["image"]["width"] == 16  # the 24-px images at the backbone's native 16 px
    assert {t["architecture"] for t in m["model_summary"]["trials"]} == {"resnet-w8-d1-lr0.001"}
    plain = make_dataset(tmp_path / "without", "binary", side=24)
    plain["budget"] = {"mode": "fast", "time_budget_s": 8}
    m = _run(plain)
    assert m["model_summary"]["backbone"] == bb.NONE_INSTALLED and m["input"]["image"]["width"] == 24
