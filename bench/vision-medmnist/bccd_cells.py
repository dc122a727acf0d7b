"""Blood-cell classification from BCCD crops: a real multi-class colour set at MedMNIST's 28 px, for the vision
pipeline's multiclass path (BloodMNIST, DermaMNIST and PathMNIST are colour and multi-class; BreastMNIST, the only
MedMNIST set here, is grey and binary).

Every box of ../shared/datasets/bccd (RBC, WBC, Platelets) becomes one 28x28 RGB crop: a square around the box,
10 % larger than its longer side, resized with Pillow's LANCZOS. All crops of one slide image belong to one
"patient", so no slide is in two parts. The official val list (87 slides) is the test set; the official train list
(205 slides) is split 85/15 into train / validation by slide, seeded. The classes keep their natural imbalance
(about 13 red cells to each white cell or platelet), as real data would.

    flock /tmp/builder-bench.lock pipelines/.venv/bin/python bench/vision-medmnist/bccd_cells.py --modes fast --seeds 0,1,2

Prints per seed and mode the test macro AUC, per-class AUC, accuracy and F-macro with their slide-bootstrap 95 %
intervals, the wall time and the pipeline's peak RSS, then the means over seeds.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from bench import BUDGET_S, ROOT, patient_split, run_spec
from PIL import Image

BCCD = ROOT.parent / "shared" / "datasets" / "bccd"
SIDE = 28
CLASSES = ("RBC", "WBC", "Platelets")


def _boxes(image_id: str) -> list[tuple[str, int, int, int, int]]:
    root = ET.parse(BCCD / "Annotations" / f"{image_id}.xml").getroot()
    out = []
    for obj in root.iter("object"):
        name, box = obj.findtext("name").strip(), obj.find("bndbox")
        x1, y1, x2, y2 = (int(float(box.findtext(k))) for k in ("xmin", "ymin", "xmax", "ymax"))
        if name in CLASSES and x2 > x1 and y2 > y1:
            out.append((name, x1, y1, x2, y2))
    return out


def make_folder(root: Path) -> dict[str, list[str]]:
    """Writes cells/labels.csv (slide, image, cell) and cells/images/*.png; returns the slide ids per official list."""
    ids = {part: (BCCD / "ImageSets" / "Main" / f"{part}.txt").read_text().split() for part in ("train", "val")}
    (root / "images").mkdir(parents=True)
    rows = []
    for slides in ids.values():
        for slide in slides:
            img = Image.open(BCCD / "JPEGImages" / f"{slide}.jpg").convert("RGB")
            for k, (name, x1, y1, x2, y2) in enumerate(_boxes(slide)):
                cx, cy, half = (x1 + x2) / 2, (y1 + y2) / 2, max(x2 - x1, y2 - y1) * 0.55
                crop = img.crop((round(cx - half), round(cy - half), round(cx + half), round(cy + half)))
                path = f"images/{slide}_{k:03d}.png"
                crop.resize((SIDE, SIDE), Image.LANCZOS).save(root / path)
                rows.append({"slide": slide, "image": path, "cell": name})
    with open(root / "labels.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["slide", "image", "cell"])
        w.writeheader()
        w.writerows(rows)
    counts = {c: sum(r["cell"] == c for r in rows) for c in CLASSES}
    print(f"{len(rows)} crops from {sum(map(len, ids.values()))} slides: {counts}")
    return {"train": [s for s in ids["train"] if _boxes(s)], "test": [s for s in ids["val"] if _boxes(s)]}


def run_mode(mode: str, work: Path, ids: dict, seed: int) -> dict:
    train, val = patient_split(ids["train"], seed)
    out = work / f"out-{mode}-{seed}"
    spec = {
        "schema_version": 1,
        "job_id": f"bench-bccd-cells-{mode}",
        "command": "train",
        "kind": "vision_classification",
        "problem": "multiclass",
        "data": {
            "root": str(work / "cells"),
            "table": str(work / "cells" / "labels.csv"),
            "id_col": "slide",
            "images_col": "image",
            "label_cols": ["cell"],
        },
        "split": {"seed": seed, "train": train, "val": val, "test": ids["test"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": mode, "time_budget_s": BUDGET_S[mode]},
        "seed": seed,
        "device": "auto",
        "out_dir": str(out),
    }
    return {**run_spec(spec, work, f"{mode}-{seed}"), "seed": seed}


def _fmt(m: dict) -> str:
    return f"{m['value']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="fast")
    ap.add_argument("--seeds", default="0", help="comma-separated; each splits the train slides anew")
    args = ap.parse_args()
    if not BCCD.is_dir():
        print(f"skipped: {BCCD} is absent")
        return
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ids = make_folder(work / "cells")
        for seed in (int(s) for s in args.seeds.split(",")):
            for mode in args.modes.split(","):
                r = run_mode(mode, work, ids, seed)
                t = r["manifest"]["metrics"]["test"]
                names = {str(c["index"]): c["name"] for c in r["manifest"]["classes"]}
                per = ", ".join(
                    f"{names.get(c, c)} {v['value']:.3f}"
                    for c, v in (t["auc"].get("per_class") or {}).items()
                    if v and v["value"] is not None
                )
                summary = r["manifest"].get("model_summary") or {}
                rounds = [
                    f"{c['architecture']} x{c['models']} ({c['why']})"
                    for c in (summary.get("selection") or {}).get("candidates", [])
                ]
                how = (
                    "; ".join(rounds)
                    if rounds
                    else f"ensemble of {summary.get('ensemble_size')} of {len(summary.get('trials', []))} trials"
                )
                print(
                    f"seed {seed} {mode}: macro AUC {_fmt(t['auc'])} (per class: {per}); accuracy {_fmt(t['accuracy'])}; "
                    f"F-macro {_fmt(t['f_macro'])}; {r['wall_s']:.1f} s (budget {BUDGET_S[mode]} s), peak RSS "
                    f"{r['peak_rss_mib']:.0f} MiB; {how}"
                )
                results.append(r)
    for mode in args.modes.split(","):
        rs = [r for r in results if r["mode"] == mode]
        mean = lambda k: np.mean([r["manifest"]["metrics"]["test"][k]["value"] for r in rs])  # noqa: E731
        print(
            f"{mode}, mean of {len(rs)}: macro AUC {mean('auc'):.3f}, accuracy {mean('accuracy'):.3f}, F-macro {mean('f_macro'):.3f}, "
            f"wall {np.mean([r['wall_s'] for r in rs]):.1f} s, peak RSS max {max(r['peak_rss_mib'] for r in rs):.0f} MiB"
        )


if __name__ == "__main__":
    main()
