"""Issue 52: the large-set plan degrades step by step on a slower (busy) machine instead of dropping to the search,
and the number of rounds follows the speed measured while training. Pure decisions from given speeds: no training."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from builder_pipelines.vision import crossfit_plan as cp

sys.path.insert(0, str(Path(__file__).parent))
from device_choice import TORCH_DEVICE  # noqa: E402

CPU = TORCH_DEVICE


def _probe(train_s: float, small_train_s: float | None = None) -> cp.Probe:
    # nothing to export or score: the finish is the fixed 5 s, so the arithmetic below is the training alone
    return cp.Probe(train_s, 0.0, 0.0, 0.0, 0.0, 0.0, 5000, 600, small_train_s=small_train_s)


def _rung(plan: cp.Plan) -> tuple[str, int]:
    return plan.recipes[0].name, plan.folds


MAIN, SMALL = cp.RECIPES[0].name, cp.SMALL_RECIPE.name


@pytest.mark.parametrize(
    "slowdown, expected",
    [
        # 5,000 images, 720 s (715 s of training after the fixed 5 s finish; the plan uses 85 %, 608 s) at 1 ms per
        # training image for the main recipe and 0.5 ms for the small one, times `slowdown` (a busier machine).
        # One round at the rung's floor: folds x epochs x training images x ms.
        (1.0, (MAIN, 5)),  # 5 x 8 x 4,000 x 1 ms = 160 s
        (3.5, (MAIN, 5)),  # 560 s
        (4.5, (MAIN, 4)),  # 5 folds 720 s no; 4 x 8 x 3,750 x 4.5 ms = 540 s
        (5.5, (SMALL, 5)),  # main 4 folds 660 s no; small 5 x 8 x 4,000 x 2.75 ms = 440 s
        (8.0, (SMALL, 4)),  # small 5 folds 640 s no; small 4 folds 480 s
        (12.0, (MAIN, 3)),  # small 4 folds 720 s no; the last rung before issue 52, 3 x 4 x 3,333 x 12 ms = 480 s
        (20.0, (SMALL, 3)),  # main 3 folds 800 s no; small 3 x 4 epochs x 3,333 x 10 ms = 400 s
        (100.0, (SMALL, 3)),  # 2 epochs 1,000 s no; 1 epoch: 3 x 3,333 x 50 ms = 500 s
    ],
)
def test_a_slower_machine_walks_down_the_ladder_instead_of_dropping_to_the_search(slowdown, expected):
    plan = cp.large_plan(5000, _probe(1e-3 * slowdown, 0.5e-3 * slowdown), 720.0, CPU, 600)
    assert plan is not None and _rung(plan) == expected
    # the rung's floor fits the training time the plan keeps, and the first rung is the only one not called slower
    assert plan.folds * plan.min_epochs * plan.epoch_s <= cp.PLAN_SAFETY * (720.0 - plan.finish_s)
    assert ("a slower machine" in plan.why) == (expected != (MAIN, 5))
    if slowdown == 100.0:
        assert plan.min_epochs == 1


def test_the_old_cliff_is_gone_the_search_only_past_the_last_rung():
    # Before issue 52, 51 s here found no plan (3 folds x 4 epochs x 3,333 images at 1 ms = 40 s > 0.85 x 46 s).
    plan = cp.large_plan(5000, _probe(1e-3, 0.5e-3), 51.0, CPU, 600)
    assert plan is not None and _rung(plan) == (SMALL, 3)
    # the last rung, 3 folds x 1 epoch of the small recipe, needs 3 x 3,333 x 0.5 ms = 5 s in 85 % of the time
    assert cp.large_plan(5000, _probe(1e-3, 0.5e-3), 5.0 + 5.0 / 0.85 + 0.1, CPU, 600) is not None
    assert cp.large_plan(5000, _probe(1e-3, 0.5e-3), 5.0 + 5.0 / 0.85 - 0.1, CPU, 600) is None


def test_each_rung_costs_less_than_the_one_before():
    # the ladder is only gradual if every step down is cheaper (image-epochs x the recipe's cost, small at half)
    def cost(r: cp.Rung) -> float:  # a rung without a recipe runs the main one
        return r.folds * r.min_epochs * 5000 * (r.folds - 1) / r.folds * (0.5 if r.recipe == cp.SMALL_RECIPE else 1)

    costs = [cost(r) for r in cp.LADDER]
    assert costs == sorted(costs, reverse=True) and len(set(costs)) == len(costs)


def test_the_small_recipe_is_timed_only_when_the_main_one_does_not_fit(monkeypatch):
    timed = []

    def fake_probe(data, side, device, seed, cand=None):
        cand = cand or cp.RECIPES[0]
        timed.append(cand.name)
        return (1e-3 if cand == cp.RECIPES[0] else 0.5e-3) * slow, 0.0, None

    monkeypatch.setattr(cp, "_probe_training", fake_probe)
    monkeypatch.setattr(cp, "_export_seconds", lambda *a, **k: 0.0)
    monkeypatch.setattr(cp, "_metrics_seconds", lambda *a, **k: 0.0)
    data = dataclasses.make_dataclass("D", ["x_train", "problem", "n_out"])(None, "binary", 2)
    slow = 1.0
    plan, why, _ = cp.choose_plan(data, 5000, 28, CPU, 0, 720.0, 600, 600)
    assert timed == [MAIN] and plan.folds == 5 and plan.recipes == [cp.RECIPES[0]]
    timed.clear()
    slow = 5.5
    plan, why, _ = cp.choose_plan(data, 5000, 28, CPU, 0, 720.0, 600, 600)
    assert timed == [MAIN, SMALL] and _rung(plan) == (SMALL, 5) and why == plan.why
    timed.clear()
    slow = 1000.0  # nothing fits: the search, and the reason names the last rung
    plan, why, _ = cp.choose_plan(data, 5000, 28, CPU, 0, 720.0, 600, 600)
    assert plan is None and "not even 3 folds" in why and "search" in why


def _plan(rounds: int = 2, full: int = 10, folds: int = 5) -> cp.Plan:
    return cp.Plan(folds, rounds, 4, [cp.RECIPES[0]], "", epoch_cap=20, finish_s=0.0, epoch_s=1.0, full_epochs=full)


def test_rounds_follow_the_measured_speed():
    plan = _plan(rounds=2)  # 5 folds, a full schedule of 10 epochs: a model is 10 x the seconds per epoch
    # at the start of round 1, as probed (1 s per epoch): 120 s hold the round (50 s) and 0.85 x 120 - 50 = 52 s more,
    # one more whole round of 50 s
    assert cp.planned_rounds_now(plan, 0, 0, 1.0, 120.0) == 2
    # the host got busier: 2 s per epoch, the round is 100 s, nothing is left for a second one: its later fold models
    # get the time the second round would have had
    assert cp.planned_rounds_now(plan, 0, 0, 2.0, 120.0) == 1
    # it got quieter: 0.5 s per epoch, 25 s a round: 1 + floor((102 - 25) / 25) = 4, the plan's ceiling
    assert cp.planned_rounds_now(plan, 0, 0, 0.5, 120.0) == 4
    assert cp.planned_rounds_now(plan, 0, 0, 0.1, 1e6) == plan.max_rounds
    # never fewer than the round under way, whatever the measure says
    assert cp.planned_rounds_now(plan, 2, 3, 100.0, 1.0) == 3
    # no measure yet (or a small set's fixed plan, which has no full schedule): the plan as made
    assert cp.planned_rounds_now(plan, 0, 1, float("nan"), 120.0) == 2
    assert cp.planned_rounds_now(cp.small_plan(), 0, 1, 1.0, 1.0) == 2


def test_at_the_probed_speed_the_plan_stands_although_models_stretch_beyond_their_schedule():
    # a large plan of R rounds gives each of its R x k models T / (R x k) seconds, beyond the full schedule when the
    # machine is fast; after any number of such models, at the probed speed, the R rounds still fit
    plan = cp.large_plan(4500, cp.Probe(1e-3, 0.0, 0.0, 0.0, 0.0, 0.0, 5000, 600), 1005.0, CPU, 600)
    assert plan.planned_rounds == 3
    training = 1005.0 - plan.finish_s
    share = training / (plan.planned_rounds * plan.folds)
    for done in range(plan.planned_rounds * plan.folds):
        rounds_done, models_done = divmod(done, plan.folds)
        left = training - done * share
        assert cp.planned_rounds_now(plan, rounds_done, models_done, plan.epoch_s, left) == plan.planned_rounds
        # 1.5 times slower than probed: fewer rounds, but never fewer than the one under way
        slower = cp.planned_rounds_now(plan, rounds_done, models_done, 1.5 * plan.epoch_s, left)
        assert rounds_done + 1 <= slower <= plan.planned_rounds
        if done == 0:
            assert slower < plan.planned_rounds


def test_a_faster_machine_than_probed_lifts_the_epoch_cap_a_slower_one_keeps_it():
    plan = _plan()  # cap 20 epochs
    # 100 s for the next model at 2 s per epoch: 50 epochs fit (60 with the 20 % the schedule fit trims)
    assert cp.epoch_cap_now(plan, 2.0, 100.0) == 60
    assert cp.epoch_cap_now(plan, 10.0, 100.0) == 20  # slower: the plan's cap; train_trial fits the time itself
    assert cp.epoch_cap_now(plan, 1e-3, 100.0) == cp.MAX_STRETCH_EPOCHS
    assert cp.epoch_cap_now(plan, float("nan"), 100.0) == 20
    assert cp.epoch_cap_now(cp.small_plan(), 1.0, 100.0) is None  # small sets: the schedule as before


def test_the_run_replans_from_its_own_fold_models(monkeypatch):
    """run_crossfit hands planned_rounds_now the median seconds per epoch of the fold models it trained."""
    import numpy as np
    import torch

    from builder_pipelines.vision import crossfit
    from builder_pipelines.vision.train import TrainData, TrialResult

    seen = []
    real = crossfit.planned_rounds_now

    def spy(plan, rounds_done, models_done, seconds_per_epoch, remaining_s):
        seen.append((rounds_done, models_done, seconds_per_epoch))
        return real(plan, rounds_done, models_done, seconds_per_epoch, remaining_s)

    caps = []

    def fake_train(cand, data, side, seed, device, deadline, on_epoch=None, init_state=None, epochs=None, keep=""):
        caps.append(epochs)
        n = len(data.x_val)
        return TrialResult(cand, seed, torch.nn.Identity(), 0.5, 0.5, np.zeros((n, 2)), epochs_run=4, seconds=8.0)

    monkeypatch.setattr(crossfit, "planned_rounds_now", spy)
    monkeypatch.setattr(crossfit, "train_trial", fake_train)
    monkeypatch.setattr(crossfit, "predict", lambda m, x, d: np.zeros((len(x), 2)))
    monkeypatch.setattr(crossfit, "choose_rounds", lambda *a: None)
    n = 30
    x, y = torch.zeros(n, 1, 4, 4), torch.tensor([0, 1] * (n // 2))
    data = TrainData(x, y, x, y, np.eye(2)[y.numpy()], "binary", "auc", 2, None, False)
    groups = np.array([f"p{i}" for i in range(n)])
    rounds = crossfit.run_crossfit(data, groups, y.numpy(), 4, 0, CPU, 1e12, _plan(rounds=1, folds=3), None)
    # after the first model, every later one re-plans at 8 s / 4 epochs = 2 s per epoch, and its cap follows
    # (the deadline is far: the largest stretch)
    assert seen[0] == (0, 1, 2.0) and [m for _, m, _ in seen[:2]] == [1, 2] and all(s == 2.0 for *_, s in seen)
    assert caps[0] == 20 and caps[1:] == [cp.MAX_STRETCH_EPOCHS] * (len(caps) - 1)
    assert rounds[0].seconds_per_epoch == 2.0 and rounds[0].planned_rounds >= 1
