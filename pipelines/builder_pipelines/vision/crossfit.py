"""Best-quality image models: a cross-fitted ensemble instead of a search on one validation split.

Why: with a few hundred images the validation split holds ~80, and picking the trial (or epoch) with the
best validation score picks noise (BreastMNIST seed 1: the best validation AUC, 0.963, gave the worst test
AUC, 0.906). Here the train and validation images are pooled and split into K patient-grouped, stratified
folds; each fold's model trains on the other folds with a fixed, time-fitted schedule and keeps its last
weights, so its held-out fold predictions were used for no choice. A round is K such models of one recipe;
rounds of different recipes follow while the budget lasts. The published model averages every kept model
(more training data per model and a larger ensemble, both lower variance), the out-of-fold predictions give
the validation metrics and the decision thresholds, and a round is left out only when its out-of-fold score
is clearly worse than the best round's (paired patient bootstrap, more than two standard errors).
How many folds and rounds: crossfit_plan.py (fixed for small sets, from a timing probe for larger ones).

Test-time augmentation: every fold model also predicts its held-out fold flipped left-right; the published
graph averages both views only when that raises the ensemble's out-of-fold score by more than TTA_GAIN_SE paired
standard errors, because it doubles the network evaluations per prediction.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from ..common import events
from ..common.metrics import _bootstrap
from .crossfit_plan import Plan, epoch_cap_now, planned_rounds_now
from .train import Candidate, TrainData, TrialResult, predict, probabilities, selection_score, train_trial

DROP_AT_SE = 2.0
TTA_GAIN_SE = 1.0
N_BOOT = 200


@dataclasses.dataclass
class Round:
    candidate: Candidate
    seed: int
    models: list[TrialResult]
    oof: np.ndarray  # raw outputs on every pooled row, each from the model that did not see it
    oof_flipped: np.ndarray  # the same models on the left-right flipped images
    score: float = float("nan")  # out-of-fold selection score of this round alone
    ci: tuple[float, float] = (float("nan"), float("nan"))
    kept: bool = True
    why: str = ""
    seconds: float = 0.0  # wall time of the round's training (its models and their held-out predictions)
    planned_rounds: int = 0  # the rounds planned, at the speed reached, when this round ended
    seconds_per_epoch: float = float("nan")  # its fold models' median seconds per epoch, as measured


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


def _score_ci(
    data: TrainData, out: np.ndarray, groups: np.ndarray, seed: int
) -> tuple[float, tuple[float, float], np.ndarray]:
    point = selection_score(data.problem, data.metric, data.val_onehot, out, data.y_scale)
    reps = np.array(
        [
            selection_score(data.problem, data.metric, data.val_onehot[i], out[i], data.y_scale)
            for i in _bootstrap(groups, N_BOOT, seed)
        ]
    )
    finite = reps[np.isfinite(reps)]
    ci = (float(np.quantile(finite, 0.025)), float(np.quantile(finite, 0.975))) if len(finite) else (float("nan"),) * 2
    return point, ci, reps


def run_crossfit(
    pooled: TrainData,
    groups: np.ndarray,
    strata: np.ndarray,
    side: int,
    seed: int,
    device,
    training_deadline: float,
    plan: Plan,
    on_epoch=None,
    init_state: dict | None = None,
) -> list[Round]:
    """Trains rounds of K fold models on ``pooled`` (x_val/y_val/val_onehot hold the same rows as x_train)."""
    k = plan.folds
    folds = assign_folds(groups, strata, k, seed)
    rounds: list[Round] = []
    t_start = time.monotonic()
    planned = plan.planned_rounds
    epoch_seconds: list[float] = []  # measured per fold model: its seconds per epoch (training + held-out scoring)
    while len(rounds) < plan.max_rounds:
        remaining = training_deadline - time.monotonic()
        if rounds:
            per_round = (time.monotonic() - t_start) / len(rounds)
            if len(rounds) >= planned and remaining < 0.9 * per_round:
                break
        cand = plan.recipes[len(rounds) % len(plan.recipes)]
        t_round = time.monotonic()
        round_seed = seed + 7919 * len(rounds)
        oof, oof_flipped = np.zeros((len(folds), pooled.n_out)), np.zeros((len(folds), pooled.n_out))
        models = []
        for f in range(k):
            now = time.monotonic()
            if epoch_seconds:  # follow the speed reached, not the probe's (planned_rounds_now)
                planned = planned_rounds_now(
                    plan, len(rounds), f, float(np.median(epoch_seconds)), training_deadline - now
                )
            left_in_plan = (max(planned, len(rounds) + 1) - len(rounds)) * k - f
            share = (training_deadline - now) / max(1, left_in_plan)
            fit, held = np.nonzero(folds != f)[0], np.nonzero(folds == f)[0]
            fold_data = dataclasses.replace(
                pooled,
                x_train=pooled.x_train[fit],
                y_train=pooled.y_train[fit],
                x_val=pooled.x_val[held],
                y_val=pooled.y_val[held],
                val_onehot=pooled.val_onehot[held],
            )
            result = train_trial(
                cand,
                fold_data,
                side,
                round_seed + f,
                device,
                min(training_deadline, now + share),
                on_epoch=on_epoch(len(rounds) * k + f + 1) if on_epoch else None,
                init_state=init_state,
                epochs=epoch_cap_now(plan, float(np.median(epoch_seconds)), share) if epoch_seconds else plan.epoch_cap,
                keep="last",
            )
            if not len(result.val_out):
                raise RuntimeError("a fold model produced no epoch within the time budget")
            if result.epochs_run:
                epoch_seconds.append(result.seconds / result.epochs_run)
            oof[held] = result.val_out
            oof_flipped[held] = predict(result.model, torch.flip(fold_data.x_val, dims=[3]), device)
            models.append(result)
            events.log(
                "info",
                f"round {len(rounds) + 1} {cand.name} fold {f + 1}/{k}: held-out {pooled.metric} "
                f"{abs(result.val_score):.4f} after {result.epochs_run} epochs ({result.seconds:.1f}s)",
            )
        rounds.append(Round(cand, round_seed, models, oof, oof_flipped, seconds=time.monotonic() - t_round))
        rounds[-1].planned_rounds = planned
        rounds[-1].seconds_per_epoch = float(np.median(epoch_seconds)) if epoch_seconds else float("nan")
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
        r.why = (
            f"{'kept' if r.kept else 'left out'}: {gap:.4f} below the best round "
            f"({'within' if r.kept else 'beyond'} {DROP_AT_SE:g} paired-bootstrap standard errors, {se:.4f} each)"
        )


def ensemble_oof(rounds: list[Round], flip_tta: bool = False) -> np.ndarray:
    """Out-of-fold raw outputs of the published ensemble: the mean over kept rounds (and over both views with
    ``flip_tta``), as the ONNX graph averages."""
    views = [r.oof for r in rounds if r.kept] + ([r.oof_flipped for r in rounds if r.kept] if flip_tta else [])
    return np.mean(views, axis=0)


def choose_flip_tta(rounds: list[Round], pooled: TrainData, groups: np.ndarray, seed: int) -> dict:
    """Keeps the flip average only when it raises the kept ensemble's out-of-fold score by more than TTA_GAIN_SE
    paired-bootstrap standard errors: a gain within the noise does not pay for twice the serving cost.
    Never with left-right flips off (``allow_flips``, the default for left/right-sensitive anatomy): a flipped
    view is then an image the models were not meant to see, whatever the out-of-fold score says."""
    if not pooled.allow_flips:
        return {
            "views": ["as is"],
            "kept": False,
            "oof_without": None,
            "oof_with": None,
            "gain": None,
            "paired_se": None,
            "why": "not tried: left-right flips are off for this experiment (options.allow_flips)",
            "serving_cost": "none (1 evaluation per member and image)",
        }
    plain, plain_ci, plain_reps = _score_ci(pooled, ensemble_oof(rounds), groups, seed)
    both, both_ci, both_reps = _score_ci(pooled, ensemble_oof(rounds, True), groups, seed)  # same seed: paired
    diff = both_reps - plain_reps
    se = float(np.nanstd(diff[np.isfinite(diff)])) if np.isfinite(diff).any() else 0.0
    gain = both - plain
    kept = bool(np.isfinite(gain) and gain > 0 and gain > TTA_GAIN_SE * se)
    shown = lambda v: None if not np.isfinite(v) else round(abs(v), 6)  # noqa: E731 - regression scores are -RMSE
    return {
        "views": ["as is", "flipped left-right"],
        "kept": kept,
        "oof_without": shown(plain),
        "oof_with": shown(both),
        "gain": round(float(gain), 6) if np.isfinite(gain) else None,
        "paired_se": round(se, 6),
        "why": (
            f"{'kept' if kept else 'not used'}: the flip average changes the ensemble's out-of-fold score by {gain:+.4f} "
            f"({'more' if kept else 'not more'} than {TTA_GAIN_SE:g} paired-bootstrap standard error, {se:.4f})"
        ),
        "serving_cost": "2 network evaluations per member and image"
        if kept
        else "none (1 evaluation per member and image)",
    }


def raw_to_scores(problem: str, raw: np.ndarray, y_scale: float, y_shift: float) -> np.ndarray:
    """Raw averaged outputs -> what model.onnx's ``scores`` gives for them (see models.ExportModel)."""
    return raw * y_scale + y_shift if problem == "regression" else probabilities(problem, raw)


def selection_summary(rounds: list[Round], problem: str, metric: str, n_rows: int, plan: Plan, tta: dict) -> dict:
    """The report's account of the candidates tried, their out-of-fold scores and why the published model is what it is."""
    shown = lambda v: None if not np.isfinite(v) else round(abs(v), 6)  # noqa: E731 - regression scores are -RMSE
    name = "rmse" if problem == "regression" else metric
    lo_hi = lambda r: (r.ci[1], r.ci[0]) if problem == "regression" else r.ci  # noqa: E731 - -RMSE's interval, flipped
    return {
        "method": "cross-fitted ensemble",
        "folds": plan.folds,
        "rows": n_rows,
        "plan": plan.why,
        "validation": f"out-of-fold predictions over the train and validation images ({plan.folds} patient-grouped, stratified folds); "
        "each image is scored by the models that did not train on it",
        "rule": "every round's models are averaged unless the round's out-of-fold score is more than "
        f"{DROP_AT_SE:g} paired-bootstrap standard errors below the best round's; no trial or epoch is picked by a validation maximum",
        "candidates": [
            {
                "round": i + 1,
                "architecture": r.candidate.name,
                "seed": r.seed,
                "models": len(r.models),
                "epochs": [m.epochs_run for m in r.models],
                f"oof_{name}": shown(r.score),
                "ci_low": shown(lo_hi(r)[0]),
                "ci_high": shown(lo_hi(r)[1]),
                "kept": r.kept,
                "why": r.why,
            }
            for i, r in enumerate(rounds)
        ],
        "test_time_augmentation": tta,
        "round_seconds": [round(r.seconds, 1) for r in rounds],
        # issue 52: the plan follows the speed reached; what it planned as each round ended, and the speed it saw
        "planned_rounds_as_it_went": [r.planned_rounds for r in rounds],
        "measured_seconds_per_epoch": [
            round(r.seconds_per_epoch, 3) if np.isfinite(r.seconds_per_epoch) else None for r in rounds
        ],
    }
