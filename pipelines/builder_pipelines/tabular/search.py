"""Model search with repeated, stratified, patient-grouped cross-validation on the train part.

Candidates, in order: a grid over the linear model's regularisation (with scikit-learn's default C=1 /
alpha=1), LightGBM's default settings (early-stopped; in best mode also the baseline's fixed 100 trees), then
(best mode) random forest and extra trees, then, as the time budget allows, CatBoost (its defaults, and depth 4)
and a seeded random search over LightGBM settings until the trial cap or the time budget runs out. Every
candidate is scored on out-of-fold predictions (all folds pooled, averaged over repeats) and on every fold;
selection.py turns those into the choice (one-standard-error rule, then the greedy ensemble: in best mode unless
it is clearly worse, in fast mode only when it clearly helps).

LightGBM folds early-stop on a fifth of their training patients (never on the fold they are scored on),
then every fold predicts with the same tree count (the median of the folds' best counts); that count
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
from . import selection as S
from .table import one_hot


@dataclass
class SearchPlan:
    folds: int
    repeats: int
    max_lgb_trials: int
    linear_grid: int
    ensemble_pool: int  # best candidates the final greedy ensemble may draw from (plus the best of every family)
    forests: bool = False  # random forest and extra trees candidates
    catboost: bool = False  # CATBOOST candidates
    max_search_s: float | None = None  # ceiling on the search whatever the budget (the whole job stays under 5 min)
    ensemble_rule: str = "gain"  # selection.accept_blend: "gain" (must beat the single model) or "unless_worse"


PLANS = {
    "fast": SearchPlan(folds=3, repeats=1, max_lgb_trials=10, linear_grid=6, ensemble_pool=3),
    "best": SearchPlan(
        folds=5,
        repeats=3,
        max_lgb_trials=150,
        linear_grid=12,
        ensemble_pool=8,
        forests=True,
        catboost=True,
        max_search_s=200.0,
        ensemble_rule="unless_worse",
    ),
}


@dataclass
class SearchResult:
    best: dict
    best_score: float
    oof: list[np.ndarray]  # out-of-fold scores of the best candidate, one array per repeat
    trials: list[dict] = field(default_factory=list)
    stopped_by_time: bool = False
    selection: dict = field(default_factory=dict)  # how the winner was chosen, for the report


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
    """The grid, with scikit-learn's default strength (C=1 / alpha=1) always in it: the baseline to beat."""
    key, values = ("alpha", np.logspace(-2, 3, n)) if problem == "regression" else ("C", np.logspace(-3, 2, n))
    values = sorted({round(float(v), 8) for v in values} | {1.0})
    return [{"model": "linear", "params": {key: v}} for v in values]


def _forests(n_rows: int) -> list[dict]:
    """Random forest and extra trees, fully grown and smoothed. The leaf-size floor keeps a 5,000-row forest's
    ONNX graph to tens of megabytes (fully grown trees have a leaf per one or two rows)."""
    floor = 1 + n_rows // 1000
    return [
        {"model": family, "params": {"min_samples_leaf": max(leaf, floor), "max_features": "sqrt"}}
        for leaf in (1, 5)
        for family in ("random_forest", "extra_trees")
    ]


def _lgb_random(rng: np.random.Generator) -> dict:
    loguni = lambda lo, hi: float(np.exp(rng.uniform(np.log(lo), np.log(hi))))  # noqa: E731
    return {
        "model": "lightgbm",
        "params": {
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
        },
    }


# LightGBM's defaults exactly as the benchmark's baseline fits them: 100 trees, no early stopping. The early-stopped
# defaults above stop on a fifth of each fold's patients and can keep far fewer trees; this one puts the baseline
# itself in the ensemble library. On development splits (seeds 10-14, bench/tabular/notebook/README.md) it changed the chosen
# model's test AUC by +0.0002 on average (SE 0.0001; +0.0013 on the table where trees win), never by more than 0.003.
BASELINE_LGB = {"model": "lightgbm", "params": {}, "n_estimators": 100}


# CatBoost with its defaults (1,000 symmetric trees of depth 6, learning rate set from the table's size) and with
# depth 4. On development splits (seeds 10-14, bench/tabular/notebook/README.md) adding both to best mode raised the chosen
# model's test AUC by +0.0036 on average (SE 0.0020, 9 splits up, 5 down), +0.021 on the table where trees win; they
# cost 4-35 s each on the development tables (15 cross-validation fits): first after the essential candidates, they run
# when the budget allows (the default best budget does on tables of up to 5,000 rows).
CATBOOST = [{"model": "catboost", "params": {}}, {"model": "catboost", "params": {"depth": 4}}]


def _n_essential(problem: str, plan: SearchPlan) -> int:
    """Candidates that run whatever the time budget: the linear grid, LightGBM's defaults and, in best mode, the
    baseline's LightGBM and the fully grown forests. CatBoost comes right after them, within the budget."""
    return len(_linear_grid(problem, plan.linear_grid)) + 1 + (3 if plan.forests else 0)


def candidates(problem: str, mode: str, seed: int, n_rows: int = 0) -> list[dict]:
    plan = PLANS[mode]
    rng = np.random.default_rng(seed)
    out = _linear_grid(problem, plan.linear_grid)
    out.append({"model": "lightgbm", "params": {}})  # LightGBM defaults
    if plan.forests:
        out.append(dict(BASELINE_LGB))
    forests = _forests(n_rows) if plan.forests else []
    out += forests[:2]  # fully grown random forest and extra trees always run; the smoother pair follows CatBoost
    if plan.catboost:
        out += [dict(c) for c in CATBOOST]
    out += forests[2:] + [_lgb_random(rng) for _ in range(plan.max_lgb_trials)]
    return out


STOP_SHARE = 0.2  # of a fold's training patients, held out to early-stop LightGBM


def _stop_split(tr: np.ndarray, groups: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, early-stopping rows) of a fold's training part, split by patient."""
    ids = np.unique(groups[tr])
    rng = np.random.default_rng(seed)
    stop = set(rng.choice(ids, size=max(1, int(round(STOP_SHARE * len(ids)))), replace=False).tolist())
    mask = np.array([g in stop for g in groups[tr]])
    return tr[~mask], tr[mask]


def _cv_predict(cfg, problem, columns, X, y, groups, folds, k, seed, threads) -> tuple[np.ndarray, int | None]:
    """Out-of-fold scores. LightGBM early-stops on patients held out of the fold's *training* part: stopping on
    the scored fold itself flattered every LightGBM candidate (on ACTG175 the search then preferred tuned
    LightGBM that scored 0.05 AUC below logistic regression on test)."""
    width = 1 if problem == "regression" else k
    oof = np.zeros((len(y), width))
    fitted = []
    for j, (tr, _te) in enumerate(folds):
        if cfg["model"] == "lightgbm" and "n_estimators" not in cfg:  # a fixed tree count (BASELINE_LGB) fits all rows
            fit_rows, stop_rows = _stop_split(tr, groups, seed + j)
            est = models.fit(
                cfg, problem, columns, X[fit_rows], y[fit_rows], seed, threads, X_stop=X[stop_rows], y_stop=y[stop_rows]
            )
        else:
            est = models.fit(cfg, problem, columns, X[tr], y[tr], seed, threads)
        fitted.append(est)
    n_iter = (
        int(np.median([models.trees_used(e) for e in fitted]))
        if cfg["model"] == "lightgbm" and "n_estimators" not in cfg
        else None
    )
    for (_tr, te), est in zip(folds, fitted):
        pred = models.predict(est, problem, X[te], n_iter)
        if problem != "regression" and pred.shape[1] != k:  # a fold without some class
            full = np.zeros((len(te), k))
            full[:, np.asarray(est.classes_, dtype=int)] = pred
            pred = full
        oof[te] = pred
    return oof, n_iter


def fold_scores(problem, metric, y, oofs: list[np.ndarray], folds: list[list[tuple]]) -> np.ndarray:
    """The metric on every held-out fold of every repeat (-inf where a fold cannot be scored)."""
    return np.array(
        [selection_score(problem, metric, y[te], oof[te]) for oof, rep in zip(oofs, folds) for _, te in rep]
    )


def _halves(folds: list[list[tuple]]) -> tuple[np.ndarray, np.ndarray]:
    """Two halves of the rows along the first repeat's patient-grouped folds (even folds / odd folds)."""
    rep = folds[0]
    a = np.sort(np.concatenate([te for j, (_, te) in enumerate(rep) if j % 2 == 0]))
    b = np.sort(np.concatenate([te for j, (_, te) in enumerate(rep) if j % 2 == 1]))
    return a, b


def _record(c: S.Candidate, time_s: float) -> dict:
    interval = [round(c.score - 1.96 * c.se, 6), round(c.score + 1.96 * c.se, 6)]
    return {
        "trial": c.trial,
        "model": c.config["model"],
        "family": c.family,
        "params": c.config["params"],
        "n_estimators": c.config.get("n_estimators"),
        "cv_score": round(c.score, 6),
        "cv_se": round(c.se, 6),
        "cv_interval_95": interval,
        "time_s": round(time_s, 3),
    }


def run_search(problem, metric, columns, X, y, groups, k, seed, mode, budget_s, threads, on_trial) -> SearchResult:
    """``on_trial(trial, trials, record, best_score, elapsed_s)`` after every candidate."""
    plan = PLANS[mode]
    if plan.max_search_s is not None:
        budget_s = min(budget_s, plan.max_search_s)
    folds = make_folds(problem, y, groups, plan.folds, plan.repeats, seed)
    cands = candidates(problem, mode, seed, len(y))
    n_essential = _n_essential(problem, plan)

    def score_fn(oofs, rows=None):
        yy = y if rows is None else y[rows]
        return float(np.mean([selection_score(problem, metric, yy, o) for o in oofs]))

    start = time.monotonic()
    trial_times, pool, trials, stopped, dropped = [], [], [], False, []
    for i, cfg in enumerate(cands):
        elapsed = time.monotonic() - start
        expected = float(np.mean(trial_times)) if trial_times else 0.0
        if i >= n_essential and elapsed + expected > budget_s:
            stopped = True
            break
        t0 = time.monotonic()
        oofs, iters = [], []
        for r, rep in enumerate(folds):
            oof, n_iter = _cv_predict(cfg, problem, columns, X, y, groups, rep, k, seed, threads)
            oofs.append(oof)
            iters.append(n_iter)
            # A candidate past the essential ones whose first repeat shows it cannot finish within the budget is
            # dropped, and cheaper ones may still run: CatBoost costs several LightGBM trials, more than the estimate
            # above (forests and LightGBM) foresees, and on a large table more than the whole budget.
            if i >= n_essential and r == 0:
                repeat_s = time.monotonic() - t0
                if time.monotonic() - start + repeat_s * (len(folds) - 1) > budget_s:
                    dropped.append(
                        {
                            "trial": i,
                            "model": cfg["model"],
                            "params": cfg["params"],
                            "reason": f"its first of {len(folds)} cross-validation repeats took {repeat_s:.1f} s; "
                            f"the rest would end past the search budget of {budget_s:.0f} s",
                        }
                    )
                    break
        if len(oofs) < len(folds):
            continue
        cfg = dict(cfg)
        if cfg["model"] == "lightgbm" and "n_estimators" not in cfg:
            cfg["n_estimators"] = max(1, int(np.median(iters)))
        if cfg["model"] not in ("linear", "catboost"):  # the time of what follows: forests and LightGBM settings
            trial_times.append(time.monotonic() - t0)
        cand = S.Candidate(i, cfg, score_fn(oofs), fold_scores(problem, metric, y, oofs, folds), oofs)
        pool.append(cand)
        record = _record(cand, time.monotonic() - t0)
        trials.append(record)
        on_trial(i, len(cands), record, max(c.score for c in pool), time.monotonic() - start)
    chosen, best, reason = S.one_se_choice(pool)
    ensemble_words = (
        "then the greedy ensemble of the best candidates unless, with weights cross-fitted on halves of "
        "the patients, its fold-by-fold gain over that model is below minus two standard errors"
        if plan.ensemble_rule == "unless_worse"
        else "then an ensemble if, with weights cross-fitted on halves of the patients, its fold-by-fold gain "
        "over that model exceeds one standard error"
    )
    selection = {
        "rule": "simplest model family within one standard error of the best cross-validated score "
        "(default linear < tuned linear < random forest / extra trees < LightGBM defaults, CatBoost < tuned LightGBM); "
        + ensemble_words,
        "best_by_score": best.trial,
        "single_choice": chosen.trial,
        "reason": reason,
    }
    if dropped:
        selection["dropped"] = dropped
    members = S.ensemble_pool(pool, chosen, plan.ensemble_pool)
    if len(members) >= 2:
        counts, _ = S.greedy_weights(members, score_fn)
        if len(counts) >= 2:
            honest = S.crossfit_oof(members, score_fn, _halves(folds))
            blend = S.blend_candidate(
                members,
                counts,
                len(trials),
                honest,
                score_fn,
                lambda oofs: fold_scores(problem, metric, y, oofs, folds),
            )
            keep, why = S.accept_blend(blend, chosen, plan.ensemble_rule)
            record = _record(blend, 0.0)
            record["members"] = blend.config["members"]
            trials.append(record)
            selection["ensemble"] = why
            if keep:
                chosen = blend
                selection["reason"] += "; then " + why
    selection["chosen"] = chosen.trial
    return SearchResult(
        best=chosen.config,
        best_score=chosen.score,
        oof=chosen.oof,
        trials=trials,
        stopped_by_time=stopped,
        selection=selection,
    )
