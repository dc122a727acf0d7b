"""Issue 52 item 2's rule, measured: on a native-resolution set, the model built from the images at their own size
must not score below the model built from the same images shrunk to 28 px.

The set: bench/vision-native-size/make_bccd_patches.py (128x128 blood-smear crops, platelet present or not; a fixed
test quarter of the photographs). Arms, each over the same seeds and alternated within a seed:
  change-native  this branch, the 128-px crops (the size is chosen by measurement, size_plan.py)
  main-native    main's pipeline, the same 128-px crops (a fixed cap: best mode trains at 128 px)
  change-28      this branch, the same crops shrunk to 28 px (28 px is below 64: no size choice, same as main)
The seed varies the train/validation split of the training photographs, the folds, initialisation and augmentation;
the test photographs never change and nothing is tuned on them.

  flock /tmp/builder-heavy.lock pipelines/.venv/bin/python bench/vision-native-size/ab.py \\
      --set /tmp/bccd-patches --main-src /tmp/main-src/pipelines --change-src pipelines --budget 90 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def spec_for(folder: Path, split: dict, seed: int, budget: float, out: Path) -> dict:
    rng = np.random.default_rng(seed)
    train = [str(s) for s in rng.permutation(split["trainval"])]
    n_val = round(0.15 * len(train))
    return {
        "schema_version": 1,
        "job_id": "bench-native-size",
        "command": "train",
        "kind": "vision_classification",
        "problem": "binary",
        "data": {
            "root": str(folder),
            "table": str(folder / "labels.csv"),
            "id_col": "source",
            "images_col": "image",
            "label_cols": ["platelet"],
        },
        "split": {"seed": seed, "train": train[n_val:], "val": train[:n_val], "test": split["test"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "positive_class": "1",
        "budget": {"mode": "best", "time_budget_s": budget},
        "seed": seed,
        "device": "cpu",
        "out_dir": str(out),
        "options": {},
    }


def run_arm(src: Path, spec: dict, work: Path, tag: str) -> dict:
    spec_path = work / f"spec-{tag}.json"
    spec_path.write_text(json.dumps(spec))
    t0 = time.monotonic()
    with open(work / f"events-{tag}.jsonl", "w") as out_fh, open(work / f"stderr-{tag}.log", "w") as err_fh:
        code = subprocess.call(
            [sys.executable, "-m", "builder_pipelines", "train", "--spec", str(spec_path), "--out", spec["out_dir"]],
            stdout=out_fh,
            stderr=err_fh,
            env={**os.environ, "PYTHONPATH": str(src)},
        )
    wall = time.monotonic() - t0
    if code != 0:
        raise SystemExit(f"{tag}: exit {code}\n{(work / f'stderr-{tag}.log').read_text()[-2000:]}")
    m = json.loads((Path(spec["out_dir"]) / "manifest.json").read_text())
    logs = [json.loads(x)["message"] for x in (work / f"events-{tag}.jsonl").read_text().splitlines() if '"log"' in x]
    auc = m["metrics"]["test"]["auc"]
    sel = m["model_summary"].get("selection")
    size = m["model_summary"].get("input_size")
    return {
        "tag": tag,
        "wall_s": round(wall, 1),
        "test_auc": round(auc["value"], 4),
        "ci": [round(auc["ci_low"], 4), round(auc["ci_high"], 4)],
        "oof_or_val_auc": round(m["metrics"]["validation"]["auc"]["value"], 4),
        "side": m["input"]["image"]["width"],
        "size_why": size["why"] if size else None,
        "size_probes": size["probes"] if size else None,
        "method": sel["method"] if sel else "search on the validation split",
        "plan": sel["plan"] if sel else next((x for x in logs if "plan:" in x), ""),
        "ensemble": m["model_summary"]["ensemble_size"],
        "seconds": m["model_summary"]["seconds"],
        "threads_line": next((x for x in logs if "threads" in x), ""),
        "loadavg_after": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", type=Path, required=True, help="the folder make_bccd_patches.py wrote")
    ap.add_argument("--main-src", type=Path, required=True, help="pipelines/ folder of main (before)")
    ap.add_argument("--change-src", type=Path, required=True, help="pipelines/ folder of the change (after)")
    ap.add_argument("--budget", type=float, default=90)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--arms", nargs="+", default=["change-native", "main-native", "change-28"])
    ap.add_argument("--out", type=Path, default=Path("bench/vision-native-size/results.jsonl"))
    args = ap.parse_args()
    split = json.loads((args.set / "split.json").read_text())
    src = {"main": args.main_src.resolve(), "change": args.change_src.resolve()}
    with tempfile.TemporaryDirectory(prefix="bench-native-size-") as tmp:
        work = Path(tmp)
        for i, seed in enumerate(args.seeds):
            order = args.arms[i % len(args.arms) :] + args.arms[: i % len(args.arms)]  # rotated: alternated
            for arm in order:
                code, images = arm.split("-")
                folder = args.set / ("px28" if images == "28" else "native")
                tag = f"{arm}-s{seed}"
                spec = spec_for(folder, split, seed, args.budget, work / f"out-{tag}")
                r = run_arm(src[code], spec, work, tag)
                r.update(arm=arm, seed=seed, budget=args.budget, at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
                print(json.dumps(r), flush=True)
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
