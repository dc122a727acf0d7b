"""Tiny generated image datasets for the vision tests: a bright blob whose position/size is the label."""

from __future__ import annotations

import csv
import json

import numpy as np
from PIL import Image

from device_choice import DEVICE


def _image(rng, side, left: bool | None, right: bool | None, size: float, colour: bool) -> Image.Image:
    img = rng.normal(60, 20, (side, side)).clip(0, 255)
    yy, xx = np.mgrid[:side, :side]
    for on, cx in ((left, side * 0.28), (right, side * 0.72)):
        if on:
            cy = side / 2 + rng.uniform(-2, 2)
            img[(yy - cy) ** 2 + (xx - cx) ** 2 <= size**2] = 220
    arr = img.astype(np.uint8)
    if colour:
        return Image.fromarray(np.stack([arr, arr // 2, 255 - arr], -1), "RGB")
    return Image.fromarray(arr, "L")


def make_dataset(tmp_path, task: str, n: int = 90, side: int = 16, seed: int = 0, colour: bool = False) -> dict:
    """Writes images + table.csv; returns a job spec (train) for ``task`` in binary|multiclass|multilabel|regression."""
    rng = np.random.default_rng(seed)
    root = tmp_path / "data"
    (root / "img").mkdir(parents=True)
    rows = []
    names = {"0": "none", "1": "left", "2": "right"}
    for i in range(n):
        pid = f"p{i // 2}"  # two images per patient: the split must keep them together
        if task == "multilabel":
            a, b = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
            img, label = _image(rng, side, a, b, 3, colour), {"left": int(a), "right": int(b)}
        elif task == "regression":
            size = float(rng.uniform(1.5, 6))
            img, label = _image(rng, side, True, False, size, colour), {"size": round(size, 3)}
        else:
            k = int(rng.integers(0, 2 if task == "binary" else 3))
            img, label = _image(rng, side, k == 1, k == 2, 3, colour), {"label": str(k), "label_name": names[str(k)]}
        name = f"img/{i}.png"
        img.save(root / name)
        rows.append({"patient": pid, "path": name, **label})
    table = tmp_path / "table.csv"
    with open(table, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    pids = sorted({r["patient"] for r in rows}, key=lambda p: int(p[1:]))
    n_p = len(pids)
    label_cols = {"multilabel": ["left", "right"], "regression": ["size"]}.get(task, ["label"])
    return {
        "schema_version": 1,
        "job_id": f"t-{task}",
        "command": "train",
        "kind": "vision_classification",
        "problem": task,
        "data": {
            "root": str(root),
            "table": str(table),
            "id_col": "patient",
            "images_col": "path",
            "label_cols": label_cols,
            "class_name_col": "label_name" if task in ("binary", "multiclass") else None,
        },
        "split": {
            "seed": 1,
            "train": pids[: int(n_p * 0.6)],
            "val": pids[int(n_p * 0.6) : int(n_p * 0.8)],
            "test": pids[int(n_p * 0.8) :],
        },
        # 20 s, not 10: on a shared, overloaded 2-core host one epoch can take seconds; idle machines stop early.
        "metric": "rmse" if task == "regression" else "auc",
        "threshold_metric": None if task == "regression" else "auc",
        "budget": {"mode": "fast", "time_budget_s": 20},
        "seed": 3,
        "device": DEVICE,
        "out_dir": str(tmp_path / "out"),
        "options": {"threads": 1},
    }


def write_spec(tmp_path, spec: dict, name: str = "spec.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(spec))
    return str(p)
