"""DICOM images -> the 8-bit image the rest of preprocessing uses, by the contract's rendering (issue 41).

The rendering is stated once, in pipelines/contract/manifest.schema.json (input.image.dicom), and serving
(TypeScript) reproduces it: stored values (signed per PixelRepresentation) -> modality values
m = stored * RescaleSlope + RescaleIntercept -> a VOI window (c, w): y = ((m - (c - 0.5)) / (w - 1) + 0.5) * 255
clipped to [0, 255] (w = 1: 0 where m <= c - 0.5, else 255); without one, unsigned grey of at most 8 bits stored
keeps its values (y = m clipped to [0, 255], what a PNG of the same pixels holds; unwindowed_8bit "as_stored")
and deeper or signed grey y = (m - min) / (max - min) * 255 over the frame -> grey = floor(y + 0.5) ->
MONOCHROME1: 255 - grey. Colour (RGB, YBR_*): 8-bit RGB as decoded. Records written before unwindowed_8bit
existed stretched every unwindowed frame min..max, and are rendered that way still.

Never put a header's identifying values (names, IDs, dates) in a message: errors name the file and its transfer
syntax only.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from functools import cache

import numpy as np

from .contract import CONTRACT_DIR
from .errors import DataError

DICOM_EXTENSIONS = (".dcm", ".dicom")
FRAME_REF = re.compile(r"^(?P<path>.+)#frame=(?P<frame>\d+)$")  # one frame of a multi-frame file (frames: all)
GREY = ("MONOCHROME1", "MONOCHROME2")
COLOUR = ("RGB", "YBR_FULL", "YBR_FULL_422", "YBR_ICT", "YBR_RCT", "YBR_PARTIAL_420")


@cache
def window_presets() -> dict[str, dict[str, float]]:
    """{name: {center, width}} from pipelines/contract/dicom-window-presets.json (shared with the API)."""
    return json.loads((CONTRACT_DIR / "dicom-window-presets.json").read_text())["presets"]


def is_dicom(path: str) -> bool:
    """A .dcm/.dicom name, or any file whose bytes 128..131 are "DICM" (PACS exports often have no extension)."""
    path = split_frame_ref(path)[0]
    if path.lower().endswith(DICOM_EXTENSIONS):
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(132)
    except OSError:
        return False
    return len(head) == 132 and head[128:132] == b"DICM"


def frame_ref(path: str, frame: int) -> str:
    return f"{path}#frame={frame}"


def split_frame_ref(ref: str) -> tuple[str, int]:
    """(file path, frame index) of a path or a frame reference; a real file named like a reference wins."""
    m = FRAME_REF.match(ref)
    if m and not os.path.exists(ref):
        return m["path"], int(m["frame"])
    return ref, 0


def rendering(options: dict | None) -> dict:
    """The manifest's input.image.dicom record for the spec's options.dicom (defaults: file window, first frame)."""
    options = options or {}
    window = dict(options.get("window") or {"source": "file"})
    source = window.get("source", "file")
    if source == "preset":
        name = window.get("name")
        presets = window_presets()
        if name not in presets:
            raise DataError("dicom_window_preset_unknown", name=name, known=", ".join(presets))
        window = {"source": "preset", "name": name, **{k: window.get(k, presets[name][k]) for k in ("center", "width")}}
    elif source == "explicit":
        if window.get("center") is None or window.get("width") is None or float(window["width"]) < 1:
            raise DataError("dicom_window_explicit_incomplete")
        window = {"source": "explicit", "center": window["center"], "width": window["width"]}
    elif source == "file":
        window = {"source": "file"}
    else:
        raise DataError("dicom_window_source_invalid", value=str(source))
    frames = options.get("frames") or "first"
    if frames not in ("first", "all"):
        raise DataError("dicom_frames_invalid", value=str(frames))
    return {
        "modality_lut": True,
        "window": window,
        "invert_monochrome1": True,
        "frames": frames,
        "unwindowed_8bit": "as_stored",
    }


def _syntax(ds) -> str:
    uid = getattr(getattr(ds, "file_meta", None), "TransferSyntaxUID", None)
    return f"{uid.name} ({uid})" if uid is not None else "no transfer syntax in the file meta"


def _read(path: str, pixels: bool = True):
    import pydicom
    from pydicom.errors import InvalidDicomError
    from pydicom.uid import ExplicitVRLittleEndian, ImplicitVRLittleEndian

    # pydicom's value checks can warn about a header value (its length, its form), and warnings reach stderr and
    # from there the job's logs: the renderer needs none of them, so nothing is checked while reading.
    pydicom.config.settings.reading_validation_mode = pydicom.config.IGNORE
    name = os.path.basename(path)
    try:
        return pydicom.dcmread(path, stop_before_pixels=not pixels)
    except InvalidDicomError as exc:
        # Older exports write a bare dataset: no 128-byte preamble, no file meta. Read it as what it must be,
        # uncompressed little endian (implicit or explicit VR, which pydicom tells from the first element).
        try:
            ds = pydicom.dcmread(path, stop_before_pixels=not pixels, force=True)
        except Exception:  # any failure here: the first error stands
            ds = None
        if ds is None or "Rows" not in ds or getattr(ds, "original_encoding", (None, None))[1] is False:
            raise DataError("dicom_not_dicom", file=name) from exc
        ds.file_meta = getattr(ds, "file_meta", None) or pydicom.dataset.FileMetaDataset()
        if "TransferSyntaxUID" not in ds.file_meta:
            implicit = ds.original_encoding[0]
            ds.file_meta.TransferSyntaxUID = ImplicitVRLittleEndian if implicit else ExplicitVRLittleEndian
        ds.preamble_missing = True
        return ds
    except (OSError, ValueError, EOFError) as exc:
        raise DataError("dicom_unreadable", file=name, reason=_first_line(exc)) from exc


def _first_line(exc: Exception) -> str:
    """The decoder's message on one line (pydicom lists each plugin's failure on its own line)."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
    return text[:300]


def frame_count(path: str) -> int:
    ds = _read(path, pixels=False)
    return int(getattr(ds, "NumberOfFrames", 1) or 1)


def _number(ds, key: str) -> float | None:
    """A numeric header value (the first of several), None when absent or empty."""
    from pydicom.multival import MultiValue

    v = ds.get(key)
    if v is None or v == "":
        return None
    return float(v[0] if isinstance(v, (MultiValue, list, tuple)) else v)


def file_window(ds) -> tuple[float, float] | None:
    """The file's first WindowCenter/WindowWidth, or None when absent or unusable (width < 1)."""
    c, w = _number(ds, "WindowCenter"), _number(ds, "WindowWidth")
    if c is None or w is None or w < 1:
        return None
    return c, w


def modality_values(stored: np.ndarray, ds) -> np.ndarray:
    """The modality LUT as the contract states it: RescaleSlope (1 when absent) and RescaleIntercept (0)."""
    slope, intercept = _number(ds, "RescaleSlope"), _number(ds, "RescaleIntercept")
    return stored.astype(np.float64) * (1.0 if slope is None else slope) + (0.0 if intercept is None else intercept)


def window_grey(m: np.ndarray, window: tuple[float, float] | None, as_stored: bool = False) -> np.ndarray:
    """Modality values -> uint8 grey by the contract's linear window; without one, the values themselves clipped to
    [0, 255] (as_stored: 8-bit grey) or min..max of these values."""
    if window is None and as_stored:
        y = np.clip(m, 0.0, 255.0)
    elif window is None:
        lo, hi = float(m.min()), float(m.max())
        y = np.zeros_like(m) if hi == lo else (m - lo) / (hi - lo) * 255.0
    else:
        c, w = window
        if w == 1:
            y = np.where(m <= c - 0.5, 0.0, 255.0)
        else:
            y = np.clip(((m - (c - 0.5)) / (w - 1) + 0.5) * 255.0, 0.0, 255.0)
    return np.floor(y + 0.5).astype(np.uint8)


def stored_as_grey_levels(ds, record: dict) -> bool:
    """An unwindowed frame whose stored values already are grey levels: unsigned, at most 8 bits stored (BitsStored,
    BitsAllocated when absent), under a record that says so (unwindowed_8bit "as_stored"; absent: "min_max")."""
    bits = int(ds.get("BitsStored") or ds.get("BitsAllocated") or 16)
    unsigned = int(ds.get("PixelRepresentation") or 0) != 1  # as serving reads it: 1 is signed, anything else not
    return record.get("unwindowed_8bit", "min_max") == "as_stored" and bits <= 8 and unsigned


def render_frame(stored: np.ndarray, ds, record: dict) -> np.ndarray:
    """One decoded frame -> uint8 [H, W] (grey) or [H, W, 3] (colour) by the manifest record."""
    photometric = str(ds.get("PhotometricInterpretation", "")).strip().upper()
    if photometric in COLOUR:
        if int(ds.get("BitsAllocated", 8)) != 8 or stored.ndim != 3:
            raise ValueError(f"{photometric} with {ds.get('BitsAllocated')} bits is not supported (8-bit colour only)")
        return np.ascontiguousarray(stored, dtype=np.uint8)
    if photometric not in GREY:
        raise ValueError(f"photometric interpretation {photometric or '(none)'} is not supported")
    m = modality_values(stored, ds) if record.get("modality_lut", True) else stored.astype(np.float64)
    source = record["window"]["source"]
    window = (
        file_window(ds) if source == "file" else (float(record["window"]["center"]), float(record["window"]["width"]))
    )
    grey = window_grey(m, window, as_stored=window is None and stored_as_grey_levels(ds, record))
    if photometric == "MONOCHROME1" and record.get("invert_monochrome1", True):
        grey = 255 - grey
    return grey


_PILLOW_JPEG = ("1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.51")


def render(ref: str, record: dict) -> np.ndarray:
    """A DICOM path (or frame reference) -> uint8 [H, W] or [H, W, 3]; DataError naming the file and its syntax."""
    from pydicom.pixels import pixel_array
    from pydicom.uid import DeflatedExplicitVRLittleEndian

    path, frame = split_frame_ref(ref)
    ds = _read(path)
    name = os.path.basename(path)
    if "PixelData" not in ds and "FloatPixelData" not in ds:
        raise DataError("dicom_no_pixels", file=name, syntax=_syntax(ds))
    frames = int(getattr(ds, "NumberOfFrames", 1) or 1)
    if frame >= frames:
        raise DataError("dicom_frame_missing", file=name, frames=frames, frame=frame)
    # Lossy JPEG through Pillow (libjpeg-turbo), the decoder serving uses (src/dicom/codecs.ts): pydicom's default,
    # libjpeg, rounds its IDCT differently and gave grey levels up to 3 apart from serving's on the same file.
    plugin = {"decoding_plugin": "pillow"} if ds.file_meta.TransferSyntaxUID in _PILLOW_JPEG else {}
    try:
        whole = ds.file_meta.TransferSyntaxUID == DeflatedExplicitVRLittleEndian or getattr(ds, "preamble_missing", 0)
        if frames > 1 and not whole:
            # Only the wanted frame is decoded (a multi-frame ultrasound can hold hundreds).
            stored = pixel_array(path, index=frame, **plugin)
        else:  # pydicom's frame-by-frame reader neither inflates a deflated dataset nor reads one without file meta
            stored = pixel_array(ds, **plugin)
            stored = stored[frame] if frames > 1 else stored
        return render_frame(stored, ds, record)
    except DataError:
        raise
    except Exception as exc:  # the decoders raise RuntimeError, NotImplementedError, ValueError...
        raise DataError("dicom_undecodable", file=name, syntax=_syntax(ds), reason=_first_line(exc)) from exc


def open_image(ref: str, record: dict):
    """A DICOM as a PIL image ("L" or "RGB"), used exactly where a PNG would be opened."""
    from PIL import Image

    arr = render(ref, record)
    return Image.fromarray(arr, "RGB" if arr.ndim == 3 else "L")


def open_path(path: str, record: dict | None = None):
    """Any training image as a PIL image: a DICOM rendered by ``record`` (default: the contract's defaults), any
    other file opened by Pillow. The vision and detection pipelines open images only through this."""
    from PIL import Image

    if is_dicom(path):
        return open_image(path, record or rendering(None))
    return Image.open(path)


def expand_frames(refs: list[str], record: dict) -> list[list[str]]:
    """Per input path, the images it gives: itself, or (frames: all) one reference per frame of a DICOM."""
    if record.get("frames") != "all":
        return [[r] for r in refs]
    out = []
    for r in refs:
        n = frame_count(r) if is_dicom(r) else 1
        out.append([r] if n == 1 else [frame_ref(r, k) for k in range(n)])
    return out


def summary(paths: list[str]) -> str:
    """Counts of transfer syntaxes, photometric interpretations and bit depths: nothing that identifies anyone."""
    syntaxes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for p in paths:
        ds = _read(split_frame_ref(p)[0], pixels=False)
        uid = getattr(ds.file_meta, "TransferSyntaxUID", None)
        syntaxes[uid.name if uid is not None else "unknown"] += 1
        kinds[f"{ds.get('PhotometricInterpretation', '?')} {ds.get('BitsStored', '?')}-bit"] += 1
    fmt = lambda c: ", ".join(f"{k} {n}" for k, n in c.most_common())  # noqa: E731
    return f"{len(paths)} DICOM images; transfer syntaxes: {fmt(syntaxes)}; {fmt(kinds)}"
