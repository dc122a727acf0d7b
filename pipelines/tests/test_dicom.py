"""DICOM rendering (issue 41) on files written by test/helpers/make_dicoms.py: the contract's formula, modality LUT,
windows, MONOCHROME1, signed pixels, colour, frames, per-file errors; and a tiny build from DICOMs of mixed transfer
syntaxes whose outputs must not hold the headers' identifying values."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from builder_pipelines.common import contract, dicom
from builder_pipelines.common.data import read_table
from builder_pipelines.common.errors import DataError
from builder_pipelines.vision import dataset
from builder_pipelines.vision.preprocess import preprocess_file

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "pipelines"
sys.path.insert(0, str(ROOT / "test" / "helpers"))
sys.path.insert(0, str(Path(__file__).parent))
import make_dicoms as mk  # noqa: E402

from vision_data import make_dataset, write_spec  # noqa: E402

FILE = dicom.rendering(None)
LOSSLESS = ("evrle", "ivrle", "evrbe", "deflated", "rle", "jpegls", "j2k")


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dicoms")
    mk.write_manifest(str(out), mk.fixture_set(str(out)))
    return out


def grey_by_hand(
    m: float, c: float | None, w: float | None, lo: float = 0, hi: float = 0, as_stored: bool = False
) -> int:
    """The manifest schema's sentence, one value at a time, as a second reading of the formula."""
    if c is None and as_stored:
        y = min(255.0, max(0.0, m))
    elif c is None:
        y = 0.0 if hi == lo else (m - lo) / (hi - lo) * 255
    elif w == 1:
        y = 0.0 if m < c - 0.5 else 255.0
    else:
        y = min(255.0, max(0.0, ((m - (c - 0.5)) / (w - 1) + 0.5) * 255))
    return math.floor(y + 0.5)


def test_window_formula_edges():
    c, w = 40.0, 400.0
    m = np.array([-1000, c - 0.5 - (w - 1) / 2, c - 0.5, c - 0.5 + (w - 1) / 2, 1000, 41.3, -7.0])
    got = dicom.window_grey(m, (c, w))
    assert got.tolist() == [grey_by_hand(v, c, w) for v in m]
    assert got[:5].tolist() == [0, 0, 128, 255, 255]  # the linear ramp spans exactly c - 0.5 +- (w - 1) / 2
    assert dicom.window_grey(np.array([9.0, 9.5, 10.0]), (10.0, 1.0)).tolist() == [
        0,
        0,
        255,
    ]  # w = 1: m <= c - 0.5 is 0, as the standard reads
    assert dicom.window_grey(np.array([-5.0, 0.0, 5.0]), None).tolist() == [0, 128, 255]
    assert dicom.window_grey(np.array([7.0, 7.0]), None).tolist() == [0, 0]


def test_rendering_records_presets_and_rejects_bad_options():
    assert FILE == {
        "modality_lut": True,
        "window": {"source": "file"},
        "invert_monochrome1": True,
        "frames": "first",
        "unwindowed_8bit": "as_stored",
    }
    lung = dicom.rendering({"window": {"source": "preset", "name": "lung"}, "frames": "all"})
    assert lung["window"] == {"source": "preset", "name": "lung", "center": -600, "width": 1500}
    assert lung["frames"] == "all"
    presets = json.loads((PIPELINES / "contract" / "dicom-window-presets.json").read_text())["presets"]
    assert set(presets) == {"lung", "mediastinum", "bone", "brain", "soft_tissue", "abdomen", "liver"}
    for bad, match in (
        ({"window": {"source": "preset", "name": "kidney"}}, "unknown preset 'kidney'"),
        ({"window": {"source": "explicit", "center": 3}}, "explicit window"),
        ({"frames": "middle"}, "frames must be first or all"),
    ):
        with pytest.raises(DataError, match=match):
            dicom.rendering(bad)
    from jsonschema import Draft202012Validator

    schema = contract.validator("manifest").schema["properties"]["input"]["properties"]["image"]["properties"]["dicom"]
    for record in (FILE, lung, dicom.rendering({"window": {"source": "explicit", "center": 1, "width": 2}})):
        assert list(Draft202012Validator(schema).iter_errors(record)) == []


def _expected_grey(
    stored: np.ndarray, slope: float, intercept: float, window, monochrome1: bool, as_stored: bool = False
) -> np.ndarray:
    m = stored.astype(np.float64) * slope + intercept
    lo, hi = float(m.min()), float(m.max())
    c, w = window if window else (None, None)
    grey = np.vectorize(lambda v: grey_by_hand(v, c, w, lo, hi, as_stored))(m).astype(np.uint8)
    return 255 - grey if monochrome1 else grey


@pytest.mark.parametrize("syntax", LOSSLESS)
def test_grey_files_render_by_the_formula_in_every_lossless_syntax(fixtures, syntax):
    g = mk.synthetic_grey()
    cases = {
        # 8-bit without a window: the stored values are the grey levels (narrow: 40..200, kept as they are)
        "mono2_u8": (mk.grey_values(g, 8, False), 1, 0, None, False, True),
        "mono2_u8_narrow": (mk.narrow_grey(g), 1, 0, None, False, True),
        "mono2_u12_window": (mk.grey_values(g, 12, False), 1, -1024, (1000, 2500), False, False),
        "mono1_u16_nowindow": (mk.grey_values(g, 16, False), 1, 0, None, True, False),
        # signed, rescaled, two windows in the header: the first one is the file's
        "mono2_s16_rescale": (mk.grey_values(g, 16, True), 0.5, 20, (40, 400), False, False),
    }
    for kind, (stored, slope, intercept, window, mono1, as_stored) in cases.items():
        path = fixtures / f"{syntax}_{kind}.dcm"
        if not path.exists():  # JPEG-LS has no signed file (see make_dicoms)
            assert syntax == "jpegls" and "s16" in kind
            continue
        got = dicom.render(str(path), FILE)
        assert np.array_equal(got, _expected_grey(stored, slope, intercept, window, mono1, as_stored)), (syntax, kind)


def test_unwindowed_8bit_keeps_its_values_as_a_png_would_unless_the_record_predates_the_rule(fixtures, tmp_path):
    from PIL import Image

    path = str(fixtures / "evrle_mono2_u8_narrow.dcm")
    stored = mk.narrow_grey(mk.synthetic_grey())
    Image.fromarray(stored.astype(np.uint8), "L").save(tmp_path / "same.png")
    as_png = np.asarray(Image.open(tmp_path / "same.png"))
    assert np.array_equal(dicom.render(path, FILE), as_png)
    # A model trained before the rule has no unwindowed_8bit in its record: it was trained on min..max, served so.
    older = {k: v for k, v in FILE.items() if k != "unwindowed_8bit"}
    for record in (older, {**FILE, "unwindowed_8bit": "min_max"}):
        assert np.array_equal(dicom.render(path, record), _expected_grey(stored, 1, 0, None, False)), record
    assert dicom.render(path, older).max() == 255 and as_png.max() == 200


def test_preset_and_explicit_windows_replace_the_files_own(fixtures):
    g = mk.synthetic_grey()
    stored = mk.grey_values(g, 16, True)
    for options, window in (
        ({"window": {"source": "preset", "name": "bone"}}, (400, 1800)),
        ({"window": {"source": "explicit", "center": -20, "width": 1}}, (-20, 1)),
    ):
        got = dicom.render(str(fixtures / "j2k_mono2_s16_rescale.dcm"), dicom.rendering(options))
        assert np.array_equal(got, _expected_grey(stored, 0.5, 20, window, False))


def test_colour_files_are_rgb_as_decoded(fixtures):
    rgb = mk.synthetic_rgb()
    for syntax in LOSSLESS:
        assert np.array_equal(dicom.render(str(fixtures / f"{syntax}_rgb.dcm"), FILE), rgb), syntax
    assert np.abs(dicom.render(str(fixtures / "evrle_ybr_full.dcm"), FILE).astype(int) - rgb).max() <= 1
    jpeg = dicom.render(str(fixtures / "jpeg_baseline_rgb.dcm"), FILE).astype(int)
    assert jpeg.shape == rgb.shape and np.abs(jpeg - rgb).mean() < 4  # lossy, but YBR came back as RGB
    sv1 = dicom.render(mk.pydicom_sv1_file(), FILE)
    assert sv1.shape == (100, 100, 3) and sv1.dtype == np.uint8


def test_frames_first_and_each_frame_by_reference(fixtures):
    for syntax in LOSSLESS:
        path = str(fixtures / f"{syntax}_mono2_u12_3frames.dcm")
        assert dicom.frame_count(path) == 3
        for k in range(3):
            want = _expected_grey(mk.grey_values(mk.synthetic_grey(seed=k), 12, False), 1, 0, (2048, 4096), False)
            assert np.array_equal(dicom.render(dicom.frame_ref(path, k), FILE), want), (syntax, k)
        assert np.array_equal(dicom.render(path, FILE), dicom.render(dicom.frame_ref(path, 0), FILE))
    refs = dicom.expand_frames([path, str(fixtures / "rle_mono2_u8.dcm")], dicom.rendering({"frames": "all"}))
    assert [len(r) for r in refs] == [3, 1]
    with pytest.raises(DataError, match="has 3 frame"):
        dicom.render(dicom.frame_ref(path, 3), FILE)


def test_files_without_extension_and_per_file_errors(fixtures, tmp_path):
    assert dicom.is_dicom(str(fixtures / "noext_mono2_u8"))
    assert not dicom.is_dicom(str(fixtures / "manifest.json"))
    with pytest.raises(DataError, match=r"corrupt_j2k\.dcm: transfer syntax JPEG 2000 Image Compression \(Lossless"):
        dicom.render(str(fixtures / "corrupt_j2k.dcm"), FILE)
    with pytest.raises(DataError, match=r"unsupported_mpeg2\.dcm: transfer syntax MPEG2 Main Profile"):
        dicom.render(str(fixtures / "unsupported_mpeg2.dcm"), FILE)
    (tmp_path / "notreally.dcm").write_bytes(b"hello world" * 20)
    with pytest.raises(DataError, match=r"notreally\.dcm: not a DICOM file \(no 'DICM' at byte 128"):
        dicom.render(str(tmp_path / "notreally.dcm"), FILE)


def test_bare_datasets_without_preamble_or_file_meta_are_read(fixtures, tmp_path):
    """Older exports write the dataset alone: read as uncompressed little endian, implicit or explicit VR."""
    import pydicom

    for name in ("evrle_mono2_u12_window", "ivrle_mono2_u12_3frames"):
        ds = pydicom.dcmread(fixtures / f"{name}.dcm")
        implicit = ds.file_meta.TransferSyntaxUID.is_implicit_VR
        del ds.file_meta
        ds.preamble = None
        ds.save_as(tmp_path / f"{name}.dcm", implicit_vr=implicit, little_endian=True)
        assert (tmp_path / f"{name}.dcm").read_bytes()[128:132] != b"DICM"
        for frame in range(dicom.frame_count(str(tmp_path / f"{name}.dcm"))):
            got = dicom.render(dicom.frame_ref(str(tmp_path / f"{name}.dcm"), frame), FILE)
            assert np.array_equal(got, dicom.render(dicom.frame_ref(str(fixtures / f"{name}.dcm"), frame), FILE))


def test_errors_never_quote_identifying_values(fixtures, tmp_path):
    import pydicom

    ds = pydicom.dcmread(fixtures / "evrle_mono2_u8_phi.dcm")
    assert str(ds.PatientName) == mk.PHI["PatientName"] and ds.BurnedInAnnotation == "YES"
    ds.PhotometricInterpretation = "PALETTE COLOR"
    ds.save_as(tmp_path / "palette.dcm")
    with pytest.raises(DataError) as err:
        dicom.render(str(tmp_path / "palette.dcm"), FILE)
    assert "PALETTE COLOR" in str(err.value) and not any(v in str(err.value) for v in mk.PHI.values())
    assert not any(v in dicom.summary([str(fixtures / "evrle_mono2_u8_phi.dcm")]) for v in mk.PHI.values())


def test_preprocess_uses_the_rendering_like_a_png(fixtures, tmp_path):
    """A 12-bit windowed DICOM made from a PNG gives the PNG's tensor (grey replicated for 3 channels)."""
    from PIL import Image

    u8 = (mk.synthetic_grey() * 255).round().astype(np.uint8)
    (tmp_path / "png").mkdir()
    Image.fromarray(u8, "L").save(tmp_path / "png" / "a.png")
    entries = mk.from_pngs(str(tmp_path / "png"), str(tmp_path / "dcm"), syntaxes=(mk.JPEG2000Lossless,))
    assert entries[0]["bits_stored"] == 12 and entries[0]["window"] == [[1024.5, 4081.0]]
    for channels in (1, 3):
        spec = {"width": 20, "height": 24, "channels": channels, "resize": "stretch", "interpolation": "bilinear"}
        spec.update(scale=1 / 255, mean=[0.5] * channels, std=[0.25] * channels)
        png = preprocess_file(str(tmp_path / "png" / "a.png"), spec)
        dcm = preprocess_file(str(tmp_path / "dcm" / "a.dcm"), {**spec, "dicom": FILE})
        assert dcm.shape == (channels, 24, 20) and np.array_equal(png, dcm)


def test_frames_all_expands_rows_of_the_same_patient(fixtures, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("patient,path,label\np1,rle_mono2_u12_3frames.dcm,1\np2,evrle_mono2_u8.dcm,0\n")
    spec = {
        "schema_version": 1,
        "job_id": "x",
        "command": "train",
        "kind": "vision_classification",
        "problem": "binary",
        "data": {"root": str(fixtures), "table": str(table), "id_col": "patient", "images_col": "path",
                 "label_cols": ["label"]},
        "split": {"seed": 1, "train": ["p1"], "val": [], "test": ["p2"]},
        "metric": "auc",
        "budget": {"mode": "fast", "time_budget_s": 5},
        "seed": 1,
        "options": {"dicom": {"frames": "all"}},
    }  # fmt: skip
    rows = dataset.expand_dicom_frames(read_table(str(table)), spec).rows
    assert [(r["patient"], r["path"]) for r in rows] == [
        ("p1", "rle_mono2_u12_3frames.dcm#frame=0"),
        ("p1", "rle_mono2_u12_3frames.dcm#frame=1"),
        ("p1", "rle_mono2_u12_3frames.dcm#frame=2"),
        ("p2", "evrle_mono2_u8.dcm"),
    ]
    first = dataset.expand_dicom_frames(read_table(str(table)), {**spec, "options": {}})
    assert len(first.rows) == 2


def _dicom_dataset(tmp_path) -> dict:
    """vision_data's binary blobs written as DICOMs (12-bit windowed, transfer syntaxes in turn, fake PHI)."""
    spec = make_dataset(tmp_path, "binary", n=60)
    root = Path(spec["data"]["root"])
    mk.from_pngs(str(root / "img"), str(root / "dcm"), phi=True)
    table = Path(spec["data"]["table"])
    with open(table, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for i, r in enumerate(rows):
        # every fourth file without extension, as PACS exports often are
        name = r["path"].replace("img/", "dcm/").replace(".png", ".dcm")
        if i % 4 == 0:
            (root / name).rename(root / name[:-4])
            name = name[:-4]
        r["path"] = name
    with open(table, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    spec["options"]["dicom"] = {"window": {"source": "file"}, "frames": "first"}
    return spec


@pytest.mark.train
def test_build_from_dicoms_of_mixed_syntaxes_records_the_rendering_and_leaks_no_phi(tmp_path):
    spec = _dicom_dataset(tmp_path)
    spec["budget"]["time_budget_s"] = 8
    path = write_spec(tmp_path, spec)
    proc = subprocess.run(
        [sys.executable, "-m", "builder_pipelines", "train", "--spec", path, "--out", spec["out_dir"]],
        cwd=PIPELINES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = Path(spec["out_dir"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert contract.errors("manifest", manifest) == []
    assert manifest["input"]["image"]["dicom"] == FILE
    assert manifest["input"]["image"]["channels"] == 1
    logs = [json.loads(line) for line in proc.stdout.splitlines()]
    summary = next(e["message"] for e in logs if e["type"] == "log" and "DICOM images" in e["message"])
    for name in ("JPEG 2000", "JPEG-LS", "RLE Lossless", "Big Endian", "Deflated", "Implicit VR"):
        assert name in summary
    everything = (
        proc.stdout
        + proc.stderr
        + "".join(f.read_text(errors="replace") for f in out.rglob("*") if f.is_file() and f.suffix != ".onnx")
    )
    for value in (*mk.PHI.values(), "Zzyzx", "Quentavious"):
        assert value not in everything


def test_detection_reads_dicoms_through_the_same_renderer(tmp_path):
    """Detection opens its images (training, input size, figures) through common/dicom.py too: colour DICOMs made
    from the synthetic PNGs give the PNGs' pixels, and each record carries the rendering for the manifest."""
    from builder_pipelines.detection.data import open_image, read_detection_table
    from builder_pipelines.detection.pipeline import _input_size
    from detection_synthetic import make_dataset as make_detection

    spec = make_detection(tmp_path, n_images=10, size=40)
    mk.from_pngs(str(tmp_path / "images"), str(tmp_path / "dcm"))
    table = Path(spec["data"]["table"])
    table.write_text(table.read_text().replace("images/", "dcm/").replace(".png", ".dcm"))
    spec["options"]["dicom"] = {"window": {"source": "preset", "name": "brain"}, "frames": "all"}
    splits, _ = read_detection_table(spec)
    records = splits["train"] + splits["val"] + splits["test"]
    assert len(records) == 10
    want = dicom.rendering({"window": {"source": "preset", "name": "brain"}, "frames": "first"})
    assert all(r.dicom == want for r in records)  # detection renders the first frame whatever was asked
    from PIL import Image

    for rec in records[:4]:
        png = np.asarray(Image.open(rec.path.replace("/dcm/", "/images/").replace(".dcm", ".png")).convert("RGB"))
        assert np.array_equal(np.asarray(open_image(rec)), png)
    assert _input_size(records, 320) == (64, 64)
