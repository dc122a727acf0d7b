"""Image descriptors for the monitoring baseline (``monitoring_baseline.image``, issue 49 items 1 and 4).

Per validation and test image, what serving computes per prediction (src/serving/image-descriptors.ts): width,
height, aspect (width / height), channels, the mean and spread of intensity (per pixel the mean of its channels,
0-255, over at most ``SAMPLE_PIXELS`` pixels at an even stride) and, for a DICOM, its modality, manufacturer and body
part examined. Kept as aggregates only: numeric descriptors as counts between deciles (``monitoring_baseline``'s
bins), categorical ones as counts per value. No pixel, no file name and no patient value is kept; the DICOM values
are the acquisition's (device and protocol), never the patient's.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from . import dicom, monitoring_baseline

SAMPLE_PIXELS = 8192
NUMERIC = ("img:width", "img:height", "img:aspect", "img:mean", "img:std")
DICOM_TAGS = {"img:modality": "Modality", "img:manufacturer": "Manufacturer", "img:body_part": "BodyPartExamined"}


def describe(img) -> dict:
    """One decoded PIL image's descriptors, as serving decodes it: alpha dropped, grey stays one channel."""
    grey = img.mode in ("1", "L", "LA", "I", "I;16", "I;16B", "I;16L", "F")
    arr = np.asarray(img.convert("L" if grey else "RGB"))
    h, w = arr.shape[:2]
    flat = arr.reshape(h * w, -1).astype(np.float64)
    stride = max(1, (h * w) // SAMPLE_PIXELS)
    v = flat[::stride].mean(axis=1)
    return {
        "img:width": float(w),
        "img:height": float(h),
        "img:aspect": w / max(1, h),
        "img:channels": "1" if grey else "3",
        "img:mean": float(v.mean()) if v.size else 0.0,
        "img:std": float(v.std()) if v.size else 0.0,
    }


def _dicom_categories(ref: str) -> dict:
    import pydicom

    path = dicom.split_frame_ref(ref)[0]
    ds = pydicom.dcmread(path, stop_before_pixels=True, force=True)
    out = {}
    for name, tag in DICOM_TAGS.items():
        value = str(getattr(ds, tag, "") or "").replace("\0", "").strip()[:64]
        out[name] = value
    return out


def build(paths: list[str], rendering: dict | None, limit: int = 2000) -> dict | None:
    """The baseline's ``image`` record from up to ``limit`` images (evenly spread over ``paths``); None if none opens."""
    if not paths:
        return None
    step = max(1, len(paths) // limit)
    rows: list[dict] = []
    for ref in paths[::step][:limit]:
        try:
            with dicom.open_path(ref, rendering) as img:
                d = describe(img)
            if dicom.is_dicom(ref):
                d.update(_dicom_categories(ref))
        except Exception:  # noqa: BLE001  (a file that does not open was already reported by the dataset checks)
            continue
        rows.append(d)
    if not rows:
        return None
    descriptors = [
        monitoring_baseline.numeric(name, np.array([r[name] for r in rows], dtype=float)) for name in NUMERIC
    ]
    descriptors.insert(3, _categorical("img:channels", [r["img:channels"] for r in rows]))
    for name in DICOM_TAGS:
        values = [r[name] for r in rows if name in r]
        if values:
            descriptors.append(_categorical(name, values))
    return {"images": len(rows), "descriptors": descriptors}


def _categorical(name: str, values: list[str]) -> dict:
    counts = Counter(values)
    return {"name": name, "type": "categorical", "counts": {k: int(counts[k]) for k in sorted(counts)}}
