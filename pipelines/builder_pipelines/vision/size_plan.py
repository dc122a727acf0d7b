"""The training size of images above 64 px, chosen by measurement (issue 52 item 2).

Sending more pixels must never build a worse model than shrinking the images first: a breast-ultrasound set sent at
256 px scored AUC 0.897 while the same images shrunk to 28 px scored 0.928, because a fixed cap (224 px in best mode)
spent the CPU budget on pixels instead of epochs. Now, when the images are larger than MIN_NATIVE_SIDE, the pipeline
tries each candidate side (CANDIDATE_SIDES below the images' own size, and that size itself, never above the memory
and mode cap) on this machine before training:

* a probe: the main recipe trained for the same number of seconds at each side on a subset of the training part
  (at most PROBE_IMAGES images, split by patient into a probe-fit and a probe-held part; the validation and test parts
  are not touched), scored on the probe-held part with the build's metric, and timed per training image;
* a side is *affordable* only when the full plan still fits at it: MIN_PASSES passes over the pooled images (5 folds
  of 4/5 of them, 8 epochs each: the cross-fitted plan's first rung) at the measured seconds per image must fit in
  PLAN_SAFETY of the training time; a side whose time, extrapolated from the last measured one by its pixel count,
  could not be affordable is not probed at all;
* the choice walks up from the smallest side and moves to a larger affordable one only when its probe score beats the
  current choice's by at least MIN_GAIN: extra pixels have to pay for their seconds measurably, so a larger side is
  never chosen on noise alone.

The candidates' scores and seconds, and the reason for the choice, go into the manifest (``model_summary.input_size``)
and the build log. The decision itself (``choose``) is a pure function of the measurements and is unit-tested.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from ..common import events
from . import crossfit_plan
from .dataset import channel_stats
from .preprocess import normalise
from .train import Candidate, TrainData, selection_score, train_trial

CANDIDATE_SIDES = (28, 64, 96, 128, 160, 224)
MIN_NATIVE_SIDE = 64  # images at most this size keep their own size: nothing to choose
PROBE_SHARE = 0.2  # of the time before the training deadline, shared equally by the probed sides
PROBE_IMAGES = 600
PROBE_HELD_SHARE = 0.3
MIN_GAIN = 0.01  # the probe-score gain (AUC or the build's metric) a larger side must add over the current choice
MIN_PASSES = 32  # 5 folds x 4/5 of the pooled images x 8 epochs (crossfit_plan.MIN_EPOCHS): the plan's first rung
PLAN_SAFETY = 0.85  # as crossfit_plan.PLAN_SAFETY: the probe misses per-epoch overheads and load changes


class NoProbe(ValueError):
    """Too few patients or classes in the training part for a probe: the build keeps the capped size."""


@dataclasses.dataclass(frozen=True)
class SizeProbe:
    side: int
    score: float | None  # the probe-held score (higher is better); None: not probed
    train_s_per_image: float  # measured (probed) or extrapolated (not probed)
    epochs: int = 0
    seconds: float = 0.0
    probed: bool = True

    def affordable(self, n_images: int, training_s: float) -> bool:
        return self.train_s_per_image * n_images * MIN_PASSES <= PLAN_SAFETY * training_s

    def record(self, n_images: int, training_s: float) -> dict:
        return {
            "side": self.side,
            "probe_score": None if self.score is None or not np.isfinite(self.score) else round(self.score, 4),
            "probe_epochs": self.epochs,
            "probe_seconds": round(self.seconds, 2),
            "ms_per_training_image": round(1000 * self.train_s_per_image, 3),
            "measured": self.probed,
            "plan_fits": self.affordable(n_images, training_s),
        }


def candidate_sides(native_side: int, max_side: int) -> list[int]:
    """The sides to try: CANDIDATE_SIDES below ``max_side`` (the images' own size after the mode and memory caps),
    and ``max_side`` itself. Images of at most MIN_NATIVE_SIDE pixels get only their own size."""
    if native_side <= MIN_NATIVE_SIDE:
        return [max_side]
    return sorted({s for s in CANDIDATE_SIDES if s < max_side} | {max_side})


def worth_probing(side: int, last: SizeProbe, n_images: int, training_s: float) -> bool:
    """False when the side's time, extrapolated from the last measured side by pixel count, rules the plan out."""
    guess = dataclasses.replace(last, side=side, train_s_per_image=last.train_s_per_image * (side / last.side) ** 2)
    return guess.affordable(n_images, training_s)


def choose(probes: list[SizeProbe], n_images: int, training_s: float) -> tuple[int, str]:
    """(side, why): among the sides at which the plan fits, from the smallest up, a larger side replaces the choice
    only when its probe score is at least MIN_GAIN higher. With one such side, that side; with none, the smallest."""
    ordered = sorted(probes, key=lambda p: p.side)
    if not ordered:
        raise ValueError("no size was probed")
    fits = [p for p in ordered if p.probed and p.affordable(n_images, training_s)]
    steps = [
        f"{p.side} px does not fit the plan ({1000 * p.train_s_per_image:.2f} ms per training image"
        + ("" if p.probed else ", estimated")
        + ")"
        for p in ordered
        if p not in fits
    ]
    if not fits:
        return ordered[0].side, f"{ordered[0].side} px, the smallest: no size fits the plan; " + "; ".join(steps)
    if len(fits) == 1:
        return fits[0].side, f"{fits[0].side} px, the only size at which the plan fits; " + "; ".join(steps)
    best = fits[0]
    for p in fits[1:]:
        gain = (p.score if p.score is not None else -np.inf) - (best.score if best.score is not None else -np.inf)
        if gain >= MIN_GAIN:
            steps.append(f"{p.side} px gains {gain:+.3f} over {best.side} px: chosen")
            best = p
        else:
            steps.append(f"{p.side} px gains {gain:+.3f} over {best.side} px (< {MIN_GAIN}): not worth its seconds")
    scores = ", ".join(
        f"{p.side} px {p.score:.3f} ({p.epochs} epochs in {p.seconds:.1f} s)" for p in fits if p.score is not None
    )
    return best.side, f"{best.side} px chosen from equal-time probe scores ({scores}); " + "; ".join(steps)


def _probe_rows(groups: np.ndarray, y_strata: np.ndarray | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit, held) indices into the training part: at most PROBE_IMAGES images, held patients apart from fit ones."""
    rng = np.random.default_rng(seed)
    patients = rng.permutation(np.unique(groups))
    held_patients = set(patients[: max(1, round(PROBE_HELD_SHARE * len(patients)))].tolist())
    held_mask = np.array([g in held_patients for g in groups])
    rows = rng.permutation(len(groups))
    fit = np.sort([i for i in rows if not held_mask[i]][: round(PROBE_IMAGES * (1 - PROBE_HELD_SHARE))])
    held = np.sort([i for i in rows if held_mask[i]][: round(PROBE_IMAGES * PROBE_HELD_SHARE)])
    if y_strata is not None and (len(np.unique(y_strata[held])) < 2 or len(np.unique(y_strata[fit])) < 2):
        raise NoProbe("the probe's parts need two classes each")
    return fit, held


def run_probes(
    sides: list[int],
    decode,
    base: TrainData,
    groups: np.ndarray,
    y_train: torch.Tensor,
    truth: np.ndarray,
    recipe: Candidate,
    n_images: int,
    seed: int,
    device,
    probe_s: float,
    training_s: float,
) -> list[SizeProbe]:
    """Times ``recipe`` at each side (ascending; a few optimiser steps, as the cross-fitted plan's own probe), then,
    when the plan fits at more than one side, trains it for an equal share of ``probe_s`` at each of those on a probe
    subset of the training part and scores it on the probe-held patients. ``decode(rows, side)`` gives the rows' uint8
    images at that side; ``base`` carries the problem's settings. A side the last timing rules out is recorded as
    estimated, not decoded."""
    strata = truth.argmax(1) if base.problem in ("binary", "multiclass") else None
    fit, held = _probe_rows(groups, strata, seed)
    timed: list[SizeProbe] = []
    images: dict[int, TrainData] = {}
    for side in sides:
        last = timed[-1] if timed else None
        if last is not None and not worth_probing(side, last, n_images, training_s):
            timed.append(SizeProbe(side, None, last.train_s_per_image * (side / last.side) ** 2, probed=False))
            continue
        t0 = time.monotonic()
        u8 = decode(np.concatenate([fit, held]), side)
        mean, std = channel_stats(u8[: len(fit)], 1 / 255)
        x = torch.from_numpy(normalise(u8, {"scale": 1 / 255, "mean": mean, "std": std}))
        del u8
        data = dataclasses.replace(
            base,
            x_train=x[: len(fit)],
            y_train=y_train[fit],
            x_val=x[len(fit) :],
            y_val=y_train[held],
            val_onehot=truth[held],
        )
        per_image = crossfit_plan.probe_train_seconds(data, side, device, seed, recipe)
        probe = SizeProbe(side, None, per_image, seconds=time.monotonic() - t0)
        timed.append(probe)
        if probe.affordable(n_images, training_s):
            images[side] = data
    if len(images) < 2:
        return timed
    share = max(0.0, probe_s - sum(p.seconds for p in timed)) / len(images)
    out = []
    for p in timed:
        if p.side not in images:
            out.append(p)
            continue
        data = images.pop(p.side)
        t0 = time.monotonic()
        trial = train_trial(recipe, data, p.side, seed, device, t0 + share, keep="last")
        score = selection_score(data.problem, data.metric, data.val_onehot, trial.val_out, data.y_scale)
        out.append(
            dataclasses.replace(p, score=score, epochs=trial.epochs_run, seconds=p.seconds + time.monotonic() - t0)
        )
        events.log(
            "info",
            f"size probe {p.side} px: probe score {score:.4f} after {trial.epochs_run} epochs in "
            f"{time.monotonic() - t0:.1f} s, {1000 * p.train_s_per_image:.2f} ms per training image",
        )
    return out
