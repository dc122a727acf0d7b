"""BreastMNIST from PNGs against the same images as DICOMs (issue 41): the test AUC of both builds, same seed.

The DICOMs are written by test/helpers/make_dicoms.py from the benchmark's PNGs: 12-bit (stored = 16 g + 8,
intercept -1024) with a window (c 1024.5, w 4081) that renders them back to the PNG's grey levels, the transfer
syntax cycling through the lossless ones (explicit/implicit VR little endian, explicit big endian, deflated, RLE,
JPEG-LS, JPEG 2000). Before training, every image's tensor is computed both ways with the pipeline's own
preprocessing and compared: equal tensors mean any AUC difference comes from training, not from the DICOM path.

Run: nice -n 10 pipelines/.venv/bin/python bench/vision-medmnist/dicom_auc.py --threads 1 [--seeds 0,1]

On a shared CPU the fast mode's 150 s budget ends the trials, so the two builds train different numbers of epochs
and their AUCs differ by that alone. With --budget large enough that every trial ends by early stopping or its
schedule (and on one thread, where PyTorch on the CPU is deterministic), the two builds are the same computation.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import zipfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "test" / "helpers"))
sys.path.insert(0, str(ROOT / "pipelines"))
import bench  # noqa: E402
import make_dicoms  # noqa: E402
from bench import NPZ, make_zip, patient_split, run_spec  # noqa: E402

from builder_pipelines.vision.preprocess import load_uint8  # noqa: E402


def dicom_copy(work: Path) -> Counter:
    """work/breastmnist (PNGs + labels.csv) -> work/breastmnist-dcm (DICOMs + the same table naming them)."""
    src, dst = work / "breastmnist", work / "breastmnist-dcm"
    entries = make_dicoms.from_pngs(str(src / "images"), str(dst / "images"))
    with open(src / "labels.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["image"] = r["image"].removesuffix(".png") + ".dcm"
    with open(dst / "labels.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return Counter(e["transfer_syntax_name"] for e in entries)


def same_pixels(work: Path, side: int) -> int:
    """Images whose decoded, resized uint8 differs between the PNG and the DICOM (expected: 0)."""
    record = {"modality_lut": True, "window": {"source": "file"}, "invert_monochrome1": True, "frames": "first"}
    differ = 0
    for png in sorted((work / "breastmnist" / "images").glob("*.png")):
        dcm = work / "breastmnist-dcm" / "images" / (png.stem + ".dcm")
        a = load_uint8(str(png), side, side, 1)
        b = load_uint8(str(dcm), side, side, 1, "bilinear", record)
        differ += int(not np.array_equal(a, b))
    return differ


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--threads", type=int, default=1, help="torch threads; 0 = the pipeline's default")
    ap.add_argument(
        "--budget",
        type=float,
        default=bench.BUDGET_S["fast"],
        help="seconds per build (default: bench.py's fast budget); large enough, every trial ends by early stopping "
        "or its schedule and not by the clock, and the two builds are comparable epoch for epoch",
    )
    ap.add_argument("--npz", default=str(NPZ), help="breastmnist_trainval.npz (default: ../shared/datasets)")
    args = ap.parse_args()
    if not Path(args.npz).is_file():
        raise SystemExit(f"{args.npz} not found (the shared datasets folder is absent)")
    diffs = []
    for seed in (int(s) for s in args.seeds.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-dicom-auc-") as tmp:
            work = Path(tmp)
            ids = make_zip(str(work / "breastmnist.zip"), args.npz, seed=seed)
            with zipfile.ZipFile(work / "breastmnist.zip") as zf:
                zf.extractall(work)
            syntaxes = dicom_copy(work)
            print(
                f"== seed {seed}: {sum(syntaxes.values())} DICOMs, "
                + ", ".join(f"{k} {n}" for k, n in syntaxes.items())
            )
            print(f"   images whose 28 px tensor differs PNG vs DICOM: {same_pixels(work, 28)}")
            # The same spec on both folders, run side by side (each with its own threads) so a shared host's load
            # falls on both alike.
            with ThreadPoolExecutor(2) as pool:
                png, dcm = pool.map(
                    lambda folder: run_spec(spec(work, folder, ids, seed, args), work, folder),
                    ["breastmnist", "breastmnist-dcm"],
                )
            auc = [r["manifest"]["metrics"]["test"]["auc"]["value"] for r in (png, dcm)]
            dicom = dcm["manifest"]["input"]["image"].get("dicom")
            diffs.append(auc[1] - auc[0])
            print(f"   PNG build:   test AUC {auc[0]:.4f}  wall {png['wall_s']:.1f} s  trials {_trials(png)}")
            print(f"   DICOM build: test AUC {auc[1]:.4f}  wall {dcm['wall_s']:.1f} s  trials {_trials(dcm)}")
            print(f"   difference (DICOM - PNG): {auc[1] - auc[0]:+.4f}   manifest input.image.dicom: {dicom}")
            for tag, r in (("PNG", png), ("DICOM", dcm)):
                for line in r["logs"]:
                    if line.startswith("trial"):
                        print(f"     {tag:5s} {line}")
            sys.stdout.flush()
    print(f"== mean difference over {len(diffs)} seed(s): {np.mean(diffs):+.4f} (target: within 0.005)")


def spec(work: Path, folder: str, ids: dict, seed: int, args) -> dict:
    """bench.py's fast-mode spec (split, seed, metric) on ``folder``, with --budget seconds."""
    train, val = patient_split(ids["train"], seed)
    return {
        "schema_version": 1,
        "job_id": f"bench-dicom-auc-{folder}",
        "command": "train",
        "kind": "vision_classification",
        "problem": "binary",
        "data": {
            "root": str(work / folder),
            "table": str(work / folder / "labels.csv"),
            "id_col": "patient_id",
            "images_col": "image",
            "label_cols": ["label"],
        },
        "split": {"seed": seed, "train": train, "val": val, "test": ids["test"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": "fast", "time_budget_s": args.budget},
        "seed": seed,
        "device": "auto",
        "out_dir": str(work / f"out-{folder}"),
        "options": {"threads": args.threads} if args.threads else {},
    }


def _trials(r: dict) -> str:
    return ", ".join(f"{t['architecture']} {t['epochs']} ep" for t in r["manifest"]["model_summary"]["trials"])


if __name__ == "__main__":
    main()
