"""Vision pieces in isolation: exact CAM in the ONNX graph, parity, preprocessing, reproducibility."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from builder_pipelines.vision.export import check_parity, export_onnx, run_onnx, session
from builder_pipelines.vision.models import CamNet, ExportModel
from builder_pipelines.vision.preprocess import preprocess_file
from builder_pipelines.vision.train import Candidate, TrainData, train_trial

torch.set_num_threads(1)
PIPELINES = Path(__file__).resolve().parents[1]


def _nets(family, n=1, side=24, k=3, in_ch=3):
    torch.manual_seed(0)
    nets = [CamNet(family, in_ch, k, side, width=8, depth=1).eval() for _ in range(n)]
    for net in nets:  # non-trivial BatchNorm statistics, so folding them is really tested
        for mod in net.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 2.0)
    return nets


@pytest.mark.parametrize("family,members", [("resnet", 1), ("mobile", 2)])
def test_onnx_cam_is_exact_and_matches_pytorch(tmp_path, family, members):
    nets = _nets(family, members)
    model = ExportModel(nets, "multiclass").eval()
    x = torch.randn(5, 3, 24, 24)
    path = str(tmp_path / "m.onnx")
    export_onnx(model, x, path)
    diffs = check_parity(model, path, x)
    assert diffs["scores"] <= 1e-4 and diffs["cam"] <= 1e-4
    scores, cam = run_onnx(session(path), x.numpy())
    # The CAM definition: ReLU(mean over members of sum_k w_ck A_k), and GAP of the pre-ReLU map + bias = logit.
    with torch.no_grad():
        pre = sum(torch.einsum("nfhw,cf->nchw", n.features(x), n.head.weight) for n in nets) / members
        logits = sum(n(x) for n in nets) / members
        np.testing.assert_allclose(cam, torch.relu(pre).numpy(), atol=1e-4)
        bias = sum(n.head.bias for n in nets) / members
        np.testing.assert_allclose(pre.mean((2, 3)) + bias, logits, atol=1e-4)
        np.testing.assert_allclose(scores, torch.softmax(logits, 1).numpy(), atol=1e-5)
    assert cam.shape == (5, 3, 6, 6)


def test_flip_tta_graph_averages_both_views_and_keeps_the_cam_exact(tmp_path):
    nets = _nets("resnet", 2, in_ch=1, k=2)
    model = ExportModel(nets, "binary", flip_tta=True).eval()
    x = torch.randn(5, 1, 24, 24)
    path = str(tmp_path / "m.onnx")
    export_onnx(model, x, path)
    diffs = check_parity(model, path, x)
    assert diffs["scores"] <= 1e-4 and diffs["cam"] <= 1e-4
    scores, cam = run_onnx(session(path), x.numpy())
    flipped = torch.flip(x, dims=[3])
    with torch.no_grad():
        logits = sum(n(x) + n(flipped) for n in nets) / 4
        np.testing.assert_allclose(scores, torch.softmax(logits, 1).numpy(), atol=1e-5)
        # the flipped view's map is flipped back; GAP of the averaged pre-ReLU map + bias is still the logit
        pre = (
            sum(
                torch.einsum("nfhw,cf->nchw", n.features(x), n.head.weight)
                + torch.flip(torch.einsum("nfhw,cf->nchw", n.features(flipped), n.head.weight), dims=[3])
                for n in nets
            )
            / 4
        )
        np.testing.assert_allclose(cam, torch.relu(pre).numpy(), atol=1e-4)
        bias = sum(n.head.bias for n in nets) / 2
        np.testing.assert_allclose(pre.mean((2, 3)) + bias, logits, atol=1e-4)
        # and it is not the plain graph: the flipped view changes the scores
        plain, _ = ExportModel(nets, "binary").eval()(x)
        assert np.abs(plain.numpy() - scores).max() > 1e-4


def test_parity_check_rejects_a_wrong_graph(tmp_path):
    nets = _nets("resnet")
    model = ExportModel(nets, "multilabel").eval()
    x = torch.randn(4, 3, 24, 24)
    path = str(tmp_path / "m.onnx")
    export_onnx(model, x, path)
    with torch.no_grad():
        nets[0].head.bias.add_(0.5)  # PyTorch now differs from the exported graph
    with pytest.raises(RuntimeError, match="disagree"):
        check_parity(model, path, x)


def test_regression_head_folds_target_scale(tmp_path):
    nets = _nets("resnet", k=1, in_ch=1)
    model = ExportModel(nets, "regression", out_scale=4.0, out_shift=10.0).eval()
    x = torch.randn(3, 1, 24, 24)
    with torch.no_grad():
        value, _ = model(x)
        np.testing.assert_allclose(value.numpy(), (nets[0](x) * 4 + 10).numpy(), atol=1e-4)


def test_preprocess_file_follows_the_manifest_definition(tmp_path):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)
    Image.fromarray(rgb, "RGB").save(tmp_path / "c.png")
    spec = {
        "width": 20,
        "height": 10,
        "channels": 3,
        "resize": "stretch",
        "interpolation": "bilinear",
        "scale": 1 / 255,
        "mean": [0.5, 0.4, 0.3],
        "std": [0.2, 0.25, 0.3],
    }
    x = preprocess_file(str(tmp_path / "c.png"), spec)
    ref = np.asarray(Image.fromarray(rgb).resize((20, 10), Image.Resampling.BILINEAR), dtype=np.float32) / 255
    ref = (ref - np.array(spec["mean"], dtype=np.float32)) / np.array(spec["std"], dtype=np.float32)
    assert x.shape == (3, 10, 20) and x.dtype == np.float32
    np.testing.assert_allclose(x, ref.transpose(2, 0, 1), atol=1e-6)
    grey = preprocess_file(str(tmp_path / "c.png"), dict(spec, channels=1, mean=[0.5], std=[0.25]))
    lum = (
        np.asarray(Image.fromarray(rgb).convert("L").resize((20, 10), Image.Resampling.BILINEAR), dtype=np.float32)
        / 255
    )
    np.testing.assert_allclose(grey[0], (lum - 0.5) / 0.25, atol=1e-6)


def test_preprocess_imports_without_torch():
    code = "import sys, builder_pipelines.vision.preprocess; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=PIPELINES, check=True, timeout=60)


@pytest.mark.train
def test_trial_is_reproducible_on_cpu():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(48, 1, 12, 12, generator=gen)
    y = (x[:, 0, :, :6].mean((1, 2)) > x[:, 0, :, 6:].mean((1, 2))).long()
    data = TrainData(
        x_train=x[:32],
        y_train=y[:32],
        x_val=x[32:],
        y_val=y[32:],
        val_onehot=np.eye(2, dtype=int)[y[32:].numpy()],
        problem="binary",
        metric="auc",
        n_out=2,
        class_weights=None,
        allow_flips=False,
    )
    cand = Candidate("resnet", 8, 1, 2e-3)
    runs = [
        train_trial(cand, data, 12, seed=5, device=torch.device("cpu"), deadline=float("inf"), epochs=6)
        for _ in range(2)
    ]
    assert runs[0].history == runs[1].history
    np.testing.assert_array_equal(runs[0].val_out, runs[1].val_out)
    assert runs[0].epochs_run >= 2


@pytest.mark.train
def test_pretrained_backbone_is_loaded_but_not_the_head():
    torch.manual_seed(1)
    donor = CamNet("resnet", 1, 5, 12, width=8, depth=1)  # another task (5 classes): the head cannot fit
    x = torch.randn(16, 1, 12, 12)
    y = torch.arange(16) % 2
    data = TrainData(
        x_train=x,
        y_train=y,
        x_val=x,
        y_val=y,
        val_onehot=np.eye(2, dtype=int)[y.numpy()],
        problem="binary",
        metric="auc",
        n_out=2,
        class_weights=None,
        allow_flips=False,
    )
    frozen = Candidate("resnet", 8, 1, lr=0.0, ema=False)  # lr 0: weights stay as loaded
    r = train_trial(
        frozen,
        data,
        12,
        seed=0,
        device=torch.device("cpu"),
        deadline=float("inf"),
        init_state=donor.state_dict(),
        epochs=1,
    )
    assert torch.equal(r.model.stem[0].weight, donor.stem[0].weight)
    assert r.model.head.weight.shape == (2, donor.head.weight.shape[1])


def test_channel_stats_and_normalise_match_the_plain_float_formulas():
    # Both avoid full-size temporaries (a float64 copy of 76,500 colour images is 1.4 GB); the figures must not move.
    from builder_pipelines.vision import dataset, preprocess

    u8 = np.random.default_rng(0).integers(0, 256, (200, 3, 12, 10), dtype=np.uint8)
    u8[:, 2] = 9  # a constant channel: its std is floored
    x = u8.astype(np.float64) / 255
    mean, std = dataset.channel_stats(u8, 1 / 255)
    assert mean == [round(float(v), 6) for v in x.mean(axis=(0, 2, 3))]
    assert std == [round(float(v), 6) for v in np.maximum(x.std(axis=(0, 2, 3)), 1e-3)]
    spec = {"mean": mean, "std": std, "scale": 1 / 255}
    m, s = (np.asarray(v, dtype=np.float32).reshape(3, 1, 1) for v in (mean, std))
    before = u8.copy()
    out = preprocess.normalise(u8, spec)
    assert out.dtype == np.float32 and np.array_equal(out, (u8.astype(np.float32) * np.float32(1 / 255) - m) / s)
    assert np.array_equal(u8, before)
