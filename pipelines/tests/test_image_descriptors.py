"""Image descriptors for the monitoring baseline (issue 49 items 1 and 4): the figures serving computes per image
(src/serving/image-descriptors.ts, checked against the same hand-computed values in
test/unit/monitoring-image-descriptors.test.ts), aggregated for validation and test images without keeping any."""

import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image
from pydicom.uid import ExplicitVRLittleEndian

from builder_pipelines.common import contract, dicom, image_descriptors

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "helpers"))
import make_dicoms as mk  # noqa: E402


def pattern(w: int, h: int) -> np.ndarray:
    """The test pattern the TypeScript test uses too: channel c of pixel i is (i * 7 + c * 50) % 256."""
    i = np.arange(w * h)[:, None]
    return ((i * 7 + np.arange(3)[None, :] * 50) % 256).astype(np.uint8).reshape(h, w, 3)


def test_small_rgb_uses_every_pixel_and_the_mean_of_its_channels():
    arr = pattern(40, 30)
    d = image_descriptors.describe(Image.fromarray(arr, "RGB"))
    v = arr.reshape(-1, 3).astype(float).mean(axis=1)
    assert (d["img:width"], d["img:height"], d["img:channels"]) == (40.0, 30.0, "3")
    assert d["img:aspect"] == 40 / 30
    assert abs(d["img:mean"] - v.mean()) < 1e-9 and abs(d["img:std"] - v.std()) < 1e-9


def test_large_grey_is_sampled_at_an_even_stride():
    w, h = 400, 300  # 120,000 pixels: every 14th
    arr = pattern(w, h)[:, :, 0]
    d = image_descriptors.describe(Image.fromarray(arr, "L"))
    v = arr.reshape(-1).astype(float)[:: (w * h) // image_descriptors.SAMPLE_PIXELS]
    assert d["img:channels"] == "1"
    assert abs(d["img:mean"] - v.mean()) < 1e-9 and abs(d["img:std"] - v.std()) < 1e-9
    # Alpha is dropped (as serving's decoder does): an RGBA image is described as its RGB.
    rgba = np.dstack([pattern(40, 30), np.full((30, 40), 9, np.uint8)])
    assert image_descriptors.describe(Image.fromarray(rgba, "RGBA"))["img:channels"] == "3"


def test_baseline_counts_images_and_dicom_categories_and_keeps_no_file_name(tmp_path):
    paths = []
    for k in range(6):
        p = tmp_path / f"patient-{k}.png"
        Image.fromarray(pattern(40 + k, 30), "RGB").save(p)
        paths.append(str(p))
    for k in range(3):
        p = tmp_path / f"scan-{k}.dcm"
        mk.write_dicom(
            str(p), mk.Pixels(values=mk.synthetic_grey(48, 40, seed=k)[None].astype(np.uint8)), ExplicitVRLittleEndian
        )
        paths.append(str(p))
    b = image_descriptors.build(paths, None)
    assert b["images"] == 9
    by = {d["name"]: d for d in b["descriptors"]}
    assert sum(by["img:width"]["counts"]) == 9 and by["img:width"]["missing"] == 0
    assert by["img:channels"]["counts"] == {"1": 3, "3": 6}
    # DICOM categories count the DICOMs only; the fixtures' modality and manufacturer, and no body part ("").
    assert by["img:modality"]["counts"] == {"OT": 3}
    assert by["img:manufacturer"]["counts"] == {"Builder test fixtures": 3}
    assert by["img:body_part"]["counts"] == {"": 3}
    text = json.dumps(b)
    assert "patient-" not in text and "scan-" not in text and str(tmp_path) not in text
    # Valid as the manifest's monitoring_baseline.image.
    m = {"schema_version": 1, "source": "validation and test patients", "n": 9, "image": b}
    assert not [e for e in contract.errors("manifest", {"monitoring_baseline": m}) if "monitoring_baseline" in e]


def test_nothing_opens_nothing_is_written(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"not an image")
    assert image_descriptors.build([str(tmp_path / "broken.png")], None) is None
    assert image_descriptors.build([], None) is None


def test_channels_are_what_the_file_stores(tmp_path):
    """img:channels counts the file's own channels, as serving's decoder does (test/unit/serving-image-channels.test.ts):
    a grey PNG (8- or 16-bit, with or without alpha) and a grey DICOM are "1", an RGB PNG is "3"."""
    grey = pattern(12, 8)[:, :, 0]
    files = {
        "grey.png": Image.fromarray(grey, "L"),
        "grey-alpha.png": Image.fromarray(np.dstack([grey, np.full_like(grey, 200)]), "LA"),
        "grey16.png": Image.fromarray(grey.astype(np.uint16) * 257),
        "rgb.png": Image.fromarray(np.dstack([grey, grey, grey]), "RGB"),
    }
    for name, img in files.items():
        img.save(tmp_path / name)
    mk.write_dicom(str(tmp_path / "grey.dcm"), mk.Pixels(values=grey[None]), ExplicitVRLittleEndian)
    want = {"grey.png": "1", "grey-alpha.png": "1", "grey16.png": "1", "rgb.png": "3", "grey.dcm": "1"}
    got = {}
    for name in want:
        with dicom.open_path(str(tmp_path / name)) as img:
            got[name] = image_descriptors.describe(img)["img:channels"]
    assert got == want
