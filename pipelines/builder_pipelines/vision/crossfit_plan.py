"""How many folds and rounds a cross-fitted ensemble gets, decided before training.

Small sets (<= SMALL_MAX_IMAGES) keep the fixed plan that BreastMNIST was measured with: 5 folds, two planned
rounds of different recipes. Larger sets (PneumoniaMNIST: ~5,200 train + validation images) cannot afford that:
ten models of a few thousand images each would get a handful of epochs. For them a short probe measures the
seconds per training image and per predicted image on this machine, and the plan takes the first rung of LADDER
whose one round fits the training time: 5, 4, then 3 folds of the small ResNet with every fold model getting at
least MIN_EPOCHS epochs (MIN_EPOCHS_FEWEST at 3 folds), then the same with a recipe half as costly per image, then
fewer epochs (issue 52: a busy host used to drop straight to the single-split search). Later rounds (new seeds of
the same recipe) follow only when a whole round still fits, and while training the number of rounds follows the
speed measured on the fold models already trained (planned_rounds_now), not the probe alone. Only when not even
the last rung fits, or the pooled images would take too much memory, is there no plan: the pipeline then uses the
search on the validation split (search.py).

Using the whole budget on large sets (issue 43): the probe also times what follows training (the ONNX export of one
model, and the bootstrap metrics at the pooled and test sizes), so the training deadline leaves exactly what the
finish needs instead of a fixed share of the budget; the plan takes as many whole rounds as fit at the full
schedule, and every fold model's schedule is then stretched to fill its share of the training time (``epoch_cap``),
so the build ends near its budget whether the machine is fast (the schedule cap used to end rounds early: 491 s of
720 s on PneumoniaMNIST) or slow.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import time

import numpy as np
import torch

from ..common import metrics as M
from .export import export_onnx
from .models import CamNet, ExportModel
from .train import Candidate, TrainData, augment, batch_size, loss_fn, max_epochs, predict

# Recipes in the order rounds use them: the search's best-performing small ResNet first, then other
# families for diversity; later rounds repeat them with new seeds.
RECIPES = [Candidate("resnet", 16, 1, 3e-3), Candidate("mobile", 16, 1, 3e-3), Candidate("resnet", 24, 1, 2e-3)]
# Large sets repeat the small ResNet with new seeds: on the CPU the MobileNet trains ~4x slower per image and the
# wider ResNet ~2x (measured), and the rule "another round only when a whole one fits" needs rounds of equal cost.
LARGE_RECIPES = RECIPES[:1]
# About half the cost per training image of RECIPES[0] on this CPU (0.33 against 0.69 ms at 28 px, one thread,
# measured 2026-11-29); a slower machine's ladder reaches it after fewer folds (LADDER below).
SMALL_RECIPE = Candidate("resnet", 8, 1, 3e-3)
SMALL_MAX_IMAGES = 3000
LARGE_FOLDS = (5, 4, 3)
MIN_EPOCHS = 8
MIN_EPOCHS_FEWEST = 4
# The pooled float32 images; every fold model copies most of them once more while it trains.
MAX_POOLED_BYTES = 512 * 1024**2
PLAN_SAFETY = 0.85  # the probe misses per-epoch overheads and load changes: plan on this share of the time
PROBE_STEPS = 6
MIN_IMAGES_PER_FOLD = 4
FINISH_MARGIN = 1.15  # the finish estimate's allowance for load changes between the probe and the end
FINISH_FIXED_S = 5.0  # figures, report and manifest writing: small and about constant
MAX_STRETCH_EPOCHS = 200


@dataclasses.dataclass(frozen=True)
class Plan:
    folds: int
    planned_rounds: int  # the budget is first shared out between this many rounds ...
    max_rounds: int  # ... and rounds go on while a whole round still fits, up to this many
    recipes: list[Candidate]
    why: str
    # Large sets: the most epochs a fold model may be given (its schedule is fitted to its share of the time, up to
    # this), and the seconds reserved after training for export and evaluation, measured by the probe.
    epoch_cap: int | None = None
    finish_s: float | None = None
    probe: dict | None = None
    # the probed seconds per epoch of one fold model and its full schedule: the run re-plans the rounds from the
    # speed it reaches (planned_rounds_now)
    epoch_s: float | None = None
    full_epochs: int | None = None
    min_epochs: int | None = None  # the fewest epochs the plan's rung promised every fold model


def small_plan(main: Candidate | None = None) -> Plan:
    if main is not None and main != RECIPES[0]:  # a pretrained backbone: its own recipe, new seeds each round
        return Plan(5, 2, 4, [main], f"fixed plan for <= 3000 images: 5 folds, 2 planned rounds of {main.name}")
    return Plan(5, 2, 4, RECIPES, "fixed plan for <= 3000 images: 5 folds, 2 planned rounds of different recipes")


def eligible(mode: str, groups: np.ndarray, pooled_bytes: int) -> bool:
    """Best mode, enough patients for 5 folds, and (above the small-set limit) a bounded pooled copy."""
    return (
        mode == "best"
        and len(np.unique(groups)) >= max(LARGE_FOLDS) * MIN_IMAGES_PER_FOLD
        and (len(groups) <= SMALL_MAX_IMAGES or pooled_bytes <= MAX_POOLED_BYTES)
    )


@torch.no_grad()
def _predict_seconds(model: CamNet, x: torch.Tensor, device) -> float:
    t = time.monotonic()
    predict(model, x, device)
    return (time.monotonic() - t) / len(x)


def _probe_training(
    data: TrainData, side: int, device, seed: int, cand: Candidate | None = None
) -> tuple[float, float, CamNet]:
    """(seconds per training image, seconds per predicted image, the probe's model) for ``cand`` on this
    machine: a few optimiser steps with augmentation after one untimed warm-up step, then one prediction pass."""
    cand = cand or RECIPES[0]
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = CamNet(cand.family, data.x_train.shape[1], data.n_out, side, cand.width, cand.depth, cand.dropout).to(
        device
    )
    opt = torch.optim.AdamW(model.parameters(), lr=cand.lr)
    bs = min(batch_size(len(data.x_train), device), len(data.x_train))
    weights = data.class_weights.to(device) if data.class_weights is not None else None
    model.train()
    t = 0.0
    for step in range(PROBE_STEPS + 1):
        if step == 1:
            if device.type == "cuda":
                torch.cuda.synchronize()
            t = time.monotonic()
        idx = torch.randint(0, len(data.x_train), (bs,), generator=gen)
        xb = augment(data.x_train[idx].to(device), gen, data.allow_flips)
        loss = loss_fn(data.problem, model(xb), data.y_train[idx].to(device), weights)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    train_s = (time.monotonic() - t) / (PROBE_STEPS * bs)
    _predict_seconds(model, data.x_train[:bs], device)  # warm-up: the first pass carries one-off costs
    return train_s, _predict_seconds(model, data.x_train[: 4 * bs], device), model


def probe_train_seconds(data: TrainData, side: int, device, seed: int, cand: Candidate) -> float:
    """Seconds per training image of ``cand`` at ``side`` on this machine (size_plan.py times each side with it)."""
    return _probe_training(data, side, device, seed, cand)[0]


@dataclasses.dataclass(frozen=True)
class Probe:
    train_s: float  # seconds per training image (optimiser step with augmentation)
    predict_s: float  # seconds per predicted image (a warm pass)
    export_s: float  # seconds to export and check one model's ONNX graph
    metrics_pooled_s: float  # bootstrap metrics over n_pooled rows
    metrics_test_s: float  # ... over n_test rows
    seconds: float  # what the probe itself took
    n_pooled: int = 0
    n_test: int = 0
    small_train_s: float | None = None  # SMALL_RECIPE's seconds per training image, timed only when needed

    def recipe_train_s(self, recipe: Candidate) -> float | None:
        if recipe == SMALL_RECIPE:
            return self.small_train_s
        return self.train_s

    def metrics_seconds(self, n: int) -> float:
        """The bootstrap metrics' seconds at ``n`` rows, on the line through the two measured sizes (their cost is
        mostly per replicate, with a part that grows with the rows)."""
        if self.n_pooled <= self.n_test:
            return self.metrics_pooled_s
        slope = max(0.0, (self.metrics_pooled_s - self.metrics_test_s) / (self.n_pooled - self.n_test))
        return self.metrics_test_s + slope * (n - self.n_test)

    def finish_seconds(self, members: int, n_scored: int, n_validation: int | None = None) -> float:
        """Export (``members`` graphs, the parity check, ONNX scores of ``n_scored`` images with their CAMs) and
        evaluation (bootstrap metrics on the ``n_validation`` rows, the pooled ones by default, and on the test)."""
        onnx_s = members * (self.export_s + (n_scored + 17) * self.predict_s)
        metrics_s = self.metrics_seconds(self.n_pooled if n_validation is None else n_validation) + self.metrics_test_s
        return FINISH_MARGIN * (onnx_s + metrics_s) + FINISH_FIXED_S


def _metrics_seconds(problem: str, n_out: int, n: int, reps: int = 4) -> float:
    """Seconds the contract's patient-bootstrap metrics take on ``n`` rows (one patient each), from ``reps``
    replicates scaled to M.N_BOOT: their cost is almost all per replicate."""
    rng = np.random.default_rng(0)
    groups = np.arange(n).astype(str)
    t = time.monotonic()
    if problem == "regression":
        M.regression_metrics(rng.normal(size=n), rng.normal(size=n), groups, n_boot=reps)
    else:
        y = np.eye(n_out)[rng.integers(0, n_out, n)]
        s = rng.random((n, n_out))
        M.classification_metrics(problem, y, s, (s > 0.5).astype(int), groups, n_boot=reps)
    return (time.monotonic() - t) * M.N_BOOT / reps


def _export_seconds(model: CamNet, sample: torch.Tensor, problem: str) -> float:
    t = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="probe-export-") as tmp:
        export_onnx(ExportModel([model.float().cpu().eval()], problem), sample[:2].cpu(), os.path.join(tmp, "m.onnx"))
    return time.monotonic() - t


def probe_finish(
    data: TrainData, side: int, device, seed: int, n_pooled: int, n_test: int, main: Candidate | None = None
) -> Probe:
    """The training probe (of ``main``, the first rung's recipe) plus the costs of the finish, measured now."""
    t = time.monotonic()
    train_s, predict_s, model = _probe_training(data, side, device, seed, main)
    return Probe(
        train_s,
        predict_s,
        _export_seconds(model, data.x_train, data.problem),
        _metrics_seconds(data.problem, data.n_out, n_pooled),
        _metrics_seconds(data.problem, data.n_out, max(n_test, 1)),
        time.monotonic() - t,
        n_pooled,
        max(n_test, 1),
    )


@dataclasses.dataclass(frozen=True)
class Rung:
    """One step of the ladder a slower machine walks down: a recipe, a fold count and the fewest epochs every fold
    model must get (or its whole schedule, if shorter)."""

    recipe: Candidate | None  # None: the main recipe (RECIPES[0], or an installed backbone's), resolved when planning
    folds: int
    min_epochs: int


# Issue 52: a busy host used to find no plan where every fold model got 8 epochs and drop to the single-split search
# (PneumoniaMNIST, 720 s: 0.981 quiet, 0.962 with other work running). Now it walks down this ladder, each rung about
# half to two thirds the cost of the one before (in image-epochs x the recipe's cost per image: 160k, 120k, 80k,
# 60k, 40k, 20k, 10k, 5k at 5,000 images, the small recipe counted at half): fewer folds, a recipe half as costly per
# image, then fewer epochs. Only when not even the last rung fits (a host ~30x slower than the one the first rung
# needs) is the search used. The order between rungs of similar cost is a judgement, not measured.
LADDER = (
    Rung(None, 5, MIN_EPOCHS),
    Rung(None, 4, MIN_EPOCHS),
    Rung(SMALL_RECIPE, 5, MIN_EPOCHS),
    Rung(SMALL_RECIPE, 4, MIN_EPOCHS),
    Rung(None, 3, MIN_EPOCHS_FEWEST),  # the last rung before issue 52
    Rung(SMALL_RECIPE, 3, MIN_EPOCHS_FEWEST),
    Rung(SMALL_RECIPE, 3, 2),
    Rung(SMALL_RECIPE, 3, 1),
)


def _rung_plan(n_pooled: int, probe: Probe, seconds: float, device, n_scored: int, rung: Rung, train_s: float):
    k = rung.folds
    n_fit, n_held = n_pooled * (k - 1) / k, n_pooled / k
    full = max_epochs(int(n_fit), batch_size(int(n_fit), device))
    epochs = min(rung.min_epochs, full)
    # an epoch: training on the other folds, then predicting the held-out fold
    epoch_s = n_fit * train_s + n_held * probe.predict_s
    rounds = 1
    for r in range(4, 0, -1):  # the most whole rounds at the full schedule that fit, else one
        if r * k * full * epoch_s <= PLAN_SAFETY * (seconds - probe.finish_seconds(r * k, n_scored)):
            rounds = r
            break
    finish = probe.finish_seconds(rounds * k, n_scored)
    training = seconds - finish
    if k * epochs * epoch_s > PLAN_SAFETY * training:
        return None
    stretch = training / (rounds * k * epoch_s)  # epochs each model could run in its share
    cap = int(min(MAX_STRETCH_EPOCHS, max(full, math.ceil(1.2 * stretch))))
    degraded = (rung.folds, rung.min_epochs, rung.recipe == SMALL_RECIPE) != (LADDER[0].folds, MIN_EPOCHS, False)
    return Plan(
        k,
        rounds,
        4,
        [rung.recipe],
        f"{n_pooled} images: {k} folds of {rung.recipe.name}, {rounds} planned round{'s' if rounds > 1 else ''} of "
        f"{k} models (each model's schedule fitted to its share of {training:.0f} s of training, up to {cap} epochs, "
        f"at least {epochs}; the full schedule is {full}); {finish:.0f} s kept for export and evaluation; probed "
        f"{train_s * 1e3:.2f} ms per training image"
        + (
            f" (a slower machine: a step down the ladder from {LADDER[0].folds} folds at {MIN_EPOCHS} epochs)"
            if degraded
            else ""
        ),
        epoch_cap=cap,
        finish_s=finish,
        probe=dataclasses.asdict(probe),
        epoch_s=epoch_s,
        full_epochs=full,
        min_epochs=epochs,
    )


def large_plan(
    n_pooled: int, probe: Probe, seconds: float, device, n_scored: int, main: Candidate | None = None
) -> Plan | None:
    """The first rung of LADDER whose one round fits (every model at its rung's epochs, or a whole shorter schedule)
    in the time left after the finish; then as many whole rounds at the full schedule as fit (at least one), and an
    epoch cap that lets every fold model's schedule fill its share of the training time. None at the first rung whose
    recipe the probe has not timed (choose_plan then times it and asks again) or when no rung fits. ``main``: the
    recipe of the rungs that name none (RECIPES[0], or an installed backbone's own recipe, timed by the probe)."""
    for rung in LADDER:
        if rung.recipe is None:
            rung = dataclasses.replace(rung, recipe=main or RECIPES[0])
        train_s = probe.recipe_train_s(rung.recipe)
        if train_s is None:
            return None
        plan = _rung_plan(n_pooled, probe, seconds, device, n_scored, rung, train_s)
        if plan is not None:
            return plan
    return None


def planned_rounds_now(
    plan: Plan, rounds_done: int, models_done: int, seconds_per_epoch: float, remaining_s: float
) -> int:
    """Following the speed reached (issue 52): while round ``rounds_done + 1`` trains (``models_done`` of its fold
    models trained), the rounds the rest of the training time still holds at the measured ``seconds_per_epoch`` of one
    fold model (its training epoch and its held-out prediction): the round under way, whose remaining models need
    their full schedule, then as many whole rounds at the full schedule as fit what is left, as the plan counted
    them. Never fewer than the round under way (the out-of-fold predictions need all its folds), never more than the
    plan's ceiling. A host that got busier gives the round under way the time a later round would have had; one that
    got quieter plans more rounds; at the probed speed the plan stands (models stretched beyond their full schedule
    took only their share)."""
    current = rounds_done + 1
    if not (seconds_per_epoch > 0 and math.isfinite(seconds_per_epoch)) or plan.full_epochs is None:
        return max(current, plan.planned_rounds)
    model_s = plan.full_epochs * seconds_per_epoch
    rest_of_round = max(0, plan.folds - models_done) * model_s
    extra = int(max(0.0, PLAN_SAFETY * remaining_s - rest_of_round) // (plan.folds * model_s))
    return max(current, min(plan.max_rounds, current + extra))


def epoch_cap_now(plan: Plan, seconds_per_epoch: float, share_s: float) -> int | None:
    """The most epochs the next fold model may run, from the speed reached: a machine faster than probed (a load that
    went away, or a probe disturbed by a burst) would otherwise end every model at the plan's cap and leave the rest
    of the budget unused (measured: 164 s of 218 s of training, issue 52). Never below the plan's cap: train_trial
    fits the schedule down to the model's time share by itself when the machine is slower."""
    if plan.epoch_cap is None or not (seconds_per_epoch > 0 and math.isfinite(seconds_per_epoch)):
        return plan.epoch_cap
    fits = math.ceil(1.2 * share_s / seconds_per_epoch)
    return int(max(plan.epoch_cap, min(MAX_STRETCH_EPOCHS, fits)))


SEARCH_MEMBERS = 5  # the finish of the search is estimated for its largest ensemble (search.MAX_ENSEMBLE)


def choose_plan(
    data: TrainData,
    n_pooled: int,
    side: int,
    device,
    seed: int,
    seconds: float,
    n_scored: int = 0,
    n_test: int = 0,
    main: Candidate | None = None,
) -> tuple[Plan | None, str, float | None]:
    """(the plan, or None with the reason the search is used instead; the seconds to keep for export and
    evaluation when the probe measured them). ``seconds``: to the end of the budget for a large set (the plan keeps
    its measured finish), to the training deadline for a small one (fixed reserve)."""
    main = main or RECIPES[0]
    if n_pooled <= SMALL_MAX_IMAGES:
        plan = small_plan(main)
        return plan, plan.why, None
    probe = probe_finish(data, side, device, seed, n_pooled, n_test, main)
    plan = large_plan(n_pooled, probe, seconds - probe.seconds, device, n_scored, main)
    if plan is None:  # a slow or busy machine: time the smaller recipe and walk the rest of the ladder
        t = time.monotonic()
        small_s = _probe_training(data, side, device, seed, SMALL_RECIPE)[0]
        probe = dataclasses.replace(probe, small_train_s=small_s, seconds=probe.seconds + time.monotonic() - t)
        plan = large_plan(n_pooled, probe, seconds - probe.seconds, device, n_scored, main)
    if plan is not None:
        return plan, plan.why, plan.finish_s
    finish = probe.finish_seconds(SEARCH_MEMBERS, n_scored, n_scored - n_test)  # the search scores its validation split
    return (
        None,
        f"{n_pooled} images: not even {LADDER[-1].folds} folds of {LADDER[-1].recipe.name} at "
        f"{LADDER[-1].min_epochs} epoch per model fit {seconds:.0f} s at the probed "
        f"{(probe.small_train_s or probe.train_s) * 1e3:.2f} ms per training image; using the search on the "
        f"validation split ({finish:.0f} s kept for export and evaluation)",
        finish,
    )
