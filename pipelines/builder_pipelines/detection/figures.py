"""Test images drawn with true boxes (green, thin) and served predictions (class colour, thick, with score)."""

from __future__ import annotations

import os

from PIL import ImageDraw

from ..common import dicom

PALETTE = [
    (230, 25, 75),
    (0, 130, 200),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
    (210, 245, 60),
    (250, 190, 190),
    (0, 128, 128),
    (170, 110, 40),
]
TRUTH = (60, 180, 75)


def draw_examples(out_dir: str, records, dets, classes: list[str], n: int = 4) -> list[dict]:
    """Writes up to ``n`` PNGs (images with the most true boxes first, for informative examples)."""
    order = sorted(range(len(records)), key=lambda i: -len(records[i].boxes))[:n]
    figures = []
    for rank, i in enumerate(order):
        rec = records[i]
        img = dicom.open_path(rec.path, rec.dicom).convert("RGB")
        draw = ImageDraw.Draw(img)
        lw = max(1, round(max(img.size) / 300))
        for b in rec.boxes:
            draw.rectangle([float(v) for v in b], outline=TRUTH, width=lw)
        boxes, scores, labels = dets[i]
        for b, s, c in zip(boxes, scores, labels):
            colour = PALETTE[int(c) % len(PALETTE)]
            draw.rectangle([float(v) for v in b], outline=colour, width=lw + 1)
            draw.text((float(b[0]) + 2, float(b[1]) + 1), f"{classes[int(c)]} {s:.2f}", fill=colour)
        name = f"detections_{rank + 1}.png"
        img.save(os.path.join(out_dir, name))
        figures.append(
            {
                "name": f"detections_{rank + 1}",
                "file": name,
                "title": f"Test image {os.path.basename(rec.path)}: truth in green, predictions coloured by class",
            }
        )
    return figures
