"""Times best mode on a PneumoniaMNIST-sized image set (issue 15): the cross-fitted ensemble's plan for sets above
3,000 images, its wall time against the budget and the pipeline's peak memory.

There is no PneumoniaMNIST here, so the set is made from BreastMNIST's 624 images: each synthetic image is a
random source image, flipped left-right at random, shifted by up to 2 pixels and given Gaussian noise, with the
source's label; one anonymous patient per image. Sizes as PneumoniaMNIST's: 5,232 train + validation images
(the bench's 85/15 patient split of them) and 624 test images, 28x28 grey. The test images are made from the same
624 sources, so the test AUC printed here MEANS NOTHING about quality and must not be quoted as such: this script
measures time and memory only.

Run: pipelines/.venv/bin/python bench/vision-medmnist/large_synthetic.py [--n-train-val 5232] [--n-test 624] [--seed 0] [--mode best|fast] [--colour] [--budget S]
Timed (the shared lock, not niced): flock /tmp/builder-bench.lock pipelines/.venv/bin/python bench/vision-medmnist/large_synthetic.py
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BUDGET_S, NPZ, run_mode  # noqa: E402


def make_synthetic(root: Path, n_train_val: int, n_test: int, seed: int, colour: bool = False) -> dict[str, list[str]]:
    """Writes root/breastmnist/labels.csv (patient_id,image,label) + PNGs; returns the patient ids per part.
    ``colour``: RGB PNGs, each grey image tinted by a random colour (3 input channels, as PathMNIST's)."""
    data = np.load(NPZ)
    images = np.concatenate([data["train_images"], data["val_images"]])
    labels = np.concatenate([data["train_labels"], data["val_labels"]]).ravel()
    rng = np.random.default_rng(seed)
    folder = root / "breastmnist"
    (folder / "images").mkdir(parents=True)
    rows, ids = [], {"train": [], "test": []}
    for part, count in (("train", n_train_val), ("test", n_test)):
        for i in range(count):
            src = int(rng.integers(0, len(images)))
            img = images[src].astype(np.float32)
            if rng.random() < 0.5:
                img = img[:, ::-1]
            img = np.roll(img, (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
            img = np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)
            pid = f"{part[:2]}{i:05d}"
            name = f"images/{pid}.png"
            if colour:
                tint = rng.uniform(0.6, 1.0, 3)
                Image.fromarray((img[..., None] * tint).astype(np.uint8), "RGB").save(folder / name)
            else:
                Image.fromarray(img, "L").save(folder / name)
            rows.append({"patient_id": pid, "image": name, "label": int(labels[src])})
            ids[part].append(pid)
    with open(folder / "labels.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["patient_id", "image", "label"])
        writer.writeheader()
        writer.writerows(rows)
    return ids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--n-train-val", type=int, default=5232, help="train + validation images (PneumoniaMNIST: 4708 + 524)"
    )
    ap.add_argument("--n-test", type=int, default=624)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads; 0 = the pipeline default (free cores)")
    ap.add_argument("--mode", choices=("best", "fast"), default="best")
    ap.add_argument("--colour", action="store_true", help="RGB images (a random tint each), as PathMNIST's")
    ap.add_argument("--budget", type=float, help="the pipeline's time budget in seconds (default: the mode's)")
    args = ap.parse_args()
    if args.budget:
        BUDGET_S[args.mode] = args.budget  # run_mode reads the budget from this table
    if not NPZ.is_file():
        raise SystemExit(f"{NPZ} not found (the shared datasets folder is absent)")
    with tempfile.TemporaryDirectory(prefix="bench-large-synthetic-") as tmp:
        work = Path(tmp)
        ids = make_synthetic(work, args.n_train_val, args.n_test, args.seed, args.colour)
        r = run_mode(args.mode, work, ids, args.seed, args.threads)
    m = r["manifest"]
    summary = m["model_summary"]
    sel = summary.get("selection")
    print(
        f"== synthetic {args.n_train_val} {'colour' if args.colour else 'grey'} train + validation images, {args.mode} mode, budget {BUDGET_S[args.mode]} s, seed {args.seed}"
    )
    print(
        f"   wall {r['wall_s']:.1f} s   peak RSS of the pipeline process {r['peak_rss_mib']:.0f} MiB   "
        f"ensemble {summary['ensemble_size']} models   flip TTA {summary['flip_tta']}   seconds {summary['seconds']}"
    )
    if sel is None:
        print("   no cross-fitted plan: the search on the validation split was used")
    else:
        print(f"   plan: {sel['plan']}")
        for c in sel["candidates"]:
            print(
                f"     round {c['round']} {c['architecture']}: {c['models']} models, epochs {c['epochs']}; {c['why']}"
            )
        print(f"   test-time augmentation: {sel['test_time_augmentation']['why']}")
    print(
        "   (the AUCs of this synthetic set measure nothing: its test images come from the same sources as its training images)"
    )
    for line in r["logs"]:
        print(f"     {line}")


if __name__ == "__main__":
    main()
