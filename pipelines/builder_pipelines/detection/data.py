"""Reads the normalised detection table (one row per box) into per-image records and splits them.

Columns: data.id_col (patient), data.images_col (path relative to data.root), data.label_cols[0]
(class name; empty for an image without objects) and x1, y1, x2, y2 in original-image pixels.
Classes are the sorted distinct non-empty class names; their index order is the output order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from ..common import dicom, events
from ..common.data import read_table, require_columns, split_indices
from ..common.errors import DataError
from ..common.spec import JobSpec, data_and_split

BOX_COLS = ("x1", "y1", "x2", "y2")


@dataclass
class ImageRecord:
    path: str  # absolute
    patient: str
    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))  # (n, 4) original pixels
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (n,) class indices
    width: int = 0
    height: int = 0
    dicom: dict | None = None  # a DICOM's rendering (the manifest's input.image.dicom); None for other files


def _float(row: dict, col: str, where: tuple[int, str]) -> float:
    """``where``: the spreadsheet row (header = row 1) and the image path."""
    try:
        v = float(row[col])
    except (TypeError, ValueError):
        raise DataError("box_value_not_number", row=where[0], path=where[1], column=col, value=str(row[col])) from None
    if not np.isfinite(v):
        raise DataError("box_value_not_finite", row=where[0], path=where[1], column=col)
    return v


def detection_rendering(spec: JobSpec | dict) -> dict:
    """The DICOM rendering for detection: the spec's window, always the first frame (boxes are drawn on one image)."""
    options = JobSpec.of(spec).options.dicom or {}
    if options.get("frames") == "all":
        events.log("warn", "dicom_frames all is for classification: detection trains on each DICOM's first frame")
    return dicom.rendering({**options, "frames": "first"})


def read_detection_table(spec: JobSpec | dict, classes: list[str] | None = None, rendering: dict | None = None):
    """-> (records by split {train, val, test}, class names). ``classes`` fixes the class list
    (evaluate uses the source model's); otherwise it is derived from the rows of every split. ``rendering``
    (evaluate: the source model's input.image.dicom) renders DICOM images; default: the spec's."""
    d, split = data_and_split(spec)
    img_col, lab_col, id_col = d.images_col, d.label_cols[0], d.id_col
    if not img_col:
        raise DataError("images_col_missing")
    table = read_table(d.table)
    require_columns(table, [id_col, img_col, lab_col, *BOX_COLS])
    names = sorted({(r[lab_col] or "").strip() for r in table.rows} - {""})
    if classes is None:
        classes = names
        if not classes:
            raise DataError("no_boxes")
    unknown = sorted(set(names) - set(classes))
    if unknown:
        raise DataError("labels_unknown", labels=", ".join(unknown))
    index = {c: i for i, c in enumerate(classes)}
    parts = split_indices(table, id_col, split.parts())
    out: dict[str, list[ImageRecord]] = {}
    dropped: list[str] = []
    for part, rows in parts.items():
        by_image: dict[str, dict] = {}
        for i in rows:
            row = table.rows[i]
            rel = row[img_col]
            entry = by_image.setdefault(rel, {"patient": row[id_col], "boxes": [], "labels": []})
            if entry["patient"] != row[id_col]:
                raise DataError("image_two_patients", path=rel, first=entry["patient"], second=row[id_col])
            name = (row[lab_col] or "").strip()
            if not name:
                continue
            where = (i + 2, rel)
            x1, y1, x2, y2 = (_float(row, c, where) for c in BOX_COLS)
            if x2 <= x1 or y2 <= y1:  # one bad box should not sink a dataset: drop it, say so
                dropped.append(f"row {where[0]} ({where[1]}): ({x1}, {y1}, {x2}, {y2})")
                continue
            entry["boxes"].append((x1, y1, x2, y2))
            entry["labels"].append(index[name])
        recs = []
        for rel, e in sorted(by_image.items()):
            path = os.path.join(d.root, rel)
            is_dicom = dicom.is_dicom(path)
            if is_dicom and rendering is None:
                rendering = detection_rendering(spec)
            recs.append(
                ImageRecord(
                    path,
                    e["patient"],
                    np.asarray(e["boxes"], np.float32).reshape(-1, 4),
                    np.asarray(e["labels"], np.int64),
                    dicom=rendering if is_dicom else None,
                )
            )
        out[part] = recs
    if dropped:
        events.log("warn", f"{len(dropped)} boxes without area (x2 <= x1 or y2 <= y1) ignored, e.g. {dropped[0]}")
    return out, classes


def open_image(rec: ImageRecord) -> Image.Image:
    """Opens as RGB, records the size and clips the boxes to it."""
    try:
        img = dicom.open_path(rec.path, rec.dicom)
        img.load()
    except DataError:
        raise
    except (OSError, ValueError) as exc:
        raise DataError("image_unreadable", path=os.path.basename(rec.path), detail=str(exc)) from None
    img = img.convert("RGB")
    rec.width, rec.height = img.size
    if len(rec.boxes):
        rec.boxes[:, [0, 2]] = np.clip(rec.boxes[:, [0, 2]], 0, img.width)
        rec.boxes[:, [1, 3]] = np.clip(rec.boxes[:, [1, 3]], 0, img.height)
        keep = (rec.boxes[:, 2] > rec.boxes[:, 0]) & (rec.boxes[:, 3] > rec.boxes[:, 1])
        rec.boxes, rec.labels = rec.boxes[keep], rec.labels[keep]
    return img
