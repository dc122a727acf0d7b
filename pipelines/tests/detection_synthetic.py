"""A generated detection dataset for the tests: bright rectangles and circles on noise, boxes known.

Not a test module itself (no test_ prefix); the detection tests import it.
"""

from __future__ import annotations

import csv
import json
import os

import numpy as np
from PIL import Image, ImageDraw

from device_choice import DEVICE


def make_dataset(root, n_images: int = 72, size: int = 64, seed: int = 0) -> dict:
    """Writes images/*.png and boxes.csv under ``root``; returns a train job spec (without out_dir/budget).
    Image 0 has no objects. Every image is its own patient; split 60% / 20% / 20%."""
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(root, "images"), exist_ok=True)
    rows = []
    for i in range(n_images):
        arr = rng.normal(60, 25, (size, size, 3)).clip(0, 255).astype(np.uint8)
        img = Image.fromarray(arr)
        draw = ImageDraw.Draw(img)
        name = f"images/img{i:03d}.png"
        n_obj = 0 if i == 0 else int(rng.integers(1, 4))
        placed = []
        for _ in range(n_obj):
            for _try in range(20):
                w, h = (int(v) for v in rng.integers(size // 6, size // 2.6, 2))
                x1, y1 = int(rng.integers(0, size - w)), int(rng.integers(0, size - h))
                box = (x1, y1, x1 + w, y1 + h)
                if all(box[2] <= p[0] or p[2] <= box[0] or box[3] <= p[1] or p[3] <= box[1] for p in placed):
                    break
            else:
                continue
            placed.append(box)
            if rng.random() < 0.5:
                draw.rectangle([box[0], box[1], box[2] - 1, box[3] - 1], fill=(230, 230, 90))
                cls = "rect"
            else:
                draw.ellipse([box[0], box[1], box[2] - 1, box[3] - 1], fill=(90, 220, 230))
                cls = "circle"
            rows.append(
                {
                    "patient": f"p{i}",
                    "image": name,
                    "label": cls,
                    "x1": box[0],
                    "y1": box[1],
                    "x2": box[2],
                    "y2": box[3],
                }
            )
        if not placed:
            rows.append({"patient": f"p{i}", "image": name, "label": "", "x1": "", "y1": "", "x2": "", "y2": ""})
        img.save(os.path.join(root, name))
    table = os.path.join(root, "boxes.csv")
    with open(table, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["patient", "image", "label", "x1", "y1", "x2", "y2"])
        writer.writeheader()
        writer.writerows(rows)
    ids = [f"p{i}" for i in range(n_images)]
    order = list(rng.permutation(ids[1:]))
    n_train, n_val = int(0.6 * n_images), int(0.2 * n_images)
    train = ["p0"] + order[: n_train - 1]  # the empty image trains
    return {
        "schema_version": 1,
        "job_id": "det-test",
        "command": "train",
        "kind": "detection",
        "problem": "detection",
        "data": {
            "root": str(root),
            "table": table,
            "id_col": "patient",
            "images_col": "image",
            "label_cols": ["label"],
        },
        "split": {
            "seed": seed,
            "train": train,
            "val": order[n_train - 1 : n_train - 1 + n_val],
            "test": order[n_train - 1 + n_val :],
        },
        "metric": "map50",
        "threshold_metric": "f_macro",
        "budget": {"mode": "fast", "time_budget_s": 40},
        "seed": seed,
        "device": DEVICE,
        "out_dir": "",
        "options": {"threads": 1},
    }


def write_spec(spec: dict, path) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(spec, fh)
    return str(path)
