"""Benchmark: BCCD through the detection pipeline's CLI (train on train.txt, held-out = val.txt).

    pipelines/.venv/bin/python bench/detection-bccd/run.py [--mode fast|best|both] [--threads 2] [--http]

An internal validation split (15% of train.txt, seeded) chooses the epoch and the served threshold;
val.txt is the test split, so the printed figures are held-out. Prints mAP@0.5 and mAP@0.5:0.95 per
class and overall, wall time and the pipeline process's peak memory. Also writes bccd_upload.zip,
the VOC zip a user would upload. With --http the zip goes through Builder's HTTP API instead (a
`./builder serve` of its own): upload, POST /v1/experiments, poll to `ready`; Builder then makes its own
patient-grouped 70/15/15 split of trainval, so the printed test set is Builder's 15 %, not val.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from bccd import image_ids, write_normalised_csv, write_user_zip  # noqa: E402

BUDGETS = {"fast": 300, "best": 1800}  # seconds: the targets (5 and 30 minutes)


def run_mode(mode: str, voc: str, work: str, threads: int, seed: int, device: str) -> dict:
    train_ids, test_ids = image_ids(voc, "train"), image_ids(voc, "val")
    shuffled = train_ids[:]
    random.Random(seed).shuffle(shuffled)
    n_val = round(0.15 * len(shuffled))
    table = os.path.join(work, "bccd_boxes.csv")
    skipped = write_normalised_csv(voc, train_ids + test_ids, table)
    spec = {
        "schema_version": 1,
        "job_id": f"bench-bccd-{mode}",
        "command": "train",
        "kind": "detection",
        "problem": "detection",
        "data": {"root": voc, "table": table, "id_col": "patient", "images_col": "image", "label_cols": ["label"]},
        "split": {"seed": seed, "train": sorted(shuffled[n_val:]), "val": sorted(shuffled[:n_val]), "test": test_ids},
        # As the server sends for a detection study with optimization_metric F-macro (the contract's spec schema).
        "metric": "map50",
        "threshold_metric": "f_macro",
        "budget": {"mode": mode, "time_budget_s": BUDGETS[mode]},
        "seed": seed,
        "device": device,
        "out_dir": os.path.join(work, mode),
        "options": {"threads": threads},
    }
    spec_path = os.path.join(work, f"spec-{mode}.json")
    with open(spec_path, "w") as fh:
        json.dump(spec, fh)
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "pipelines")}
    t0 = time.monotonic()
    with (
        open(os.path.join(work, f"events-{mode}.jsonl"), "w") as ev,
        open(os.path.join(work, f"stderr-{mode}.log"), "w") as err,
    ):
        rc = subprocess.call(
            [sys.executable, "-m", "builder_pipelines", "train", "--spec", spec_path, "--out", spec["out_dir"]],
            stdout=ev,
            stderr=err,
            env=env,
        )
    wall = time.monotonic() - t0
    if rc != 0:
        raise SystemExit(f"{mode}: pipeline exited {rc}; see {work}/stderr-{mode}.log")
    with open(os.path.join(spec["out_dir"], "manifest.json")) as fh:
        manifest = json.load(fh)
    return {
        "mode": mode,
        "wall_s": wall,
        "skipped_boxes": skipped,
        "manifest": manifest,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def run_http(mode: str, zip_path: str, seed: int) -> dict:
    """The whole experiment through the HTTP API; the server passes its own thread count to the pipeline."""
    from http_experiment import run_experiment  # noqa: PLC0415

    body = {
        "label_cols": ["cell"],
        "images_col": "image",
        "model_type": 0,
        "optimization_type": 1 if mode == "fast" else 0,
        "experiment_id": 1,
        "study_type": "Builder",
        "task": "vision",
        "type_of_experiment": "detection",
        "optimization_metric": "F-macro",
        "time_budget_s": BUDGETS[mode],
    }
    r = run_experiment(zip_path, body, label=f"bccd-{mode}")
    if r["manifest"] is None:
        raise SystemExit("ready, but the published manifest was not found in the bucket folder")
    return {
        "mode": mode,
        "wall_s": r["wall_s"],
        "manifest": r["manifest"],
        "peak_rss_mb": r["peak_rss_mib"],
        "where": "Builder's own test split via the HTTP API",
        "tree": True,
    }


def report(r: dict) -> None:
    m = r["manifest"]
    classes = {str(c["index"]): c["name"] for c in m["classes"]}
    t = m["metrics"]["test"]
    rss = "peak RSS of server + pipeline tree" if r.get("tree") else "peak RSS (max over runs so far)"
    print(
        f"\n== BCCD {r['mode']} mode: {r.get('where', 'held-out val.txt')} ({m['provenance']['split_counts']['test']} images), "
        f"wall {r['wall_s']:.0f}s, {rss} {r['peak_rss_mb']:.0f} MB, "
        f"{m['model_summary']['epochs']} epochs, input {m['input']['image']['width']}x{m['input']['image']['height']}"
    )
    print(f"{'class':<12}{'AP@0.5':>10}{'AP@.5:.95':>12}{'precision':>11}{'recall':>9}")
    for k, name in classes.items():
        row = [t[x]["per_class"][k]["value"] for x in ("map50", "map50_95", "precision", "recall")]
        print(f"{name:<12}" + "".join(f"{v:>10.3f}" if v is not None else f"{'-':>10}" for v in row))
    ci = lambda x: f"{t[x]['value']:.3f} [{t[x]['ci_low']:.3f}, {t[x]['ci_high']:.3f}]"  # noqa: E731
    print(
        f"overall     mAP@0.5 {ci('map50')}  mAP@0.5:0.95 {ci('map50_95')}  "
        f"P {t['precision']['value']:.3f} R {t['recall']['value']:.3f}  served: {m['detection']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["fast", "best", "both"], default="both")
    ap.add_argument("--voc", default=os.path.join(ROOT, "..", "shared", "datasets", "bccd"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--device", choices=["cpu", "cuda", "auto"], default="cpu", help="the spec's device (auto: CUDA if present)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default=None, help="folder for the spec, CSV, outputs (default: a temp folder)")
    ap.add_argument("--http", action="store_true", help="run whole experiments through `./builder serve`'s HTTP API")
    args = ap.parse_args()
    voc = os.path.abspath(args.voc)
    if not os.path.isdir(os.path.join(voc, "Annotations")):
        raise SystemExit(f"BCCD not found at {voc} (expected ../shared/datasets/bccd)")
    work = args.work or tempfile.mkdtemp(prefix="bccd-bench-")
    os.makedirs(work, exist_ok=True)
    zip_path = os.path.join(work, "bccd_upload.zip")
    files = write_user_zip(voc, image_ids(voc, "trainval"), zip_path)
    print(f"work folder {work} (bccd_upload.zip = BCCD train+val exactly as published, {files} files)")
    for mode in ["fast", "best"] if args.mode == "both" else [args.mode]:
        if args.http:
            report(run_http(mode, zip_path, args.seed))
        else:
            report(run_mode(mode, voc, work, args.threads, args.seed, args.device))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
