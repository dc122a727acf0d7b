"""Best-quality mode on small image sets: a cross-fitted ensemble instead of a search on one validation split.

Why: with a few hundred images the validation split holds ~80, and picking the trial (or epoch) with the
best validation score picks noise (BreastMNIST seed 1: the best validation AUC, 0.963, gave the worst test
AUC, 0.906). Here the train and validation images are pooled and split into K patient-grouped, stratified
folds; each fold's model trains on the other folds with a fixed, time-fitted schedule and keeps its last
weights, so its held-out fold predictions were used for no choice. A round is K such models of one recipe;
rounds of different recipes follow while the budget lasts. The published model averages every kept model
(more training data per model and a larger ensemble, both lower variance), the out-of-fold predictions give
the validation metrics and the decision thresholds, and a round is left out only when its out-of-fold score
is clearly worse than the best round's (paired patient bootstrap, more than two standard errors).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..common import events
from ..common.metrics import _bootstrap
from .train import Candidate, TrainData, TrialResult, probabilities, selection_score, train_trial

N_FOLDS = 5
# Recipes in the order rounds use them: the search's best-performing small ResNet first, then other
# families for diversity; later rounds repeat them with new seeds.
RECIPES = [Candidate("resnet", 16, 1, 3e-3), Candidate("mobile", 16, 1, 3e-3), Candidate("resnet", 24, 1, 2e-3)]
PLANNED_ROUNDS = 2          # the budget is first shared out between this many rounds ...
MAX_ROUNDS = 4              # ... and rounds go on while a whole round still fits, up to this many
MAX_IMAGES = 3000           # above this, K models per round leave too few epochs each: use the search instead
MIN_IMAGES_PER_FOLD = 4
DROP_AT_SE = 2.0
N_BOOT = 200


@dataclasses.dataclass
class Round:
    candidate: Candidate
    seed: int
    models: list[TrialResult]
    oof: np.ndarray                       # raw outputs on every pooled row, each from the model that did not see it
    score: float = float("nan")           # out-of-fold selection score of this round alone
    ci: tuple[float, float] = (float("nan"), float("nan"))
    kept: bool = True
    why: str = ""


def applies(mode: str, n_pooled: int, groups: np.ndarray) -> bool:
    return mode == "best" and n_pooled <= MAX_IMAGES and len(np.unique(groups)) >= N_FOLDS * MIN_IMAGES_PER_FOLD


def assign_folds(groups: np.ndarray, strata: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold number per row: whole patients per fold, each stratum (a patient's first label) dealt round-robin
    after a seeded shuffle so every fold gets a similar class mix."""
    rng = np.random.default_rng(seed)
    patients, first = np.unique(groups.astype(str), return_index=True)
    fold_of: dict[str, int] = {}
    start = 0
    for stratum in np.unique(strata[first]):
        members = patients[strata[first] == stratum]
        for j, pid in enumerate(rng.permutation(members)):
            fold_of[pid] = (start + j) % k
        start += len(members)  # the next stratum continues the deal where this one stopped
    return np.array([fold_of[g] for g in groups.astype(str)])


def _score_ci(data: TrainData, out: np.ndarray, groups: np.ndarray, seed: int) -> tuple[float, tuple[float, float], np.ndarray]:
    point = selection_score(data.problem, data.metric, data.val_onehot, out, data.y_scale)
    reps = np.array([selection_score(data.problem, data.metric, data.val_onehot[i], out[i], data.y_scale)
                     for i in _bootstrap(groups, N_BOOT, seed)])
    finite = reps[np.isfinite(reps)]
    ci = (float(np.quantile(finite, 0.025)), float(np.quantile(finite, 0.975))) if len(finite) else (float("nan"),) * 2
    return point, ci, reps


def run_crossfit(pooled: TrainData, groups: np.ndarray, strata: np.ndarray, side: int, seed: int, device,
                 training_deadline: float, on_epoch=None, init_state: dict | None = None) -> list[Round]:
    """Trains rounds of K fold models on ``pooled`` (x_val/y_val/val_onehot hold the same rows as x_train)."""
    folds = assign_folds(groups, strata, N_FOLDS, seed)
    rounds: list[Round] = []
    t_start = time.monotonic()
    while len(rounds) < MAX_ROUNDS:
        remaining = training_deadline - time.monotonic()
        if rounds:
            per_round = (time.monotonic() - t_start) / len(rounds)
            if len(rounds) >= PLANNED_ROUNDS and remaining < 0.9 * per_round:
                break
        cand = RECIPES[len(rounds) % len(RECIPES)]
        round_seed = seed + 7919 * len(rounds)
        oof = np.zeros((len(folds), pooled.n_out))
        models = []
        for f in range(N_FOLDS):
            now = time.monotonic()
            left_in_plan = (max(PLANNED_ROUNDS, len(rounds) + 1) - len(rounds)) * N_FOLDS - f
            share = (training_deadline - now) / max(1, left_in_plan)
            fit, held = np.nonzero(folds != f)[0], np.nonzero(folds == f)[0]
            fold_data = dataclasses.replace(
                pooled, x_train=pooled.x_train[fit], y_train=pooled.y_train[fit],
                x_val=pooled.x_val[held], y_val=pooled.y_val[held], val_onehot=pooled.val_onehot[held])
            result = train_trial(cand, fold_data, side, round_seed + f, device, min(training_deadline, now + share),
                                 on_epoch=on_epoch(len(rounds) * N_FOLDS + f + 1) if on_epoch else None,
                                 init_state=init_state, keep="last")
            if not len(result.val_out):
                raise RuntimeError("a fold model produced no epoch within the time budget")
            oof[held] = result.val_out
            models.append(result)
            events.log("info", f"round {len(rounds) + 1} {cand.name} fold {f + 1}/{N_FOLDS}: held-out {pooled.metric} "
                               f"{abs(result.val_score):.4f} after {result.epochs_run} epochs ({result.seconds:.1f}s)")
        rounds.append(Round(cand, round_seed, models, oof))
        if time.monotonic() >= training_deadline:
            break
    choose_rounds(rounds, pooled, groups, seed)
    return rounds


def choose_rounds(rounds: list[Round], pooled: TrainData, groups: np.ndarray, seed: int) -> None:
    """Scores each round out of fold and keeps every round not clearly worse than the best one."""
    reps = []
    for r in rounds:
        r.score, r.ci, rep = _score_ci(pooled, r.oof, groups, seed)  # same seed: paired replicates
        reps.append(rep)
    best = int(np.nanargmax([r.score for r in rounds]))
    for i, r in enumerate(rounds):
        if i == best:
            r.why = "best out-of-fold score"
            continue
        diff = reps[best] - reps[i]
        se = float(np.nanstd(diff[np.isfinite(diff)])) if np.isfinite(diff).any() else 0.0
        gap = rounds[best].score - r.score
        r.kept = not (gap > DROP_AT_SE * se and gap > 0)
        r.why = (f"{'kept' if r.kept else 'left out'}: {gap:.4f} below the best round "
                 f"({'within' if r.kept else 'beyond'} {DROP_AT_SE:g} paired-bootstrap standard errors, {se:.4f} each)")


def ensemble_oof(rounds: list[Round]) -> np.ndarray:
    """Out-of-fold raw outputs of the published ensemble: the mean over kept rounds (as the ONNX graph averages)."""
    return np.mean([r.oof for r in rounds if r.kept], axis=0)


def raw_to_scores(problem: str, raw: np.ndarray, y_scale: float, y_shift: float) -> np.ndarray:
    """Raw averaged outputs -> what model.onnx's ``scores`` gives for them (see models.ExportModel)."""
    return raw * y_scale + y_shift if problem == "regression" else probabilities(problem, raw)


def selection_summary(rounds: list[Round], problem: str, metric: str, n_rows: int) -> dict:
    """The report's account of the candidates tried, their out-of-fold scores and why the published model is what it is."""
    shown = lambda v: None if not np.isfinite(v) else round(abs(v), 6)  # noqa: E731 - regression scores are -RMSE
    name = "rmse" if problem == "regression" else metric
    lo_hi = lambda r: (r.ci[1], r.ci[0]) if problem == "regression" else r.ci  # noqa: E731 - -RMSE's interval, flipped
    return {
        "method": "cross-fitted ensemble",
        "folds": N_FOLDS, "rows": n_rows,
        "validation": f"out-of-fold predictions over the train and validation images ({N_FOLDS} patient-grouped, stratified folds); "
                      "each image is scored by the models that did not train on it",
        "rule": "every round's models are averaged unless the round's out-of-fold score is more than "
                f"{DROP_AT_SE:g} paired-bootstrap standard errors below the best round's; no trial or epoch is picked by a validation maximum",
        "candidates": [{"round": i + 1, "architecture": r.candidate.name, "seed": r.seed, "models": len(r.models),
                        "epochs": [m.epochs_run for m in r.models], f"oof_{name}": shown(r.score),
                        "ci_low": shown(lo_hi(r)[0]), "ci_high": shown(lo_hi(r)[1]),
                        "kept": r.kept, "why": r.why} for i, r in enumerate(rounds)],
    }
