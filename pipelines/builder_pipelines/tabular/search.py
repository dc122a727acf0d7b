"""Hyper-parameter search with patient-grouped cross-validation on the train part.

Candidates, in order: a grid over the linear model's regularisation, LightGBM's default settings, then a
seeded random search over LightGBM settings until the trial cap or the time budget runs out. Every
candidate is scored on out-of-fold predictions (all folds pooled, averaged over repeats) with the
optimization metric; ties keep the earlier candidate, so the linear model stays when it is as good.
Finally a greedy weighted ensemble of the best candidates is tried; it wins only with a better score.

LightGBM folds early-stop on their held-out fold, then every fold predicts with the same tree count
(the median of the folds' best counts), so no fold's score rests on its own stopping point; that count
is the final model's tree count.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata
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
    ensemble_pool: int  # best candidates the final greedy ensemble may draw from (plus the best linear one)


PLANS = {"fast": SearchPlan(folds=3, repeats=1, max_lgb_trials=10, linear_grid=6, ensemble_pool=3),
         "best": SearchPlan(folds=5, repeats=2, max_lgb_trials=150, linear_grid=12, ensemble_pool=8)}


@dataclass
class SearchResult:
    best: dict
    best_score: float
    oof: list[np.ndarray]  # out-of-fold scores of the best candidate, one array per repeat
    trials: list[dict] = field(default_factory=list)
    stopped_by_time: bool = False


def _auc(pos: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC by the rank-sum (Mann-Whitney) formula, ties averaged; -inf with one class only."""
    n_pos = int(pos.sum())
    n_neg = len(pos) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("-inf")
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def selection_score(problem: str, metric: str, y: np.ndarray, scores: np.ndarray) -> float:
    """Higher is better. Regression: -RMSE. Threshold metrics use the rule serving will use."""
    if problem == "regression":
        return -float(np.sqrt(np.mean((scores[:, 0] - y) ** 2)))
    k = scores.shape[1]
    if metric == "auc":  # the same value as metrics.classification_metrics, computed cheaply
        if problem == "binary":
            return _auc(y == 1, scores[:, 1])
        aucs = [_auc(y == c, scores[:, c]) for c in range(k)]
        aucs = [a for a in aucs if np.isfinite(a)]
        return float(np.mean(aucs)) if aucs else float("-inf")
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
    pool = []  # (score, config, oof per repeat, trial number) for the ensemble
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
        pool.append((score, cfg, oofs, i))
        result.trials.append(record)
        on_trial(i, len(cands), record, result.best_score, time.monotonic() - start)
    _try_blend(problem, metric, y, pool, result, plan.ensemble_pool)
    return result


ENSEMBLE_ROUNDS = 25  # greedy additions; weights are multiples of 1/ENSEMBLE_ROUNDS at most


def _try_blend(problem, metric, y, pool, result: SearchResult, pool_size: int) -> None:
    """Greedy ensemble selection with replacement (Caruana et al. 2004, as AutoGluon's weighted ensemble)
    over the best candidates' out-of-fold scores, which all come from the same folds. The average of the
    picked members replaces the single winner only if it scores better out of fold."""
    ranked = sorted(range(len(pool)), key=lambda i: -pool[i][0])
    members = ranked[:pool_size]
    linear = [i for i in ranked if pool[i][1]["model"] == "linear"][:1]
    members += [i for i in linear if i not in members]
    if len(members) < 2:
        return
    n_rep = len(pool[members[0]][2])
    total = [np.zeros_like(pool[members[0]][2][r]) for r in range(n_rep)]
    counts: dict[int, int] = {}
    best_score, best_counts = -np.inf, None
    for step in range(1, ENSEMBLE_ROUNDS + 1):
        scored = []
        for i in members:
            trial = [(total[r] + pool[i][2][r]) / step for r in range(n_rep)]
            scored.append((float(np.mean([selection_score(problem, metric, y, o) for o in trial])), i))
        score, pick = max(scored, key=lambda t: (t[0], -members.index(t[1])))
        total = [total[r] + pool[pick][2][r] for r in range(n_rep)]
        counts[pick] = counts.get(pick, 0) + 1
        if score > best_score:
            best_score, best_counts = score, dict(counts)
    if best_counts is None or len(best_counts) < 2 or not best_score > result.best_score:
        return
    picked = sorted(best_counts)
    n = sum(best_counts.values())
    weights = [best_counts[i] / n for i in picked]
    cfg = {"model": "blend", "params": {"weights": [round(w, 6) for w in weights]}, "parts": [pool[i][1] for i in picked]}
    oofs = [sum(w * pool[i][2][r] for w, i in zip(weights, picked)) for r in range(n_rep)]
    result.trials.append({"trial": len(result.trials), "model": "blend", "params": cfg["params"], "n_estimators": None,
                          "members": [pool[i][3] for i in picked], "cv_score": round(best_score, 6), "time_s": 0.0})
    result.best, result.best_score, result.oof = cfg, best_score, oofs
