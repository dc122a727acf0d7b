"""DICOM test files made from numpy images, in every transfer syntax the installed encoders can write (issue 41).

Tests cannot download DICOMs nor read ../shared in CI, so they make their own: synthetic images (or the PNGs of a
folder) written by pydicom with the pylibjpeg / pyjpegls / openjpeg encoders and Pillow's JPEG. Both the Python
pipeline tests and the TypeScript parity tests use it; the CLI and the manifest's fields are a contract between them:

    python test/helpers/make_dicoms.py OUTDIR [--from-png DIR] [--phi]

writes OUTDIR/*.dcm and OUTDIR/manifest.json: {"files": [{file, transfer_syntax, transfer_syntax_name, photometric,
bits_allocated, bits_stored, signed, samples_per_pixel, frames, rows, columns, rescale, window, phi, burned_in,
source, expect}]} where expect is "ok" or "error" (the corrupt and unsupported files).

JPEG Lossless SV1 (1.2.840.10008.1.2.4.70): no installed encoder writes it (pydicom has none; Pillow writes only
baseline); `pydicom_sv1_file()` names pydicom's bundled SC_rgb_jpeg_gdcm.dcm, which is one (8-bit RGB).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from dataclasses import dataclass

import numpy as np
import pydicom
from PIL import Image
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.encaps import encapsulate
from pydicom.pixels import convert_color_space
from pydicom.uid import (
    UID,
    DeflatedExplicitVRLittleEndian,
    ExplicitVRBigEndian,
    ExplicitVRLittleEndian,
    ImplicitVRLittleEndian,
    JPEG2000Lossless,
    JPEGBaseline8Bit,
    JPEGLosslessSV1,
    JPEGLSLossless,
    RLELossless,
    generate_uid,
)

SECONDARY_CAPTURE = "1.2.840.10008.5.1.4.1.1.7"
NATIVE = (ExplicitVRLittleEndian, ImplicitVRLittleEndian, ExplicitVRBigEndian, DeflatedExplicitVRLittleEndian)
COMPRESSED = (RLELossless, JPEGLSLossless, JPEG2000Lossless)  # written with Dataset.compress
# Syntaxes that hold 12/16-bit greys losslessly: the mix used for "12-bit, windowed, mixed transfer syntaxes".
LOSSLESS_MIX = (*NATIVE, *COMPRESSED)
# Fake identifying values: tests search outputs for these strings, so they must be unusual.
PHI = {"PatientName": "Zzyzx^Quentavious", "PatientID": "PHI-7731-XQ", "PatientBirthDate": "19230817"}
UNSUPPORTED_SYNTAX = "1.2.840.10008.1.2.4.100"  # MPEG2 Main Profile: a video syntax no pipeline decoder reads


@dataclass
class Pixels:
    """What to write: stored values [frames, rows, cols] (grey) or [frames, rows, cols, 3] (colour, uint8)."""

    values: np.ndarray
    photometric: str = "MONOCHROME2"
    bits_stored: int = 8
    signed: bool = False
    slope: float | None = None
    intercept: float | None = None
    window: list[tuple[float, float]] | None = None  # (center, width) pairs; the first is the file's default


def synthetic_grey(rows: int = 48, cols: int = 40, seed: int = 0) -> np.ndarray:
    """A smooth gradient with a bright disc and noise in [0, 1], so windows and resizes have something to show."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:rows, 0:cols].astype(np.float64)
    disc = ((y - rows * 0.4) ** 2 + (x - cols * 0.6) ** 2) < (min(rows, cols) * 0.25) ** 2
    img = 0.6 * x / max(cols - 1, 1) + 0.3 * y / max(rows - 1, 1) + 0.35 * disc + rng.normal(0, 0.03, (rows, cols))
    return np.clip(img / img.max(), 0, 1)


def synthetic_rgb(rows: int = 48, cols: int = 40, seed: int = 0) -> np.ndarray:
    g = synthetic_grey(rows, cols, seed)
    return (np.stack([g, g[::-1], g[:, ::-1]], axis=-1) * 255).round().astype(np.uint8)


def grey_values(unit: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """[0, 1] floats -> stored integers using the whole range of `bits` (centred on 0 when signed)."""
    top = (1 << bits) - 1
    v = np.round(unit * top).astype(np.int64)
    if signed:
        v -= 1 << (bits - 1)
    return v


def narrow_grey(unit: np.ndarray) -> np.ndarray:
    """[0, 1] floats -> 8-bit stored values in 40..200, not the whole range: an unwindowed 8-bit file whose
    rendering shows whether its values are kept as they are or stretched from its minimum to its maximum."""
    return 40 + np.round(unit * 160).astype(np.int64)


def _dtype(bits_allocated: int, signed: bool) -> np.dtype:
    return np.dtype(f"{'i' if signed else 'u'}{bits_allocated // 8}")


def _base_dataset(px: Pixels, phi: bool, burned_in: bool) -> Dataset:
    frames, rows, cols = px.values.shape[:3]
    colour = px.values.ndim == 4
    ds = Dataset()
    ds.SOPClassUID = SECONDARY_CAPTURE
    ds.SOPInstanceUID = generate_uid()
    ds.StudyInstanceUID = generate_uid()
    ds.SeriesInstanceUID = generate_uid()
    ds.Modality = "OT"
    ds.Manufacturer = "Builder test fixtures"
    if phi:
        for key, value in PHI.items():
            setattr(ds, key, value)
    else:
        ds.PatientName = ""
        ds.PatientID = ""
    ds.BurnedInAnnotation = "YES" if burned_in else "NO"
    ds.Rows, ds.Columns = rows, cols
    ds.SamplesPerPixel = 3 if colour else 1
    ds.PhotometricInterpretation = px.photometric
    if colour:
        ds.PlanarConfiguration = 0
    bits_allocated = 8 if px.bits_stored <= 8 else 16
    ds.BitsAllocated = bits_allocated
    ds.BitsStored = px.bits_stored
    ds.HighBit = px.bits_stored - 1
    ds.PixelRepresentation = 1 if px.signed else 0
    if frames > 1:
        ds.NumberOfFrames = frames
    if px.slope is not None or px.intercept is not None:
        ds.RescaleSlope = px.slope if px.slope is not None else 1
        ds.RescaleIntercept = px.intercept if px.intercept is not None else 0
        ds.RescaleType = "US"
    if px.window:
        ds.WindowCenter = [c for c, _ in px.window] if len(px.window) > 1 else px.window[0][0]
        ds.WindowWidth = [w for _, w in px.window] if len(px.window) > 1 else px.window[0][1]
    ds.PixelSpacing = [0.5, 0.5]
    return ds


def _native_bytes(values: np.ndarray, bits_allocated: int, signed: bool, big_endian: bool) -> bytes:
    arr = values.astype(_dtype(bits_allocated, signed) if values.ndim == 3 else np.uint8)
    if big_endian and arr.dtype.itemsize > 1:
        arr = arr.astype(arr.dtype.newbyteorder(">"))
    return arr.tobytes()


def _jpeg_baseline(values: np.ndarray, photometric: str) -> tuple[list[bytes], str]:
    """Pillow's JPEG per frame (quality 95, no chroma subsampling): YBR_FULL for colour, MONOCHROME2 for grey."""
    out = []
    for frame in values:
        buf = io.BytesIO()
        Image.fromarray(frame.astype(np.uint8)).save(buf, format="JPEG", quality=95, subsampling=0)
        out.append(buf.getvalue())
    return out, ("YBR_FULL" if values.ndim == 4 else photometric)


def _j2k_small(values: np.ndarray, bits_stored: int, signed: bool) -> list[bytes]:
    """JPEG 2000 lossless codestreams by Pillow, for images under 32 px: openjpeg through pydicom always asks for
    6 resolution levels, which needs 32 px a side (BreastMNIST is 28). The codestream's precision is 8 or 16 bits."""
    if signed:
        raise ValueError("JPEG 2000 for images under 32 px: unsigned pixels only")
    out = []
    for frame in values:
        levels = max(1, min(6, int(np.log2(min(frame.shape[:2])))))
        img = Image.fromarray(frame.astype(np.uint8 if bits_stored <= 8 else np.uint16))
        buf = io.BytesIO()
        img.save(buf, format="JPEG2000", no_jp2=True, num_resolutions=levels, irreversible=False)
        out.append(buf.getvalue())
    return out


def write_dicom(
    path: str, px: Pixels, transfer_syntax: str, *, phi: bool = False, burned_in: bool = False, source: str = ""
) -> dict:
    """Writes one DICOM file; returns its manifest entry."""
    ts = UID(transfer_syntax)
    ds = _base_dataset(px, phi, burned_in)
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID = ds.SOPClassUID
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    values = px.values
    colour = values.ndim == 4
    if ts == JPEGBaseline8Bit:
        if px.bits_stored != 8 or px.signed:
            raise ValueError("JPEG baseline holds unsigned 8-bit pixels only")
        fragments, photometric = _jpeg_baseline(values, px.photometric)
        ds.PhotometricInterpretation = photometric
        ds.PixelData = encapsulate(fragments)
        ds["PixelData"].VR = "OB"
        ds["PixelData"].is_undefined_length = True
        ds.LossyImageCompression = "01"
        ds.file_meta.TransferSyntaxUID = ts
    elif ts == JPEG2000Lossless and min(values.shape[1:3]) < 32:
        ds.PixelData = encapsulate(_j2k_small(values, px.bits_stored, px.signed))
        ds["PixelData"].VR = "OB"
        ds["PixelData"].is_undefined_length = True
        ds.file_meta.TransferSyntaxUID = ts
    elif ts in COMPRESSED:
        arr = values.astype(np.uint8) if colour else values.astype(_dtype(ds.BitsAllocated, px.signed))
        ds.compress(ts, arr[0] if arr.shape[0] == 1 else arr, generate_instance_uid=False)
        ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    elif ts in NATIVE:
        ds.PixelData = _native_bytes(values, ds.BitsAllocated, px.signed, ts == ExplicitVRBigEndian)
        ds["PixelData"].VR = "OW" if ds.BitsAllocated > 8 else "OB"
        ds.file_meta.TransferSyntaxUID = ts
    else:
        raise ValueError(f"no writer for transfer syntax {ts}")
    ds.save_as(path, enforce_file_format=True)
    return _entry(path, ds, px, phi, burned_in, source, "ok")


def _entry(path: str, ds: Dataset, px: Pixels, phi: bool, burned_in: bool, source: str, expect: str) -> dict:
    ts = UID(ds.file_meta.TransferSyntaxUID)
    return {
        "file": os.path.basename(path),
        "transfer_syntax": str(ts),
        "transfer_syntax_name": ts.name,
        "photometric": str(ds.PhotometricInterpretation),
        "bits_allocated": int(ds.BitsAllocated),
        "bits_stored": int(ds.BitsStored),
        "signed": bool(px.signed),
        "samples_per_pixel": int(ds.SamplesPerPixel),
        "frames": int(px.values.shape[0]),
        "rows": int(ds.Rows),
        "columns": int(ds.Columns),
        "rescale": None if px.slope is None and px.intercept is None else [px.slope or 1, px.intercept or 0],
        "window": [list(w) for w in px.window] if px.window else None,
        "phi": phi,
        "burned_in": burned_in,
        "source": source,
        "expect": expect,
    }


def write_corrupt(path: str) -> dict:
    """A DICOM whose JPEG 2000 pixel data is truncated garbage: the header reads, the decode fails."""
    px = Pixels(grey_values(synthetic_grey(16, 16)[None], 8, False), bits_stored=8)
    ds = _base_dataset(px, False, False)
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID = ds.SOPClassUID
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    ds.file_meta.TransferSyntaxUID = JPEG2000Lossless
    ds.PixelData = encapsulate([b"\xff\x4f\xff\x51not a codestream" + bytes(range(40))])
    ds["PixelData"].VR = "OB"
    ds["PixelData"].is_undefined_length = True
    ds.save_as(path, enforce_file_format=True)
    return _entry(path, ds, px, False, False, "synthetic", "error")


def write_unsupported(path: str) -> dict:
    """A DICOM in a video transfer syntax (MPEG2) that no installed decoder reads."""
    px = Pixels(grey_values(synthetic_grey(16, 16)[None], 8, False), bits_stored=8)
    ds = _base_dataset(px, False, False)
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID = ds.SOPClassUID
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    ds.file_meta.TransferSyntaxUID = UID(UNSUPPORTED_SYNTAX)
    ds.PixelData = encapsulate([b"\x00\x00\x01\xb3" + bytes(60)])
    ds["PixelData"].VR = "OB"
    ds["PixelData"].is_undefined_length = True
    ds.save_as(path, enforce_file_format=True)
    return _entry(path, ds, px, False, False, "synthetic", "error")


def pydicom_sv1_file() -> str:
    """pydicom's bundled JPEG Lossless SV1 file (8-bit RGB), for the syntax no installed encoder writes."""
    from pydicom.data import get_testdata_file

    path = get_testdata_file("SC_rgb_jpeg_gdcm.dcm")
    ds = pydicom.dcmread(path, stop_before_pixels=True)
    assert ds.file_meta.TransferSyntaxUID == JPEGLosslessSV1
    return path


def fixture_set(outdir: str, phi: bool = False) -> list[dict]:
    """The standard set: every syntax x the photometric/bit-depth cases that syntax can hold, plus two bad files."""
    os.makedirs(outdir, exist_ok=True)
    entries: list[dict] = []
    g = synthetic_grey()

    def add(name: str, px: Pixels, ts: str, **kw) -> None:
        entries.append(write_dicom(os.path.join(outdir, f"{name}.dcm"), px, ts, phi=phi, source="synthetic", **kw))

    short = {
        ExplicitVRLittleEndian: "evrle",
        ImplicitVRLittleEndian: "ivrle",
        ExplicitVRBigEndian: "evrbe",
        DeflatedExplicitVRLittleEndian: "deflated",
        RLELossless: "rle",
        JPEGLSLossless: "jpegls",
        JPEG2000Lossless: "j2k",
    }
    for ts, tag in short.items():
        add(f"{tag}_mono2_u8", Pixels(grey_values(g, 8, False)[None]), ts)
        add(f"{tag}_mono2_u8_narrow", Pixels(narrow_grey(g)[None]), ts)
        add(
            f"{tag}_mono2_u12_window",
            Pixels(grey_values(g, 12, False)[None], bits_stored=12, slope=1, intercept=-1024, window=[(1000, 2500)]),
            ts,
        )
        add(f"{tag}_mono1_u16_nowindow", Pixels(grey_values(g, 16, False)[None], "MONOCHROME1", 16), ts)
        if ts != JPEGLSLossless:  # CharLS has no signed mode; pydicom's JPEG-LS signed data is not portable
            add(
                f"{tag}_mono2_s16_rescale",
                Pixels(grey_values(g, 16, True)[None], bits_stored=16, signed=True, slope=0.5, intercept=20,
                       window=[(40, 400), (-600, 1500)]),
                ts,
            )  # fmt: skip
        add(f"{tag}_rgb", Pixels(synthetic_rgb()[None], "RGB"), ts)
        frames = np.stack([grey_values(synthetic_grey(seed=s), 12, False) for s in range(3)])
        add(f"{tag}_mono2_u12_3frames", Pixels(frames, bits_stored=12, window=[(2048, 4096)]), ts)
    ybr = convert_color_space(synthetic_rgb(), "RGB", "YBR_FULL")
    add("evrle_ybr_full", Pixels(ybr[None], "YBR_FULL"), ExplicitVRLittleEndian)
    add("jpeg_baseline_mono2_u8", Pixels(grey_values(g, 8, False)[None]), JPEGBaseline8Bit)
    add("jpeg_baseline_mono2_u8_narrow", Pixels(narrow_grey(g)[None]), JPEGBaseline8Bit)
    add("jpeg_baseline_rgb", Pixels(synthetic_rgb()[None], "RGB"), JPEGBaseline8Bit)
    add(
        "jpeg_baseline_rgb_3frames",
        Pixels(np.stack([synthetic_rgb(seed=s) for s in range(3)]), "RGB"),
        JPEGBaseline8Bit,
    )
    entries.append(
        write_dicom(
            os.path.join(outdir, "evrle_mono2_u8_phi.dcm"),
            Pixels(grey_values(g, 8, False)[None]),
            ExplicitVRLittleEndian,
            phi=True,
            burned_in=True,
            source="synthetic",
        )
    )
    # A DICOM file without extension (recognised by "DICM" at byte 128).
    noext = write_dicom(os.path.join(outdir, "noext_mono2_u8"), Pixels(grey_values(g, 8, False)[None]), RLELossless)
    entries.append({**noext, "source": "synthetic"})
    entries.append(write_corrupt(os.path.join(outdir, "corrupt_j2k.dcm")))
    entries.append(write_unsupported(os.path.join(outdir, "unsupported_mpeg2.dcm")))
    return entries


def png_to_12bit(u8: np.ndarray) -> tuple[np.ndarray, float, tuple[float, float]]:
    """An 8-bit grey image as 12-bit CT-like values whose window renders back to exactly the same 8-bit image.

    stored = 16 g + 8 with intercept -1024: modality m = 16 g - 1016; with c = 1024.5, w = 4081 the contract's
    y = ((m - (c - 0.5)) / (w - 1) + 0.5) * 255 = g, so a DICOM build sees the PNG build's pixels.
    """
    return u8.astype(np.int64) * 16 + 8, -1024.0, (1024.5, 4081.0)


def from_pngs(src: str, outdir: str, syntaxes=LOSSLESS_MIX, phi: bool = False) -> list[dict]:
    """Every PNG under src (recursively) as a 12-bit windowed DICOM at the same relative path (.dcm), the transfer
    syntax cycling through `syntaxes` in sorted path order. Colour PNGs are written as 8-bit RGB."""
    entries = []
    pngs = sorted(
        os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src) for f in fs if f.lower().endswith(".png")
    )
    for i, rel in enumerate(pngs):
        with Image.open(os.path.join(src, rel)) as img:
            grey = img.mode in ("L", "I;16", "I", "1")
            arr = np.asarray(img.convert("L" if grey else "RGB"))
        if grey:
            stored, intercept, window = png_to_12bit(arr)
            px = Pixels(stored[None], bits_stored=12, slope=1, intercept=intercept, window=[window])
        else:
            px = Pixels(arr[None], "RGB")
        out = os.path.join(outdir, os.path.splitext(rel)[0] + ".dcm")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        entry = write_dicom(out, px, syntaxes[i % len(syntaxes)], phi=phi, source=rel)
        entries.append({**entry, "file": os.path.relpath(out, outdir)})
    return entries


def write_manifest(outdir: str, entries: list[dict]) -> str:
    path = os.path.join(outdir, "manifest.json")
    with open(path, "w") as f:
        json.dump({"generator": "test/helpers/make_dicoms.py", "pydicom": pydicom.__version__, "files": entries}, f,
                  indent=1)  # fmt: skip
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--from-png", metavar="DIR", help="convert the PNGs under DIR (12-bit windowed, mixed syntaxes)")
    ap.add_argument("--phi", action="store_true", help="write fake PatientName/PatientID/PatientBirthDate")
    args = ap.parse_args(argv)
    if args.from_png:
        entries = from_pngs(args.from_png, args.outdir, phi=args.phi)
    else:
        entries = fixture_set(args.outdir, phi=args.phi)
    print(write_manifest(args.outdir, entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
