"""The training loop: AdamW, warm-up then cosine decay fitted to the time budget, an exponential moving
average of the weights, and the EMA snapshot with the best validation mAP@0.5 kept.

The schedule runs on time, not on a planned epoch count: the learning rate follows the fraction of the
training time used, so training always ends annealed at the deadline however the machine's speed
changes (a shared 2-core machine can be 10x slower for a minute; the first epoch is slow anyway).
``max_epochs`` caps it: the fraction is the larger of the time and the step fractions.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np
import torch

from ..common import events
from .augment import TrainStore, sample
from .evaluation import Matched, average_precision
from .infer import EVAL_SCORE_FLOOR, Prepared, detections, raw_outputs, torch_forward
from .loss import detection_loss

MAX_VAL_CHECKS = 4  # validation passes in the last 40% of the training time, to pick the best EMA snapshot
CHECK_FROM = 0.6
GUESS_TRAIN_SHARE = 0.7  # share of the budget assumed for training until the first epoch has been timed


class Ema:
    """Exponential moving average of the weights (and BN statistics); decay ramps up from 0."""

    def __init__(self, model, decay: float = 0.998, ramp: float = 200.0) -> None:
        self.model = copy.deepcopy(model).eval()
        self.decay, self.ramp, self.updates = decay, ramp, 0
        for p in self.model.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model) -> None:
        self.updates += 1
        d = self.decay * (1 - math.exp(-self.updates / self.ramp))
        src = model.state_dict()
        for k, v in self.model.state_dict().items():
            if v.dtype.is_floating_point:
                v.mul_(d).add_(src[k].detach(), alpha=1 - d)
            else:
                v.copy_(src[k])


def quick_map50(model, val: Prepared, det_cfg: dict) -> float:
    """Validation mAP@0.5 alone (no bootstrap), for choosing the snapshot."""
    dets = detections(raw_outputs(torch_forward(model), val), val, det_cfg, score_floor=EVAL_SCORE_FLOOR)
    m = Matched(dets, val.gts, model.num_classes)
    aps = [
        average_precision(m.score[m.label == c], m.tp[m.label == c], int(m.n_gt[:, c].sum()))[0][0] for c in range(m.k)
    ]
    aps = np.asarray(aps, float)
    return float(np.nanmean(aps)) if np.isfinite(aps).any() else 0.0


def lr_factor(step: int, warmup: int, frac: float) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine from 1 to 0.02 over the training fraction."""
    return min(1.0, (step + 1) / warmup) * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, frac))))


class Clock:
    """Training-time bookkeeping: time spent in training steps (validation passes excluded) against the
    share of the budget left for them once the reserve for what follows training is known."""

    def __init__(self, budget_s: float) -> None:
        self.start, self.checks_s = time.monotonic(), 0.0
        self.train_s = budget_s * GUESS_TRAIN_SHARE

    def trained(self) -> float:
        return time.monotonic() - self.start - self.checks_s

    def frac(self) -> float:
        return self.trained() / max(self.train_s, 1e-3)


def fit(model, store: TrainStore, val: Prepared, cfg: dict, budget_s: float, seed: int, progress) -> dict:
    """Trains ``model`` in place (ends holding the chosen weights); ``budget_s`` covers training and what
    follows it (cfg["post_images"] image passes). ``progress(fraction, **extra)``."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    device = next(model.parameters()).device  # the caller placed the model on the job's device
    mean_t, std_t = cfg["mean_t"].to(device), cfg["std_t"].to(device)
    decay, no_decay = [], []
    for p in model.parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg["lr"],
    )
    ema = Ema(model)
    bs = min(cfg["batch_size"], len(store))
    steps_per_epoch = max(1, len(store) // bs)
    max_steps = cfg["max_epochs"] * steps_per_epoch
    warmup = max(10, min(300, steps_per_epoch * cfg.get("warmup_epochs", 2)))
    weights = cfg.get("class_weights")
    clock = Clock(budget_s)
    step, epoch, best, best_state, history, planned = 0, 0, -1.0, None, [], False
    next_check = CHECK_FROM
    frac = lambda: max(clock.frac(), step / max_steps)  # noqa: E731
    while True:
        model.train()
        order = rng.permutation(len(store))
        losses = []
        for it in range(steps_per_epoch):
            idx = order[it * bs : (it + 1) * bs]
            batch = [sample(store, int(i), model.in_w, model.in_h, cfg["pad_value"], rng, cfg["flips"]) for i in idx]
            # Augmentation runs on the CPU; the batch goes to the device as uint8-range floats, normalised there.
            x = torch.stack([b[0] for b in batch]).to(device, non_blocking=True)
            x = (x / 255.0 - mean_t) / std_t
            for g in opt.param_groups:
                g["lr"] = cfg["lr"] * lr_factor(step, warmup, frac())
            loss, _ = detection_loss(
                model,
                model.raw(x.contiguous(memory_format=torch.channels_last)),
                [b[1].to(device) for b in batch],
                [b[2].to(device) for b in batch],
                weights,
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            ema.update(model)
            losses.append(loss.item())
            step += 1
            if planned and frac() >= 1.0 and epoch + 1 >= cfg["min_epochs"]:
                break  # out of training time: stop mid-epoch (samples are drawn at random anyway)
        epoch += 1
        if not planned:  # one timed validation pass sizes the reserve for what follows training
            t = time.monotonic()
            quick_map50(ema.model, val, cfg["val_det"])
            per_val_image = (time.monotonic() - t) / max(1, len(val.records))
            clock.checks_s += time.monotonic() - t
            # What follows training (threshold choice, export, ONNX inference of val and test, bootstrap)
            # scales with the images it touches; the untrained model's many candidates make this an overestimate.
            reserve = per_val_image * cfg["post_images"] * 1.5 + min(30.0, 0.1 * budget_s)
            checks = MAX_VAL_CHECKS * per_val_image * len(val.records)
            clock.train_s = max(1.0, budget_s - reserve - checks)
            planned = True
            events.log(
                "info",
                f"first epoch took {clock.trained():.1f}s; {clock.train_s:.0f}s of training "
                f"({reserve:.0f}s kept for evaluation and export)",
            )
        done = frac() >= 1.0 and epoch >= cfg["min_epochs"]
        entry = {
            "epoch": epoch,
            "loss": float(np.mean(losses)),
            "time_s": round(time.monotonic() - clock.start, 1),
            "lr": round(cfg["lr"] * lr_factor(step, warmup, frac()), 6),
        }
        if frac() >= next_check or done:
            while next_check <= frac():
                next_check += (1.0 - CHECK_FROM) / (MAX_VAL_CHECKS - 1)
            t = time.monotonic()
            entry["val_map50"] = quick_map50(ema.model, val, cfg["val_det"])
            clock.checks_s += time.monotonic() - t
            events.metric("val", "map50", entry["val_map50"], epoch=epoch)
            if entry["val_map50"] > best:
                best, best_state = entry["val_map50"], copy.deepcopy(ema.model.state_dict())
        events.metric("train", "loss", entry["loss"], epoch=epoch)
        history.append(entry)
        f = min(1.0, frac())
        epochs_est = max(epoch, round(epoch / max(f, 1e-6)))
        eta = max(0.0, clock.train_s - clock.trained()) if step < max_steps else 0.0
        progress(f, epoch=epoch, epochs=epochs_est, best_metric=best if best >= 0 else None, eta_s=round(eta, 1))
        if done:
            break
    model.load_state_dict(best_state if best_state is not None else ema.model.state_dict())
    return {
        "epochs_run": epoch,
        "steps": step,
        "best_val_map50": best,
        "history": history,
        "train_time_s": round(time.monotonic() - clock.start, 1),
    }
