"""Round 5 (development seeds only): boosting that starts from logistic regression.

On ACTG175 and WDBC logistic regression beats every tree model, and adding trees to the ensemble costs ACTG175
0.004 on test although cross-validation favours the blend. A *linboost* candidate fits LR (C=1, best mode's
linear Pipeline) first and then boosts small LightGBM trees on its residual (init_score = LR's logit), early-
stopped on 20% of the fitting rows. Where the table is linear, early stopping keeps few trees and the candidate
stays close to LR; where trees win, the trees add the interactions. Binary problems only (the dev tables are).

Importing this module teaches models.fit / models.predict the "linboost" config (dev_collect.py --linboost does);
running it replays best mode's rule with and without the linboost candidates on dev_collect.py's pickles:

  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --random 10 --catboost --linboost --out /tmp/tables-dev-lb
  pipelines/.venv/bin/python bench/tabular/notebook/dev_linboost.py /tmp/tables-dev-lb
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import lightgbm as lgb
import numpy as np

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE.parents[2] / "pipelines"))

from builder_pipelines.tabular import models  # noqa: E402
from builder_pipelines.tabular import selection as S  # noqa: E402

LINBOOST = [
    {"model": "linboost", "params": {"num_leaves": 4, "learning_rate": 0.03, "min_child_samples": 20}},
    {"model": "linboost", "params": {"num_leaves": 8, "learning_rate": 0.05, "min_child_samples": 20}},
]
S.COMPLEXITY.setdefault("linboost", 3)  # between the linear model and tuned LightGBM, as CatBoost


class LinBoost:
    """LR's logit plus a LightGBM booster's raw score, through the sigmoid."""

    def __init__(self, linear, booster: lgb.LGBMClassifier):
        self.linear, self.booster = linear, booster
        self.classes_ = np.array([0, 1])

    def logit(self, X) -> np.ndarray:
        return self.linear.decision_function(X) + self.booster.predict(X, raw_score=True)

    def predict_proba(self, X) -> np.ndarray:
        p = 1 / (1 + np.exp(-self.logit(X)))
        return np.stack([1 - p, p], axis=1)


def fit_linboost(params: dict, columns, X, y, seed: int, threads: int) -> LinBoost:
    linear = models.fit({"model": "linear", "params": {"C": 1.0}}, "binary", columns, X, y, seed, threads)
    rng = np.random.default_rng(seed)
    stop = np.zeros(len(y), dtype=bool)
    for cls in (0, 1):  # a stratified 20% for early stopping (one row per patient on the dev tables)
        idx = np.flatnonzero(y == cls)
        stop[rng.choice(idx, size=max(1, len(idx) // 5), replace=False)] = True
    cat_idx = [i for i, c in enumerate(columns) if c.type == "categorical"]
    booster = lgb.LGBMClassifier(
        n_estimators=models.LGB_MAX_TREES,
        random_state=seed,
        n_jobs=threads,
        verbose=-1,
        deterministic=True,
        force_row_wise=True,
        **params,
    )
    base = linear.decision_function(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booster.fit(
            X[~stop],
            y[~stop],
            init_score=base[~stop],
            eval_set=[(X[stop], y[stop])],
            eval_init_score=[base[stop]],
            categorical_feature=cat_idx or "auto",
            callbacks=[lgb.early_stopping(models.LGB_PATIENCE, verbose=False)],
        )
    return LinBoost(linear, booster)


_fit, _predict = models.fit, models.predict


def _fit_patched(config, problem, columns, X, y, seed, threads, X_stop=None, y_stop=None):
    if config["model"] == "linboost":
        return fit_linboost(config["params"], columns, X, y, seed, threads)
    return _fit(config, problem, columns, X, y, seed, threads, X_stop, y_stop)


def _predict_patched(est, problem, X, n_iter=None):
    if isinstance(est, LinBoost):
        return est.predict_proba(X)
    return _predict(est, problem, X, n_iter)


models.fit, models.predict = _fit_patched, _predict_patched


def rules(r, cands, tests, score_fn, fs) -> dict[str, float]:
    from dev_rules import replay_added

    return replay_added(
        r,
        cands,
        tests,
        score_fn,
        fs,
        "linboost",
        lambda c: f"linboost {c.config['params']['num_leaves']} leaves alone",
        "current + linboost 4 leaves",
        "current + both linboost",
    )


def main() -> int:
    sys.path.insert(0, str(HERE))
    from dev_rules import print_table, replay_dir

    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tables-dev-lb")
    table, records = replay_dir(root, rules)
    times = [c["time_s"] for r in records for c in r["cands"] if c["config"]["model"] == "linboost"]
    trees = [c.get("trees") for r in records for c in r["cands"] if c["config"]["model"] == "linboost"]
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()})
    print(f"linboost candidate time (15 CV fits + refit), median {np.median(times):.1f} s; refit trees {trees}")
    print_table(table, "current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
