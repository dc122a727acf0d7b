"""Benchmark of the tabular pipeline on WDBC and Pima against two baselines on the same split.

Run from the repository root:  nice pipelines/.venv/bin/python bench/tabular/run.py [--modes fast best]
It drives the real CLI (python -m builder_pipelines train) and prints, per dataset and mode, the test AUC
with its patient-level bootstrap 95% CI, the wall time, and the test AUC of LogisticRegression
(standardised) and LGBMClassifier() with default parameters, both fitted on the same train split.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "pipelines"
DATASETS = ROOT.parent / "shared" / "datasets"
sys.path.insert(0, str(PIPELINES))

from builder_pipelines.common import metrics as M  # noqa: E402
from builder_pipelines.tabular import DEFAULT_BUDGET_S  # noqa: E402

PIMA_COLS = ["pregnancies", "glucose", "blood_pressure", "skin_thickness", "insulin", "bmi", "diabetes_pedigree", "age"]


def load_wdbc(tmp: Path) -> tuple[Path, list[str], str]:
    src = DATASETS / "wdbc" / "data.csv"
    with open(src, newline="") as fh:
        header = next(csv.reader(fh))
    return src, [c for c in header if c not in ("id", "diagnosis")], "diagnosis"


def load_pima(tmp: Path) -> tuple[Path, list[str], str]:
    """Pima has no header and no id: add an id column and put the outcome second (the data-task layout)."""
    rows = list(csv.reader(open(DATASETS / "pima" / "pima-indians-diabetes.data.csv", newline="")))
    out = tmp / "pima.csv"
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "outcome"] + PIMA_COLS)
        for i, r in enumerate(r for r in rows if r):
            w.writerow([f"p{i + 1}", r[8]] + r[:8])
    return out, PIMA_COLS, "outcome"


def split(ids: list[str], y: list[str], seed: int) -> dict:
    """Seeded 70/15/15 patient split, stratified by label (one row per patient in both datasets)."""
    from sklearn.model_selection import train_test_split

    tr, rest, _, yrest = train_test_split(ids, y, test_size=0.30, stratify=y, random_state=seed)
    va, te = train_test_split(rest, test_size=0.5, stratify=yrest, random_state=seed)
    return {"seed": seed, "train": list(tr), "val": list(va), "test": list(te)}


def baselines(table: Path, cols: list[str], label: str, sp: dict, seed: int) -> dict:
    import lightgbm as lgb
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rows = list(csv.DictReader(open(table, newline="")))
    codes = sorted({r[label] for r in rows})
    by_id = {r["id"]: r for r in rows}
    X = {p: np.array([[float(by_id[i][c]) for c in cols] for i in sp[p]]) for p in ("train", "test")}
    y = {p: np.array([codes.index(by_id[i][label]) for i in sp[p]]) for p in ("train", "test")}
    out = {}
    for name, est in (("logistic_regression", make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))),
                      ("lightgbm_default", lgb.LGBMClassifier(verbose=-1, random_state=seed))):
        est.fit(X["train"], y["train"])
        p = est.predict_proba(X["test"])
        yo = np.eye(2, dtype=int)[y["test"]]
        m = M.classification_metrics("binary", yo, p, np.eye(2, dtype=int)[p.argmax(1)], np.array(sp["test"]), seed=seed)
        out[name] = m["auc"]
    return out


def run_pipeline(table: Path, cols, label, sp, mode, budget, seed, work: Path) -> tuple[dict, float]:
    out = work / f"out_{mode}"
    spec = {"schema_version": 1, "job_id": f"bench-{mode}", "command": "train", "kind": "tabular", "problem": "binary",
            "data": {"root": str(table.parent), "table": str(table), "id_col": "id", "label_cols": [label], "data_cols": cols},
            "split": sp, "metric": "auc", "budget": {"mode": mode, "time_budget_s": budget}, "seed": seed,
            "device": "cpu", "out_dir": str(out)}
    spec_path = work / f"spec_{mode}.json"
    spec_path.write_text(json.dumps(spec))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "builder_pipelines", "train", "--spec", str(spec_path), "--out", str(out)],
                          cwd=PIPELINES, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"pipeline failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads((out / "manifest.json").read_text()), wall


def fmt(m: dict) -> str:
    return f"{m['value']:.4f} [{m['ci_low']:.4f}, {m['ci_high']:.4f}]"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", nargs="+", default=["fast", "best"])
    ap.add_argument("--datasets", nargs="+", default=["wdbc", "pima"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fast-budget", type=float, default=DEFAULT_BUDGET_S["fast"])
    ap.add_argument("--best-budget", type=float, default=DEFAULT_BUDGET_S["best"])
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not DATASETS.is_dir():
        print(f"skipped: {DATASETS} is absent")
        return 0
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for ds in args.datasets:
            table, cols, label = {"wdbc": load_wdbc, "pima": load_pima}[ds](tmp)
            rows = list(csv.DictReader(open(table, newline="")))
            sp = split([r["id"] for r in rows], [r[label] for r in rows], args.seed)
            base = baselines(table, cols, label, sp, args.seed)
            print(f"\n{ds}: {len(rows)} rows, split {len(sp['train'])}/{len(sp['val'])}/{len(sp['test'])}")
            for name, m in base.items():
                print(f"  baseline {name:20s} test AUC {fmt(m)}")
            for mode in args.modes:
                work = tmp / ds
                work.mkdir(exist_ok=True)
                budget = args.fast_budget if mode == "fast" else args.best_budget
                man, wall = run_pipeline(table, cols, label, sp, mode, budget, args.seed, work)
                auc = man["metrics"]["test"]["auc"]
                s = man["model_summary"]
                beats = all(auc["value"] >= b["value"] for b in base.values())
                print(f"  builder  {mode:4s} (budget {budget:g} s) test AUC {fmt(auc)}  time {wall:.1f} s  "
                      f"model {s['model']} ({s['trials']} trials, calibration {s['calibration']})  >= both baselines: {beats}")
                results.append({"dataset": ds, "mode": mode, "budget_s": budget, "wall_s": round(wall, 2), "test_auc": auc,
                                "test": man["metrics"]["test"], "model_summary": s,
                                "baselines": base, "at_or_above_baselines": beats})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
