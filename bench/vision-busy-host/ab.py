"""Issue 52, reduced A/B: the PneumoniaMNIST-sized best-mode build on a busy host, before (main) and after (this
branch) the plan's ladder, alternated, over seeds.

There is no PneumoniaMNIST on this machine, so the set is made from BreastMNIST's 624 images as in
bench/vision-medmnist/large_synthetic.py, with one change so that the test AUC means something: the 624 sources are
first split (stratified, by seed) into 156 test sources and 468 training sources; the train + validation images are
augmented copies of the training sources only (left-right flip, shift up to 2 px, Gaussian noise), and the test
images are the 156 held-out sources as they are. 156 test images give intervals about +-0.05 wide: a difference of
a few hundredths between arms is within the noise of one run.

The competing load: --load-procs Python busy loops (default 2) at --load-nice (default 19: other work at lower
priority, as in the issue; 0: work at the build's own priority, e.g. another build), started 5 s before each build
and stopped after it. The host is also shared with other sessions' work, which is not controlled.

Run (under the heavy lock):
  flock /tmp/builder-heavy.lock pipelines/.venv/bin/python bench/vision-busy-host/ab.py \
      --main-src /tmp/images-main-src/pipelines --change-src pipelines --budget 240 --seeds 0 1
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
NPZ = (
    Path(os.environ.get("BUILDER_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))
    / "breastmnist"
    / "breastmnist_trainval.npz"
)
LOAD_PROCS = 2


def make_set(root: Path, n_train_val: int, seed: int) -> dict[str, list[str]]:
    data = np.load(NPZ)
    images = np.concatenate([data["train_images"], data["val_images"]])
    labels = np.concatenate([data["train_labels"], data["val_labels"]]).ravel()
    rng = np.random.default_rng(seed)
    test_src = np.concatenate(
        [rng.permutation(np.flatnonzero(labels == c))[: round(0.25 * (labels == c).sum())] for c in np.unique(labels)]
    )
    train_src = np.setdiff1d(np.arange(len(labels)), test_src)
    folder = root / "set"
    (folder / "images").mkdir(parents=True)
    rows, ids = [], {"train": [], "test": []}
    for i in range(n_train_val):
        src = int(rng.choice(train_src))
        img = images[src].astype(np.float32)
        if rng.random() < 0.5:
            img = img[:, ::-1]
        img = np.roll(img, (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
        img = np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)
        rows.append((f"tr{i:05d}", img, int(labels[src])))
    for src in test_src:
        rows.append((f"te{int(src):05d}", images[src], int(labels[src])))
    with open(folder / "labels.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["patient_id", "image", "label"])
        for pid, img, label in rows:
            Image.fromarray(img, "L").save(folder / "images" / f"{pid}.png")
            w.writerow([pid, f"images/{pid}.png", label])
            ids["test" if pid.startswith("te") else "train"].append(pid)
    return ids


def spec_for(work: Path, ids: dict, seed: int, budget: float, out: Path) -> dict:
    rng = np.random.default_rng(seed)
    train = list(rng.permutation(ids["train"]))
    n_val = round(0.15 * len(train))
    return {
        "schema_version": 1,
        "job_id": "bench-busy-host",
        "command": "train",
        "kind": "vision_classification",
        "problem": "binary",
        "data": {
            "root": str(work / "set"),
            "table": str(work / "set" / "labels.csv"),
            "id_col": "patient_id",
            "images_col": "image",
            "label_cols": ["label"],
        },
        "split": {"seed": seed, "train": train[n_val:], "val": train[:n_val], "test": ids["test"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": "best", "time_budget_s": budget},
        "seed": seed,
        "device": "cpu",
        "out_dir": str(out),
        "options": {},
    }


def run_arm(src: Path, spec: dict, work: Path, tag: str, load_procs: int = LOAD_PROCS, load_nice: int = 19) -> dict:
    spec_path = work / f"spec-{tag}.json"
    spec_path.write_text(json.dumps(spec))
    busy = [sys.executable, "-c", "while True: pass"]
    load = [subprocess.Popen(["nice", "-n", str(load_nice), *busy]) for _ in range(load_procs)]
    time.sleep(5)  # let the load average see the load, as it would on a host already busy
    t0 = time.monotonic()
    try:
        with open(work / f"events-{tag}.jsonl", "w") as out_fh, open(work / f"stderr-{tag}.log", "w") as err_fh:
            code = subprocess.call(
                [
                    sys.executable,
                    "-m",
                    "builder_pipelines",
                    "train",
                    "--spec",
                    str(spec_path),
                    "--out",
                    spec["out_dir"],
                ],
                stdout=out_fh,
                stderr=err_fh,
                env={**os.environ, "PYTHONPATH": str(src)},
            )
    finally:
        for p in load:
            p.terminate()
            p.wait()
    wall = time.monotonic() - t0
    if code != 0:
        raise SystemExit(f"{tag}: exit {code}\n{(work / f'stderr-{tag}.log').read_text()[-2000:]}")
    m = json.loads((Path(spec["out_dir"]) / "manifest.json").read_text())
    logs = [json.loads(x)["message"] for x in (work / f"events-{tag}.jsonl").read_text().splitlines() if '"log"' in x]
    auc = m["metrics"]["test"]["auc"]
    sel = m["model_summary"].get("selection")
    return {
        "tag": tag,
        "wall_s": round(wall, 1),
        "test_auc": round(auc["value"], 4),
        "ci": [round(auc["ci_low"], 4), round(auc["ci_high"], 4)],
        "oof_or_val_auc": round(m["metrics"]["validation"]["auc"]["value"], 4),
        "method": sel["method"] if sel else "search on the validation split",
        "plan": sel["plan"] if sel else next((x for x in logs if "plan:" in x), ""),
        "ensemble": m["model_summary"]["ensemble_size"],
        "seconds": m["model_summary"]["seconds"],
        "threads_line": next((x for x in logs if "threads" in x), ""),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--main-src", type=Path, required=True, help="pipelines/ folder of main (before)")
    ap.add_argument("--change-src", type=Path, required=True, help="pipelines/ folder of the change (after)")
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--n-train-val", type=int, default=5232)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--load-procs", type=int, default=LOAD_PROCS, help="competing busy loops")
    ap.add_argument("--load-nice", type=int, default=19, help="their niceness (19: lower priority; 0: as the build)")
    ap.add_argument("--out", type=Path, default=Path("bench/vision-busy-host/results.jsonl"))
    args = ap.parse_args()
    arms = {"main": args.main_src.resolve(), "change": args.change_src.resolve()}
    with tempfile.TemporaryDirectory(prefix="bench-busy-host-") as tmp:
        work = Path(tmp)
        ids = make_set(work, args.n_train_val, 0)  # one set; the seeds vary split, folds, init and augmentation
        for i, seed in enumerate(args.seeds):
            order = ["main", "change"] if i % 2 == 0 else ["change", "main"]  # alternated
            for arm in order:
                tag = f"{arm}-s{seed}"
                spec = spec_for(work, ids, seed, args.budget, work / f"out-{tag}")
                r = run_arm(arms[arm], spec, work, tag, args.load_procs, args.load_nice)
                r.update(
                    arm=arm,
                    seed=seed,
                    budget=args.budget,
                    load=f"{args.load_procs} x nice {args.load_nice}",
                    at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                )
                print(json.dumps(r), flush=True)
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
