"""Development data for choosing best mode's selection rule, on seeds the benchmark does not report.

For a table and a seeded split (same split function as run.py), runs best mode's own candidates through the
search's cross-validation on the train part (out-of-fold scores, fold scores), refits each candidate on train+val
(as the published model is) and keeps its test scores, plus the two baselines' test AUC. Writes one pickle per
table and seed; dev_rules.py then replays selection rules on them, choosing from cross-validated scores only.

  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --datasets pima --seeds 10 11 --out /tmp/tables-dev
"""

from __future__ import annotations

import argparse
import csv
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.preprocessing import PowerTransformer

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE))
import run as B  # noqa: E402  (bench/tabular/run.py: loaders, split, baselines)

from builder_pipelines.tabular import models, search  # noqa: E402
from builder_pipelines.tabular.train import _load  # noqa: E402


def load_synthetic(tmp: Path):
    """1,200 rows, 10 normal features, interactions and steps in the logit: trees beat logistic regression here,
    standing for held-out tables where default LightGBM won (so a rule cannot win by always leaning on LR)."""
    rng = np.random.default_rng(12345)
    X = rng.normal(size=(1200, 10))
    logit = (
        0.8 * X[:, 0]
        + 1.2 * X[:, 1] * X[:, 2]
        + 1.5 * (X[:, 3] > 0.5)
        - 0.7 * X[:, 4] ** 2
        + 0.5 * X[:, 5]
        + 1.0 * (X[:, 6] > 0) * (X[:, 7] > 0)
        - 0.3
    )
    y = (rng.random(1200) < 1 / (1 + np.exp(-logit))).astype(int)
    cols = [f"x{j}" for j in range(10)]
    out = tmp / "synthetic.csv"
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "label"] + cols)
        for i in range(1200):
            w.writerow([f"s{i}", y[i]] + [f"{v:.5f}" for v in X[i]])
    return out, cols, "label"


B.LOADERS["synthetic"] = load_synthetic

# Smooth additive candidates measured for ACTG175's and WDBC's gap to logistic regression (dev_additive.py):
# logistic regression on Yeo-Johnson-transformed numeric columns, and boosted stumps (a GAM fitted by LightGBM).
# Neither was adopted (bench/tabular/notebook/README.md, round 4), so the Yeo-Johnson option lives here, not in models.py.
ADDITIVE = [
    {"model": "linear", "params": {"C": 1.0, "power": True}},
    {"model": "lightgbm", "params": {"num_leaves": 2, "learning_rate": 0.05}},
]
_linear_estimator = models._linear_estimator


def _linear_with_power(problem, params, columns, seed):
    """models' linear Pipeline; with params["power"] its numeric columns get a Yeo-Johnson transform (fitted per
    column, then standardised) instead of plain standardisation."""
    est = _linear_estimator(problem, {k: v for k, v in params.items() if k != "power"}, columns, seed)
    if params.get("power"):
        pre = est.named_steps["pre"]
        pre.transformers = [
            (n, PowerTransformer(method="yeo-johnson") if n == "num" else t, c) for n, t, c in pre.transformers
        ]
    return est


models._linear_estimator = _linear_with_power


def collect(ds: str, seed: int, n_random: int, tmp: Path, extra: list[dict], mode: str = "best") -> dict:
    table, cols, label = {**B.ALL_LOADERS, "synthetic": load_synthetic}[ds](tmp)
    rows = list(csv.DictReader(open(table, newline="")))
    sp = B.split([r["id"] for r in rows], [r[label] for r in rows], seed)
    base = B.baselines(table, cols, label, sp, seed)
    spec = {
        "data": {"table": str(table), "id_col": "id", "label_cols": [label], "data_cols": cols},
        "problem": "binary",
        "split": sp,
    }
    columns, _, data = _load(spec)
    (Xtr, ytr, gtr), (Xva, yva, _), (Xte, yte, _) = data["train"], data["val"], data["test"]
    plan = search.PLANS[mode]
    folds = search.make_folds("binary", ytr, gtr, plan.folds, plan.repeats, seed)
    # Best mode's candidates, with the baseline's exact LightGBM (search.BASELINE_LGB) and CatBoost (search.CATBOOST,
    # with --catboost) moved to the end so that dev_rules.py / dev_catboost.py can replay the rules with and without them.
    cands = [
        c
        for c in search.candidates("binary", "best", seed, len(ytr))
        if c != search.BASELINE_LGB and c["model"] != "catboost"
    ]
    n_ess = len(search._linear_grid("binary", plan.linear_grid)) + 1 + 4
    cands = cands[: n_ess + n_random] + [dict(search.BASELINE_LGB)] + [dict(c) for c in extra]
    if mode == "fast":  # fast mode's own candidates, all of them (its linear grid, LightGBM defaults, random settings)
        cands = search.candidates("binary", "fast", seed, len(ytr))
    Xfit, yfit = np.vstack([Xtr, Xva]), np.r_[ytr, yva]
    out = {
        "dataset": ds,
        "seed": seed,
        "mode": mode,
        "baselines": {k: v["value"] for k, v in base.items()},
        "yte": yte,
        "ytr": ytr,
        "folds": folds,
        "cands": [],
    }
    for i, cfg in enumerate(cands):
        t0 = time.monotonic()
        cfg = dict(cfg)
        oofs, iters = [], []
        for rep in folds:
            oof, n_iter = search._cv_predict(cfg, "binary", columns, Xtr, ytr, gtr, rep, 2, seed, 1)
            oofs.append(oof)
            iters.append(n_iter)
        if cfg["model"] == "lightgbm" and "n_estimators" not in cfg:
            cfg["n_estimators"] = max(1, int(np.median(iters)))
        final = models.fit(cfg, "binary", columns, Xfit, yfit, seed, 1)
        test = models.predict(final, "binary", Xte)
        trees = getattr(getattr(final, "booster", None), "best_iteration_", None)  # a linboost candidate's refit
        out["cands"].append(
            {"trial": i, "config": cfg, "oof": oofs, "test": test, "time_s": time.monotonic() - t0, "trees": trees}
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", nargs="+", default=list(B.LOADERS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[10, 11, 12, 13, 14])
    ap.add_argument("--random", type=int, default=30, help="random LightGBM settings after the essential candidates")
    ap.add_argument("--catboost", action="store_true", help="append search.CATBOOST's candidates")
    ap.add_argument("--additive", action="store_true", help="append ADDITIVE's candidates (after CatBoost's)")
    ap.add_argument("--linboost", action="store_true", help="append dev_linboost.LINBOOST's candidates (last)")
    ap.add_argument("--svm", action="store_true", help="append dev_svm.SVM's candidates (last)")
    ap.add_argument(
        "--mode",
        choices=["best", "fast"],
        default="best",
        help="whose folds and candidates: best mode's (5 x 3 folds) or fast mode's (3 folds, its own candidates)",
    )
    ap.add_argument("--out", default="/tmp/tables-dev")
    args = ap.parse_args()
    appended = []  # candidates of a dev_*.py module, after everything else
    if args.linboost:
        import dev_linboost  # teaches models.fit / models.predict the "linboost" config

        appended = dev_linboost.LINBOOST
    if args.svm:
        import dev_svm  # teaches models.fit the "svm" config

        appended = appended + dev_svm.SVM
    Path(args.out).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmpdir:
        for ds in args.datasets:
            for seed in args.seeds:
                path = Path(args.out) / f"{ds}_{seed}.pkl"
                if path.exists():
                    continue
                t0 = time.monotonic()
                extra = (search.CATBOOST if args.catboost else []) + (ADDITIVE if args.additive else []) + appended
                res = collect(ds, seed, args.random, Path(tmpdir), extra, args.mode)
                path.write_bytes(pickle.dumps(res))
                print(
                    json.dumps(
                        {
                            "dataset": ds,
                            "seed": seed,
                            "s": round(time.monotonic() - t0, 1),
                            "n": len(res["cands"]),
                            "baselines": res["baselines"],
                        }
                    ),
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
