"""Issue 52 item 4: a native-resolution development set made from BCCD's 640x480 blood-smear photographs.

Each patch is a 128x128 crop (``--side 256``: 256x256) at the photograph's own resolution, labelled 1 when a whole platelet box (a small object,
about 20-40 px) lies inside it with a 4 px margin and 0 when no platelet box touches it at all (crops that cut a
platelet are left out as ambiguous). Per photograph at most 2 positive and 2 negative crops, drawn from a 64 px grid
with a seeded generator. A quarter of the photographs (seeded) form the test part; their crops are never used to
train or tune, and every crop of a photograph stays in one part (the table's ``source`` column is the pipeline's
patient id, so its folds keep a photograph's crops together too).

Two copies of the same crops are written: ``native/`` (128x128) and ``px28/`` (the same crops shrunk to 28x28 with
bilinear interpolation, as the issue's 28-px arm). Deterministic for a given seed.

  pipelines/.venv/bin/python bench/vision-native-size/make_bccd_patches.py --out /tmp/bccd-patches
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
BCCD = Path(os.environ.get("BUILDER_SHARED_DATASETS", ROOT.parent / "shared" / "datasets")) / "bccd"
STRIDE, MARGIN, PER_IMAGE = 64, 4, 2
TEST_SHARE = 0.25


def boxes(xml_path: Path, name: str) -> list[tuple[int, int, int, int]]:
    out = []
    for obj in ET.parse(xml_path).getroot().iter("object"):
        if obj.findtext("name") == name:
            b = obj.find("bndbox")
            out.append(tuple(int(float(b.findtext(k))) for k in ("xmin", "ymin", "xmax", "ymax")))
    return out


def label_of(x: int, y: int, plts: list[tuple[int, int, int, int]], side: int) -> int | None:
    inside = any(
        x + MARGIN <= a and y + MARGIN <= b and c <= x + side - MARGIN and d <= y + side - MARGIN for a, b, c, d in plts
    )
    if inside:
        return 1
    touches = any(a < x + side and c > x and b < y + side and d > y for a, b, c, d in plts)
    return None if touches else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--side", type=int, default=128, help="crop side in px (128 or 256: a platelet is ~3 px at 28)")
    args = ap.parse_args()
    if not (BCCD / "Annotations").is_dir():
        raise SystemExit(f"no BCCD set at {BCCD}: set BUILDER_SHARED_DATASETS to the shared datasets folder")
    rng = np.random.default_rng(args.seed)
    side = args.side
    stems = sorted(
        p.stem for p in (BCCD / "Annotations").glob("*.xml") if (BCCD / "JPEGImages" / f"{p.stem}.jpg").exists()
    )
    test = set(rng.permutation(stems)[: round(TEST_SHARE * len(stems))].tolist())
    for sub in ("native", "px28"):
        (args.out / sub / "images").mkdir(parents=True, exist_ok=True)
    rows = []
    for stem in stems:
        plts = boxes(BCCD / "Annotations" / f"{stem}.xml", "Platelets")
        with Image.open(BCCD / "JPEGImages" / f"{stem}.jpg") as im:
            img = im.convert("RGB")
        w, h = img.size
        grid = [(x, y) for y in range(0, h - side + 1, STRIDE) for x in range(0, w - side + 1, STRIDE)]
        by_label: dict[int, list] = {0: [], 1: []}
        for x, y in grid:
            lab = label_of(x, y, plts, side)
            if lab is not None:
                by_label[lab].append((x, y))
        for lab in (1, 0):
            cells = by_label[lab]
            for k in rng.permutation(len(cells))[:PER_IMAGE]:
                x, y = cells[int(k)]
                crop = img.crop((x, y, x + side, y + side))
                name = f"{stem}_{x}_{y}.png"
                crop.save(args.out / "native" / "images" / name)
                crop.resize((28, 28), Image.Resampling.BILINEAR).save(args.out / "px28" / "images" / name)
                rows.append((stem, f"images/{name}", lab, "test" if stem in test else "trainval"))
    for sub in ("native", "px28"):
        with open(args.out / sub / "labels.csv", "w", newline="") as fh:
            wr = csv.writer(fh)
            wr.writerow(["source", "image", "platelet"])
            wr.writerows(r[:3] for r in rows)
    split = {
        "test": sorted(test),
        "trainval": sorted(set(stems) - test),
        "counts": {
            part: {str(lab): sum(1 for r in rows if r[3] == part and r[2] == lab) for lab in (0, 1)}
            for part in ("trainval", "test")
        },
    }
    (args.out / "split.json").write_text(json.dumps(split, indent=1))
    print(json.dumps(split["counts"]))


if __name__ == "__main__":
    main()
