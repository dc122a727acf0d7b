"""From the normalised table to in-memory tensors: targets, classes, the input size and decoded images."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..common import dicom, events
from ..common.data import Table, require_columns
from ..common.errors import DataError
from ..common.spec import JobSpec
from .preprocess import load_uint8, probe

MEMORY_CAP_BYTES = 768 * 1024**2  # decoded uint8 images (x4 as float32) must fit, else the side shrinks
DEFAULT_MAX_SIDE = {"fast": 128, "best": 224}


@dataclass
class Targets:
    problem: str
    classes: list[dict]  # manifest ``classes`` entries
    y: np.ndarray  # int class index (binary/multiclass), 0/1 matrix (multilabel), float (regression)

    def onehot(self, rows) -> np.ndarray:
        y = self.y[rows]
        if self.problem == "multilabel":
            return y.astype(int)
        out = np.zeros((len(rows), len(self.classes)), dtype=int)
        out[np.arange(len(rows)), y] = 1
        return out


def _sort_codes(codes: set[str]) -> list[str]:
    try:
        return sorted(codes, key=float)  # numeric codes sort numerically
    except ValueError:
        return sorted(codes)


def _class_names(table: Table, codes: list[str], label_col: str, name_col: str | None) -> list[str]:
    if not name_col:
        return list(codes)
    require_columns(table, [name_col])
    name_of: dict[str, str] = {}
    code_of: dict[str, str] = {}
    for r in table.rows:
        code, name = r[label_col].strip(), r[name_col].strip()
        if name_of.setdefault(code, name) != name or code_of.setdefault(name, code) != code:
            raise DataError(
                "class_names_not_one_to_one", name_column=name_col, label_column=label_col, code=code, name=name
            )
    return [name_of[c] for c in codes]


def _is_number(value: str) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


def _probe(path: str, rendering: dict | None):
    try:
        return probe(path, rendering)
    except OSError as exc:
        raise DataError("image_unreadable", path=os.path.basename(path), detail=str(exc)) from exc


def _parse_01(value: str, col: str) -> int:
    v = value.strip().lower()
    if v in ("1", "1.0", "true", "yes"):
        return 1
    if v in ("0", "0.0", "false", "no"):
        return 0
    raise DataError("multilabel_not_01", column=col, value=str(value))


def build_targets(table: Table, spec: dict, classes: list[dict] | None = None) -> Targets:
    """Targets for every row. ``classes`` (from a published manifest) fixes the class order for evaluate."""
    spec = JobSpec.of(spec)
    problem, data = spec.problem, spec.data
    label_cols = list(data.label_cols)
    require_columns(table, label_cols)
    if problem == "multilabel":
        if len(label_cols) < 2:
            raise DataError("multilabel_needs_two_columns")
        cols = [c["code"] for c in classes] if classes else label_cols
        require_columns(table, cols)
        y = np.array([[_parse_01(r[c], c) for c in cols] for r in table.rows], dtype=int)
        return Targets(problem, classes or [{"index": i, "code": c, "name": c} for i, c in enumerate(cols)], y)
    col = label_cols[0]
    raw = [r[col].strip() for r in table.rows]
    if any(v == "" for v in raw):
        raise DataError("label_empty", column=col)
    if problem == "regression":
        try:
            y = np.array([float(v) for v in raw], dtype=np.float64)
        except ValueError as exc:
            row, value = next((i, v) for i, v in enumerate(raw) if not _is_number(v))
            raise DataError("regression_target_not_number", row=row + 1, column=col, value=value) from exc
        return Targets(problem, classes or [{"index": 0, "code": col, "name": col}], y)
    if classes is None:
        codes = _sort_codes(set(raw))
        if problem == "binary" and len(codes) != 2:
            raise DataError("binary_needs_two_classes", column=col, found=len(codes), values=", ".join(codes[:10]))
        if len(codes) < 2:
            raise DataError("label_single_class", column=col)
        names = _class_names(table, codes, col, data.class_name_col)
        classes = [{"index": i, "code": c, "name": n} for i, (c, n) in enumerate(zip(codes, names))]
    index = {c["code"]: c["index"] for c in classes}
    unknown = sorted(set(raw) - set(index))
    if unknown:
        raise DataError("labels_unknown", labels=", ".join(unknown[:10]))
    return Targets(problem, classes, np.array([index[v] for v in raw], dtype=np.int64))


def image_paths(table: Table, spec: dict) -> list[str]:
    spec = JobSpec.of(spec)
    data = spec.data
    col = data.images_col
    if not col:
        raise DataError("images_col_missing")
    require_columns(table, [col])
    root = os.path.realpath(data.root)
    out = []
    for r in table.rows:
        rel = r[col].strip()
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep):
            raise DataError("image_path_outside", path=rel)
        if not os.path.isfile(dicom.split_frame_ref(path)[0]):
            raise DataError("image_not_found", path=rel)
        out.append(path)
    return out


def expand_dicom_frames(table: Table, spec: dict) -> Table:
    """options.dicom.frames "all": each frame of a multi-frame DICOM becomes its own row (an image of the same
    patient, so the patient split keeps the frames together); otherwise the table as it is."""
    spec = JobSpec.of(spec)
    record = dicom.rendering(spec.options.dicom)
    if record["frames"] != "all":
        return table
    col = spec.data.images_col
    rows = []
    for row, refs in zip(table.rows, dicom.expand_frames(image_paths(table, spec), record)):
        if len(refs) == 1:
            rows.append(row)
        else:
            rows.extend({**row, col: dicom.frame_ref(row[col].strip(), dicom.split_frame_ref(r)[1])} for r in refs)
    if len(rows) > len(table.rows):
        events.log("info", f"DICOM frames: all; {len(table.rows)} rows became {len(rows)} images")
    return Table(table.header, rows)


def dicom_rendering(paths: list[str], spec: dict) -> dict | None:
    """The manifest's input.image.dicom record when any image is a DICOM, else None."""
    found = [p for p in paths if dicom.is_dicom(p)]
    if not found:
        return None
    record = dicom.rendering(JobSpec.of(spec).options.dicom)
    window = record["window"]
    how = window["source"] + (f" {window['name']}" if "name" in window else "")
    if "center" in window:
        how += f" (center {window['center']}, width {window['width']})"
    events.log("info", f"{dicom.summary(found)}; window: {how}; frames: {record['frames']}")
    return record


def choose_input(paths: list[str], spec: dict) -> tuple[dict, int]:
    """(input, native side): width/height/channels from the images: the median side, capped by the mode (or
    options.max_image_side) and memory; and the median side before the caps. Above 64 px the pipeline then chooses
    the training size at or below the capped one by measurement (size_plan.py).

    Square inputs (stretch) keep the model simple; small images keep their size.
    """
    spec = JobSpec.of(spec)
    rendering = dicom_rendering(paths, spec)
    sample = paths if len(paths) <= 200 else [paths[i] for i in np.linspace(0, len(paths) - 1, 200).astype(int)]
    probes = [_probe(p, rendering) for p in sample]
    side = native = int(np.median([max(w, h) for w, h, _ in probes]))
    channels = 3 if any(c for _, _, c in probes) else 1
    cap = spec.options.max_image_side or DEFAULT_MAX_SIDE[spec.budget.mode]
    side = max(8, min(side, int(cap)))
    while side > 16 and len(paths) * channels * side * side > MEMORY_CAP_BYTES:
        side = int(side * 0.9)
    chosen = {
        "width": side,
        "height": side,
        "channels": channels,
        "resize": "stretch",
        "interpolation": "bilinear",
        "scale": 1 / 255,
    }
    return ({**chosen, "dicom": rendering} if rendering else chosen), native


def load_images(paths: list[str], image: dict, threads: int) -> np.ndarray:
    """All images decoded once into uint8 [N, C, H, W]."""

    def one(p):
        try:
            return load_uint8(
                p, image["width"], image["height"], image["channels"], image["interpolation"], image.get("dicom")
            )
        except OSError as exc:
            raise DataError("image_unreadable", path=os.path.basename(p), detail=str(exc)) from exc

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return np.stack(list(pool.map(one, paths)))


def channel_stats(u8: np.ndarray, scale: float) -> tuple[list[float], list[float]]:
    """Per-channel mean/std of the training images after scaling (std floored to avoid division by ~0).

    From each channel's histogram of its 256 values: a float64 copy of the images would be 8 times their size
    (1.4 GB for 76,500 colour images at 28 px, and as much again for each temporary).
    """
    values = np.arange(256, dtype=np.float64) * scale
    means, stds = [], []
    for c in range(u8.shape[1]):
        counts = np.bincount(u8[:, c].ravel(), minlength=256).astype(np.float64)
        mean = float(counts @ values / counts.sum())
        std = max(float(np.sqrt(counts @ (values - mean) ** 2 / counts.sum())), 1e-3)
        means.append(round(mean, 6))
        stds.append(round(std, 6))
    return means, stds
