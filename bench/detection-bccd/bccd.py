"""BCCD (Pascal VOC) -> Builder's inputs: the normalised box CSV the pipeline reads, and the zip a
user would upload (VOC layout inside), so the same data can go through the HTTP API.

Reusable: ``voc_rows`` parses any VOC folder (JPEGImages/, Annotations/); ``write_normalised_csv``
and ``write_user_zip`` write the two forms. Image = patient (BCCD has no patient ids).
"""

from __future__ import annotations

import csv
import os
import xml.etree.ElementTree as ET
import zipfile

COLUMNS = ["patient", "image", "label", "x1", "y1", "x2", "y2"]


def image_ids(voc_dir: str, split: str) -> list[str]:
    with open(os.path.join(voc_dir, "ImageSets", "Main", f"{split}.txt"), encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip()]


def voc_rows(voc_dir: str, ids: list[str]) -> tuple[list[dict], int]:
    """One row per box (class empty for an image without boxes); -> (rows, boxes skipped).
    VOC pixel coordinates are 1-based inclusive; they are kept as written (the usual convention
    for BCCD results). Boxes with no area are skipped and counted, as Builder's dataset check does."""
    rows, skipped = [], 0
    for image_id in ids:
        root = ET.parse(os.path.join(voc_dir, "Annotations", f"{image_id}.xml")).getroot()
        image = f"JPEGImages/{image_id}.jpg"
        n = 0
        for obj in root.iter("object"):
            bb = obj.find("bndbox")
            x1, y1, x2, y2 = (float(bb.find(k).text) for k in ("xmin", "ymin", "xmax", "ymax"))
            if x2 <= x1 or y2 <= y1:
                skipped += 1
                continue
            rows.append(
                {
                    "patient": image_id,
                    "image": image,
                    "label": obj.find("name").text.strip(),
                    "x1": x1,
                    "y1": y1,
                    "x2": x2,
                    "y2": y2,
                }
            )
            n += 1
        if n == 0:
            rows.append({"patient": image_id, "image": image, "label": "", "x1": "", "y1": "", "x2": "", "y2": ""})
    return rows, skipped


def write_normalised_csv(voc_dir: str, ids: list[str], path: str) -> int:
    """Writes the CSV the pipeline reads (image paths relative to voc_dir); -> boxes skipped."""
    rows, skipped = voc_rows(voc_dir, ids)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return skipped


def write_user_zip(voc_dir: str, ids: list[str], path: str, folder: str = "bccd") -> int:
    """The zip a user uploads: BCCD exactly as published (<folder>/JPEGImages, <folder>/Annotations and
    <folder>/ImageSets/Main/*.txt, unchanged bytes) for the given images. Its two zero-area boxes stay in: Builder's
    dataset check leaves them out with a warning. -> files written."""
    wanted = set(ids)
    n = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for image_id in ids:
            zf.write(
                os.path.join(voc_dir, "JPEGImages", f"{image_id}.jpg"),
                f"{folder}/JPEGImages/{image_id}.jpg",
                compress_type=zipfile.ZIP_STORED,
            )  # JPEG does not compress further
            zf.write(os.path.join(voc_dir, "Annotations", f"{image_id}.xml"), f"{folder}/Annotations/{image_id}.xml")
            n += 2
        sets = os.path.join(voc_dir, "ImageSets", "Main")
        for name in sorted(os.listdir(sets)):
            with open(os.path.join(sets, name), encoding="utf-8") as fh:
                listed = {line.strip() for line in fh if line.strip()}
            if listed <= wanted:  # the published split files that cover only images in this zip
                zf.write(os.path.join(sets, name), f"{folder}/ImageSets/Main/{name}")
                n += 1
    return n
