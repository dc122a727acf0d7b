"""Budgeted search: a short list of architectures/hyper-parameters, then more seeds of the best one,
then the best ensemble (top-k by validation score, k chosen on validation). Everything is chosen on the
validation split only; the test split is never looked at here.
"""

from __future__ import annotations

import time

import numpy as np

from ..common import events
from ..common.spec import JobSpec
from .train import Candidate, TrainData, TrialResult, selection_score, train_trial

# Small widths on purpose: MedMNIST-size data gains little from wider nets and CPU time buys epochs and seeds.
CANDIDATES = {
    "fast": [
        Candidate("resnet", 16, 1, 3e-3),
    ],
    "best": [
        Candidate("resnet", 16, 1, 3e-3),
        Candidate("resnet", 24, 1, 2e-3),
        Candidate("mobile", 16, 1, 3e-3),
        Candidate("resnet", 16, 2, 2e-3, weight_decay=5e-3, dropout=0.3),
    ],
}
TRIALS_IN_BUDGET = {"fast": 2, "best": 6}  # the budget is shared out between this many trials
MAX_POOL = {"fast": 4, "best": 10}  # early-stopped trials leave time for more, up to this
MAX_ENSEMBLE = 5
# Validation sets are small, so differences of a few thousandths are noise; within this tolerance the
# larger ensemble wins because averaging independently trained models lowers variance.
ENSEMBLE_TOLERANCE = 0.005


def run_search(
    data: TrainData,
    side: int,
    spec: JobSpec | dict,
    device,
    training_deadline: float,
    init_state: dict | None = None,
    progress_span=(0.1, 0.85),
    candidates: list[Candidate] | None = None,
) -> tuple[list[TrialResult], list[TrialResult]]:
    """Returns (all trials, the chosen ensemble members, best first). ``candidates``: instead of the mode's list
    (an installed backbone's own recipe: then every trial is a seed of it)."""
    spec = JobSpec.of(spec)
    mode, seed = spec.budget.mode, spec.seed
    cands = candidates or CANDIDATES[mode]
    pool: list[TrialResult] = []
    planned = MAX_POOL[mode]
    t_start = time.monotonic()
    lo, hi = progress_span

    # `trials` is the search's ceiling, not its current guess: a denominator that grew mid-build ("1 of 2" became
    # "4 of 4") read as the build starting over. The page says "of up to".
    def report(trial_no: int):
        def on_epoch(epoch, epochs, row):
            span = max(training_deadline - t_start, 1e-6)
            frac = lo + (hi - lo) * min(1.0, (time.monotonic() - t_start) / span)
            best = max((t.val_score for t in pool), default=None)
            events.metric("train", "loss", row["train_loss"], epoch=epoch, trial=trial_no)
            events.metric("val", "loss", row["val_loss"], epoch=epoch, trial=trial_no)
            events.metric("val", data.metric, row["val_metric"], epoch=epoch, trial=trial_no)
            events.progress(
                "training",
                frac,
                epoch=epoch,
                epochs=epochs,
                trial=trial_no,
                trials=planned,
                best_metric=None if best is None or not np.isfinite(best) else abs(best),
                eta_s=max(0.0, training_deadline - time.monotonic()),
            )

        return on_epoch

    trial_no = 0
    while trial_no < planned:
        now = time.monotonic()
        remaining = training_deadline - now
        sweep = trial_no < len(cands)
        if sweep:
            cand, trial_seed = cands[trial_no], seed
        else:  # more seeds of the best configuration: ensembles of seeds help most on small data
            cand, trial_seed = max(pool, key=lambda t: t.val_score).candidate, seed + 1000 * trial_no
        typical = float(np.median([t.seconds for t in pool])) if pool else 0.0
        if pool and remaining < 0.5 * typical:
            break  # not enough time left for a useful trial
        # Equal shares of what is left; trials beyond the plan (early stops freed time) take the rest.
        share = remaining / max(1, TRIALS_IN_BUDGET[mode] - trial_no)
        trial_no += 1
        result = train_trial(
            cand,
            data,
            side,
            trial_seed,
            device,
            min(training_deadline, now + share),
            on_epoch=report(trial_no),
            init_state=init_state,
        )
        events.log(
            "info",
            f"trial {trial_no} {cand.name} seed {trial_seed}: val {data.metric} "
            f"{abs(result.val_score):.4f} after {result.epochs_run} epochs ({result.stopped}, {result.seconds:.1f}s)",
        )
        pool.append(result)
        if time.monotonic() >= training_deadline:
            break
    return pool, choose_ensemble(pool, data)


def choose_ensemble(pool: list[TrialResult], data: TrainData) -> list[TrialResult]:
    """Top-k trials by validation score, k in 1..MAX_ENSEMBLE: the largest k whose averaged outputs score
    within ENSEMBLE_TOLERANCE of the best k on validation (regression: within that fraction of the RMSE)."""
    ranked = sorted(pool, key=lambda t: (t.val_score, -t.val_loss), reverse=True)
    ranked = [t for t in ranked if len(t.val_out)]
    if not ranked:
        raise RuntimeError("no trial produced a model within the time budget")
    scores = [ranked[0].val_score]
    for k in range(2, min(MAX_ENSEMBLE, len(ranked)) + 1):
        mean_out = np.mean([t.val_out for t in ranked[:k]], axis=0)
        scores.append(selection_score(data.problem, data.metric, data.val_onehot, mean_out, data.y_scale))
    best = max(scores)
    tol = ENSEMBLE_TOLERANCE * (abs(best) if data.problem == "regression" else 1.0)
    k = max(i + 1 for i, s in enumerate(scores) if s >= best - tol)
    return ranked[:k]
