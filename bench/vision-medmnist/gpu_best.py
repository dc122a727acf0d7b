"""Best mode on a PneumoniaMNIST-sized set on a GPU (issue 43 item 5): images/s, rounds completed, AUC.

One script for a lent GPU host (no network, no ../shared datasets): give it the folder that holds
breastmnist_trainval.npz. It builds a large_synthetic-style set (shift_bench.make_set "large": 5,232 training +
validation images drawn from BreastMNIST's official train part, 624 test images from its official validation part,
so the test images are never copies of training sources; 28 px grey), runs the vision pipeline's best mode on it
(spec device ``auto`` unless --device), and prints:

  - the plan, rounds completed and epochs per model, and how the budget was spent (the report's seconds);
  - training images per second (epochs x images per fold model, over the training seconds);
  - the test AUC (internal: the official validation images as they are) and the shifted AUC (the same images
    under four acquisition shifts, shift_bench.SHIFTS), and the wall time against the budget.

The whole script should end in about the budget + 40-60 s (writing the set, starting Python and CUDA, scoring the
shifted images): about 6 minutes with the default 300 s budget. Not yet run on a GPU when written (2026-11-27); on
this 2-core CPU only as a check of the script.

  python3 bench/vision-medmnist/gpu_best.py --data /path/to/breastmnist            # on the GPU host
  pipelines/.venv/bin/python bench/vision-medmnist/gpu_best.py --device cpu --budget 60 --n-train 3200 --n-test 200
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402
import shift_bench  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="folder holding breastmnist_trainval.npz (default: ../shared/datasets/breastmnist)")
    ap.add_argument("--budget", type=float, default=300, help="the pipeline's time budget, seconds")
    ap.add_argument("--n-train", type=int, default=5232, help="training + validation images (PneumoniaMNIST: 5,232)")
    ap.add_argument("--n-test", type=int, default=624)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto", help="the spec's device: auto (cuda when present), cuda or cpu")
    ap.add_argument("--threads", type=int, default=0, help="torch threads; 0 = the pipeline's choice")
    args = ap.parse_args()
    if args.data:
        npz = Path(args.data) / "breastmnist_trainval.npz"
        bench.NPZ = shift_bench.NPZ = npz
    if not shift_bench.NPZ.is_file():
        raise SystemExit(f"{shift_bench.NPZ} not found: pass --data FOLDER holding breastmnist_trainval.npz")
    import torch  # noqa: PLC0415

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print(
        f"# host: {platform.node()}  python {platform.python_version()}  torch {torch.__version__}  cuda available "
        f"{torch.cuda.is_available()}  gpu {gpu}  cpu cores {os.cpu_count()}",
        flush=True,
    )
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-gpu-best-") as tmp:
        root = Path(tmp)
        split = shift_bench.make_set(root, "large", args.seed, args.n_train, args.n_test)
        print(
            f"# set written in {time.monotonic() - t0:.1f} s: {len(split['train'])}/{len(split['val'])}/{len(split['test'])} train/val/test images",
            flush=True,
        )
        r = shift_bench.run_one(root, split, "today", args.seed, "best", args.budget, args.threads, args.device)
    m = r["manifest"]
    summary = m["model_summary"]
    sel = summary.get("selection")
    spent = summary["seconds"]
    print(
        f"== best mode, {args.n_train} train + validation images (28 px grey), budget {args.budget:g} s, device {summary['device']}"
    )
    print(f"   pipeline wall {r['wall']:.1f} s of the {args.budget:g} s budget; seconds spent: {spent}")
    if sel is None:
        print("   no cross-fitted plan: the search on the validation split was used")
        trained = sum(t["epochs"] for t in summary["trials"]) * len(split["train"])
    else:
        print(f"   plan: {sel['plan']}")
        k, rows = sel["folds"], sel["rows"]
        for c in sel["candidates"]:
            print(
                f"     round {c['round']} {c['architecture']}: {c['models']} models, epochs {c['epochs']}; {c['why']}"
            )
        print(
            f"   rounds completed: {len(sel['candidates'])}   models in the published graph: {summary['ensemble_size']}"
        )
        trained = sum(sum(c["epochs"]) for c in sel["candidates"]) * rows * (k - 1) / k
    print(
        f"   training images per second: {trained / max(spent['search'], 1e-9):.0f} ({trained:.0f} images in {spent['search']:.1f} s)"
    )
    shifts = " ".join(f"{s} {v:.3f}" for s, v in r["by_shift"].items())
    print(f"   test AUC {r['internal']:.3f} (internal: {len(split['test'])} images, sources disjoint from training)")
    print(f"   shifted test AUC {r['shifted']:.3f} (mean of: {shifts})")
    print(
        f"   manifest test AUC {m['metrics']['test']['auc']['value']:.3f} [{m['metrics']['test']['auc']['ci_low']:.3f}, {m['metrics']['test']['auc']['ci_high']:.3f}]"
    )
    print(f"   whole script {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
