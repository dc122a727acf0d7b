"""Hyper-parameter search with patient-grouped cross-validation on the train part.

Candidates, in order: a grid over the linear model's regularisation, LightGBM's default settings, then a
seeded random search over LightGBM settings until the trial cap or the time budget runs out. Every
candidate is scored on out-of-fold predictions (all folds pooled, averaged over repeats) with the
optimization metric; ties keep the earlier candidate, so the linear model stays when it is as good.

LightGBM folds early-stop on their held-out fold, then every fold predicts with the same tree count
(the median of the folds' best counts), so no fold's score rests on its own stopping point; that count
is the final model's tree count.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

from ..common import metrics as M
from ..common import thresholds as T
from . import models
from .table import one_hot


@dataclass
class SearchPlan:
    folds: int
    repeats: int
    max_lgb_trials: int
    linear_grid: int


PLANS = {"fast": SearchPlan(folds=3, repeats=1, max_lgb_trials=10, linear_grid=6),
         "best": SearchPlan(folds=5, repeats=2, max_lgb_trials=150, linear_grid=12)}


@dataclass
class SearchResult:
    best: dict
    best_score: float
    oof: list[np.ndarray]  # out-of-fold scores of the best candidate, one array per repeat
    trials: list[dict] = field(default_factory=list)
    stopped_by_time: bool = False


def selection_score(problem: str, metric: str, y: np.ndarray, scores: np.ndarray) -> float:
    """Higher is better. Regression: -RMSE. Threshold metrics use the rule serving will use."""
    if problem == "regression":
        return -float(np.sqrt(np.mean((scores[:, 0] - y) ** 2)))
    k = scores.shape[1]
    yo = one_hot(y, k)
    dec = T.apply_thresholds(problem, scores, T.choose_thresholds(problem, yo, scores, metric))
    value = M.classification_metrics(problem, yo, scores, dec, groups=np.arange(len(y)), n_boot=0)[metric]["value"]
    return float("-inf") if value is None else float(value)


def make_folds(problem: str, y, groups, n_folds: int, repeats: int, seed: int) -> list[list[tuple]]:
    n_groups = len(np.unique(groups))
    n_folds = max(2, min(n_folds, n_groups))
    out = []
    for r in range(repeats):
        if problem == "regression":
            cv = GroupKFold(n_splits=n_folds, shuffle=True, random_state=seed + r)
            out.append(list(cv.split(np.zeros(len(y)), y, groups)))
        else:
            cv = StratifiedGroupKFold(n_splits=n_folds, shuffle=True, random_state=seed + r)
            out.append(list(cv.split(np.zeros(len(y)), y, groups)))
    return out


def _linear_grid(problem: str, n: int) -> list[dict]:
    if problem == "regression":
        return [{"model": "linear", "params": {"alpha": float(a)}} for a in np.logspace(-2, 3, n)]
    return [{"model": "linear", "params": {"C": float(c)}} for c in np.logspace(-3, 2, n)]


def _lgb_random(rng: np.random.Generator) -> dict:
    loguni = lambda lo, hi: float(np.exp(rng.uniform(np.log(lo), np.log(hi))))  # noqa: E731
    return {"model": "lightgbm", "params": {
        "learning_rate": round(loguni(0.01, 0.2), 5),
        "num_leaves": int(round(loguni(4, 64))),
        "max_depth": int(rng.choice([-1, -1, 3, 4, 6])),
        "min_child_samples": int(round(loguni(3, 60))),
        "colsample_bytree": round(float(rng.uniform(0.4, 1.0)), 3),
        "subsample": round(float(rng.uniform(0.5, 1.0)), 3),
        "subsample_freq": 1,
        "reg_lambda": round(loguni(1e-3, 30), 5),
        "reg_alpha": round(loguni(1e-3, 1), 5) if rng.random() < 0.5 else 0.0,
        "extra_trees": bool(rng.random() < 0.3),
    }}


def candidates(problem: str, mode: str, seed: int) -> list[dict]:
    plan = PLANS[mode]
    rng = np.random.default_rng(seed)
    out = _linear_grid(problem, plan.linear_grid)
    out.append({"model": "lightgbm", "params": {}})  # LightGBM defaults
    out += [_lgb_random(rng) for _ in range(plan.max_lgb_trials)]
    return out


def _cv_predict(cfg, problem, columns, X, y, folds, k, seed, threads) -> tuple[np.ndarray, int | None]:
    width = 1 if problem == "regression" else k
    oof = np.zeros((len(y), width))
    fitted = []
    for tr, te in folds:
        if cfg["model"] == "lightgbm":
            est = models.fit(cfg, problem, columns, X[tr], y[tr], seed, threads, X_stop=X[te], y_stop=y[te])
        else:
            est = models.fit(cfg, problem, columns, X[tr], y[tr], seed, threads)
        fitted.append(est)
    n_iter = int(np.median([models.trees_used(e) for e in fitted])) if cfg["model"] == "lightgbm" else None
    for (tr, te), est in zip(folds, fitted):
        pred = models.predict(est, problem, X[te], n_iter)
        if problem != "regression" and pred.shape[1] != k:  # a fold without some class
            full = np.zeros((len(te), k))
            full[:, np.asarray(est.classes_, dtype=int)] = pred
            pred = full
        oof[te] = pred
    return oof, n_iter


def run_search(problem, metric, columns, X, y, groups, k, seed, mode, budget_s, threads, on_trial) -> SearchResult:
    """``on_trial(trial, trials, record, best_score, elapsed_s)`` after every candidate."""
    plan = PLANS[mode]
    folds = make_folds(problem, y, groups, plan.folds, plan.repeats, seed)
    cands = candidates(problem, mode, seed)
    n_essential = plan.linear_grid + 1  # the linear grid and LightGBM defaults always run
    start = time.monotonic()
    result, lgb_times = None, []
    best_of = {}  # model family -> (score, config, oof): the two halves of the blend
    for i, cfg in enumerate(cands):
        elapsed = time.monotonic() - start
        expected = float(np.mean(lgb_times)) if lgb_times else 0.0
        if i >= n_essential and elapsed + expected > budget_s:
            result.stopped_by_time = True
            break
        t0 = time.monotonic()
        oofs, iters, scores = [], [], []
        for rep in folds:
            oof, n_iter = _cv_predict(cfg, problem, columns, X, y, rep, k, seed, threads)
            oofs.append(oof); iters.append(n_iter)
            scores.append(selection_score(problem, metric, y, oof))
        score = float(np.mean(scores))
        cfg = dict(cfg)
        if cfg["model"] == "lightgbm":
            cfg["n_estimators"] = max(1, int(np.median(iters)))
            lgb_times.append(time.monotonic() - t0)
        record = {"trial": i, "model": cfg["model"], "params": cfg["params"], "n_estimators": cfg.get("n_estimators"),
                  "cv_score": round(score, 6), "time_s": round(time.monotonic() - t0, 3)}
        if result is None:
            result = SearchResult(best=cfg, best_score=score, oof=oofs)
        elif score > result.best_score:
            result.best, result.best_score, result.oof = cfg, score, oofs
        if cfg["model"] not in best_of or score > best_of[cfg["model"]][0]:
            best_of[cfg["model"]] = (score, cfg, oofs)
        result.trials.append(record)
        on_trial(i, len(cands), record, result.best_score, time.monotonic() - start)
    _try_blend(problem, metric, y, best_of, result)
    return result


BLEND_WEIGHTS = [0.2, 0.35, 0.5, 0.65, 0.8]


def _try_blend(problem, metric, y, best_of, result: SearchResult) -> None:
    """Weighted average of the best linear and the best LightGBM candidate (their out-of-fold scores come
    from the same folds, so the blend's score is out-of-fold too); it replaces the winner only if better."""
    if "linear" not in best_of or "lightgbm" not in best_of:
        return
    (_, lin, lin_oof), (_, gbm, gbm_oof) = best_of["linear"], best_of["lightgbm"]
    for w in BLEND_WEIGHTS:
        oofs = [w * a + (1 - w) * b for a, b in zip(lin_oof, gbm_oof)]
        score = float(np.mean([selection_score(problem, metric, y, o) for o in oofs]))
        cfg = {"model": "blend", "params": {"weights": [w, 1 - w]}, "parts": [lin, gbm]}
        result.trials.append({"trial": len(result.trials), "model": "blend", "params": cfg["params"], "n_estimators": None,
                              "cv_score": round(score, 6), "time_s": 0.0})
        if score > result.best_score:
            result.best, result.best_score, result.oof = cfg, score, oofs
