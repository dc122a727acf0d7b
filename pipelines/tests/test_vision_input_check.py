"""The unfamiliar-input check of image models (vision/input_check.py): in the ONNX graph, calibrated, and its rule."""

from __future__ import annotations

import numpy as np
import torch

from builder_pipelines.vision import input_check
from builder_pipelines.vision.export import check_parity, export_onnx, session
from builder_pipelines.vision.models import CamNet, ExportModel

torch.set_num_threads(1)


def _smooth_images(n: int, seed: int) -> torch.Tensor:
    """Blurred random fields: images that vary in a few smooth directions, as training images do."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1, 6, 6, generator=g)
    return torch.nn.functional.interpolate(x, size=(24, 24), mode="bilinear", align_corners=False)


def _model() -> ExportModel:
    torch.manual_seed(0)
    return ExportModel([CamNet("resnet", 1, 2, 24, width=8, depth=1).eval()], "binary", flip_tta=True).eval()


def test_the_check_is_a_third_output_equal_to_pytorch_and_calibrated_on_held_out_images(tmp_path):
    model = _model()
    fit, calib = _smooth_images(200, 1), _smooth_images(100, 2)
    checked, record = input_check.build(model, fit, calib, seed=0, calibration="validation split")
    path = str(tmp_path / "m.onnx")
    export_onnx(checked, calib, path, extra_outputs=[input_check.OUTPUT])
    diffs = check_parity(checked, path, calib)
    assert diffs[input_check.OUTPUT] <= 1e-4 and diffs["scores"] <= 1e-4
    sess = session(path)
    assert [o.name for o in sess.get_outputs()] == ["scores", "cam", "input_check"]
    check = sess.run(["input_check"], {"input": calib.numpy()})[0]
    k = record["projected_components"]
    assert k == min(input_check.DRIFT_COMPONENTS, record["components"]) and k > 0
    assert check.shape == (100, 6 + k)
    # The projections are the feature summary's, standardised: on the fitting images each has unit spread.
    fit_proj = sess.run(["input_check"], {"input": fit.numpy()})[0][:, 6:]
    assert np.allclose(fit_proj.std(axis=0, ddof=1), 1.0, atol=0.05)
    assert np.allclose(fit_proj.mean(axis=0), 0.0, atol=0.05)
    # The thresholds are the calibration images' 99.5th percentiles: at most one of 100 is above either.
    assert (check[:, 0] > record["threshold"]).sum() <= 1 and (check[:, 1] > record["pixel_threshold"]).sum() <= 1
    assert record["fit_images"] == 200 and record["calibration_images"] == 100
    # New images of the same kind are mostly familiar; noise and blank frames are not.
    same = _smooth_images(100, 3).numpy()
    noise = np.random.default_rng(0).normal(0, 1, (20, 1, 24, 24)).astype(np.float32)
    blank = np.zeros((5, 1, 24, 24), dtype=np.float32)
    flagged = lambda x: input_check.unfamiliar(sess.run(["input_check"], {"input": x})[0], record)  # noqa: E731
    assert flagged(same).mean() <= 0.1
    assert flagged(noise).all() and flagged(blank).all()
    rate = input_check.test_rate(sess, same, record)
    assert rate["test_images"] == 100 and rate["test_flagged"] == int(flagged(same).sum())


def test_the_feature_baseline_bins_each_projection_at_its_deciles_and_keeps_no_vector(tmp_path):
    model = _model()
    checked, record = input_check.build(model, _smooth_images(200, 1), _smooth_images(100, 2), seed=0, calibration="v")
    path = str(tmp_path / "m.onnx")
    export_onnx(checked, _smooth_images(4, 2), path, extra_outputs=[input_check.OUTPUT])
    sess = session(path)
    base = _smooth_images(150, 4).numpy()
    fb = input_check.feature_baseline(sess, base, record, "validation and test images")
    k = record["projected_components"]
    assert fb["images"] == 150 and [d["name"] for d in fb["descriptors"]] == [f"img:feature:{i + 1}" for i in range(k)]
    proj = sess.run(["input_check"], {"input": base})[0][:, 6:]
    for i, d in enumerate(fb["descriptors"]):
        assert sum(d["counts"]) == 150 and len(d["counts"]) == len(d["edges"]) + 1
        # a value goes to the count of edges at or below it, as serving's binOf
        bins = np.searchsorted(d["edges"], proj[:, i], side="right")
        assert d["counts"] == np.bincount(bins, minlength=len(d["edges"]) + 1).tolist()
    # A graph from before the projections (record without them) has no feature baseline.
    assert input_check.feature_baseline(sess, base, {**record, "projected_components": 0}, "x") is None


def test_roughness_and_flatness_tell_noise_and_drawings_from_pictures():
    smooth = input_check.intensity(_smooth_images(4, 5))
    noise = input_check.intensity(torch.randn(4, 1, 24, 24))
    assert (smooth[:, 2] < 0.2).all() and (noise[:, 2] > 0.8).all()
    assert (smooth[:, 3] < 0.5).all() and (noise[:, 3] < 0.1).all()
    flat = input_check.intensity(torch.full((1, 1, 24, 24), 3.0))
    assert float(flat[0, 1]) == 0.0 and float(flat[0, 2]) == 0.0 and float(flat[0, 3]) == 1.0
    # A drawing: a flat field with one bright square, its neighbours mostly alike.
    drawing = torch.zeros(1, 1, 24, 24)
    drawing[..., 6:12, 6:12] = 5.0
    assert float(input_check.intensity(drawing)[0, 3]) > 0.8


def test_descriptors_summarise_sizes_and_skip_unreadable_files(tmp_path):
    from PIL import Image

    for i, size in enumerate([(28, 28), (40, 20)]):
        Image.new("L", size).save(tmp_path / f"{i}.png")
    (tmp_path / "x.dcm").write_bytes(b"not an image")
    d = input_check.descriptors([str(tmp_path / n) for n in ("0.png", "1.png", "x.dcm")], 1)
    assert d["images"] == 2 and d["width_quantiles"][0] == 28 and d["width_quantiles"][-1] == 40
    assert d["aspect_quantiles"][-1] == 2.0
