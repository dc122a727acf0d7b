"""How many folds and rounds a cross-fitted ensemble gets, decided before training.

Small sets (<= SMALL_MAX_IMAGES) keep the fixed plan that BreastMNIST was measured with: 5 folds, two planned
rounds of different recipes. Larger sets (PneumoniaMNIST: ~5,200 train + validation images) cannot afford that:
ten models of a few thousand images each would get a handful of epochs. For them a short probe measures the
seconds per training image and per predicted image on this machine, and the plan takes the most folds in
LARGE_FOLDS whose one round still gives every fold model at least MIN_EPOCHS epochs (or its whole schedule, if
shorter) within the training time; failing that, the fewest folds if they get at least MIN_EPOCHS_FEWEST (each
of their models still trains for a third of the time, where the search's trials get a sixth). Later rounds (new
seeds of the same recipe) follow only when a whole round still fits. When not even that fits, or the pooled
images would take too much memory, there is no plan and the pipeline uses the search on the validation split
(search.py).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import torch

from .models import CamNet
from .train import Candidate, TrainData, augment, batch_size, loss_fn, max_epochs, predict

# Recipes in the order rounds use them: the search's best-performing small ResNet first, then other
# families for diversity; later rounds repeat them with new seeds.
RECIPES = [Candidate("resnet", 16, 1, 3e-3), Candidate("mobile", 16, 1, 3e-3), Candidate("resnet", 24, 1, 2e-3)]
# Large sets repeat the small ResNet with new seeds: on the CPU the MobileNet trains ~4x slower per image and the
# wider ResNet ~2x (measured), and the rule "another round only when a whole one fits" needs rounds of equal cost.
LARGE_RECIPES = RECIPES[:1]
SMALL_MAX_IMAGES = 3000
LARGE_FOLDS = (5, 4, 3)
MIN_EPOCHS = 8
MIN_EPOCHS_FEWEST = 4
# The pooled float32 images; every fold model copies most of them once more while it trains.
MAX_POOLED_BYTES = 512 * 1024**2
PLAN_SAFETY = 0.85  # the probe misses per-epoch overheads and load changes: plan on this share of the time
PROBE_STEPS = 6
MIN_IMAGES_PER_FOLD = 4


@dataclasses.dataclass(frozen=True)
class Plan:
    folds: int
    planned_rounds: int  # the budget is first shared out between this many rounds ...
    max_rounds: int  # ... and rounds go on while a whole round still fits, up to this many
    recipes: list[Candidate]
    why: str


def small_plan() -> Plan:
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


def probe_seconds_per_image(data: TrainData, side: int, device, seed: int) -> tuple[float, float]:
    """(seconds per training image, seconds per predicted image) for the first recipe on this machine:
    a few optimiser steps with augmentation after one untimed warm-up step, then one prediction pass."""
    cand = RECIPES[0]
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
    return train_s, _predict_seconds(model, data.x_train[: 4 * bs], device)


def large_plan(n_pooled: int, train_s: float, predict_s: float, seconds: float, device) -> Plan | None:
    """The most folds whose one round fits ``seconds`` at MIN_EPOCHS per model (or a whole shorter schedule)."""
    for k in LARGE_FOLDS:
        n_fit, n_held = n_pooled * (k - 1) / k, n_pooled / k
        floor = MIN_EPOCHS_FEWEST if k == LARGE_FOLDS[-1] else MIN_EPOCHS
        epochs = min(floor, max_epochs(int(n_fit), batch_size(int(n_fit), device)))
        # an epoch: training on the other folds, then predicting the held-out fold
        round_s = k * epochs * (n_fit * train_s + n_held * predict_s)
        if round_s <= PLAN_SAFETY * seconds:
            return Plan(
                k,
                1,
                4,
                LARGE_RECIPES,
                f"{n_pooled} images: {k} folds, one planned round (at least {epochs} epochs per model need "
                f"~{math.ceil(round_s)} s of the {seconds:.0f} s training time at the probed "
                f"{train_s * 1e3:.2f} ms per training image)",
            )
    return None


def choose_plan(
    data: TrainData, n_pooled: int, side: int, device, seed: int, seconds: float
) -> tuple[Plan | None, str]:
    """The plan, or None with the reason the search is used instead."""
    if n_pooled <= SMALL_MAX_IMAGES:
        plan = small_plan()
        return plan, plan.why
    train_s, predict_s = probe_seconds_per_image(data, side, device, seed)
    plan = large_plan(n_pooled, train_s, predict_s, seconds, device)
    if plan is not None:
        return plan, plan.why
    return None, (
        f"{n_pooled} images: even {LARGE_FOLDS[-1]} folds at {MIN_EPOCHS_FEWEST} epochs per model do not fit "
        f"{seconds:.0f} s at the probed {train_s * 1e3:.2f} ms per training image; using the search on the validation split"
    )
