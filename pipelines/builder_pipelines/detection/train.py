"""The training loop: AdamW, warm-up then cosine decay, an exponential moving average of the weights,
epochs sized to the time budget after timing the first epoch, and the EMA snapshot with the best
validation mAP@0.5 kept."""

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


MAX_VAL_CHECKS = 4  # validation passes in the last 40% of the epochs, to pick the best EMA snapshot


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
    """Validation mAP@0.5 alone (no bootstrap), for choosing the epoch."""
    dets = detections(raw_outputs(torch_forward(model), val), val, det_cfg, score_floor=EVAL_SCORE_FLOOR)
    m = Matched(dets, val.gts, model.num_classes)
    aps = [average_precision(m.score[m.label == c], m.tp[m.label == c], int(m.n_gt[:, c].sum()))[0][0]
           for c in range(m.k)]
    aps = np.asarray(aps, float)
    return float(np.nanmean(aps)) if np.isfinite(aps).any() else 0.0


def fit(model, store: TrainStore, val: Prepared, cfg: dict, budget_s: float, seed: int, progress) -> dict:
    """Trains ``model`` in place (ends holding the chosen weights); ``budget_s`` covers training and what
    follows it (cfg["post_images"] image passes). ``progress(fraction, **extra)``."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    decay, no_decay = [], []
    for p in model.parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg["lr"])
    ema = Ema(model)
    bs = min(cfg["batch_size"], len(store))
    steps_per_epoch = max(1, len(store) // bs)
    warmup = max(10, min(300, steps_per_epoch * 2))
    start = time.monotonic()
    epochs, step, best, best_state, history = None, 0, -1.0, None, []
    epoch, checks_done = 0, 0.0
    while epochs is None or epoch < epochs:
        model.train()
        order = rng.permutation(len(store))
        losses = []
        for it in range(steps_per_epoch):
            idx = order[it * bs:(it + 1) * bs]
            batch = [sample(store, int(i), model.in_w, model.in_h, cfg["pad_value"], rng, cfg["flips"]) for i in idx]
            x = torch.stack([b[0] for b in batch])
            x = (x / 255.0 - cfg["mean_t"]) / cfg["std_t"]
            total_steps = (epochs or 10 ** 9) * steps_per_epoch
            lr_factor = min(1.0, (step + 1) / warmup) * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(1.0, step / total_steps))))
            for g in opt.param_groups:
                g["lr"] = cfg["lr"] * lr_factor
            loss, parts = detection_loss(model, model.raw(x.contiguous(memory_format=torch.channels_last)),
                                         [b[1] for b in batch], [b[2] for b in batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            ema.update(model)
            losses.append(loss.item())
            step += 1
        epoch += 1
        elapsed = time.monotonic() - start
        if epochs is None:  # size the run from the first epoch's time and one timed validation pass
            per_epoch = elapsed
            t = time.monotonic()
            quick_map50(ema.model, val, cfg["val_det"])
            checks_done = time.monotonic() - t
            per_val_image = checks_done / max(1, len(val.records))
            # What follows training (threshold choice, export, ONNX inference of val and test, bootstrap)
            # scales with the images it touches; the untrained model's many candidates make this an overestimate.
            reserve = per_val_image * cfg["post_images"] * 1.5 + min(30.0, 0.1 * budget_s)  # + export, bootstrap, figures
            checks = MAX_VAL_CHECKS * per_val_image * len(val.records)
            deadline = budget_s - reserve  # training, including its validation passes, ends by then
            epochs = int(np.clip((deadline - checks) / max(per_epoch, 1e-3), cfg["min_epochs"], cfg["max_epochs"]))
            events.log("info", f"first epoch took {per_epoch:.1f}s; training {epochs} epochs "
                               f"({reserve:.0f}s kept for evaluation and export)")
            elapsed = time.monotonic() - start
        elif epoch < epochs / 2:  # re-plan in the first half: a shared machine's speed changes
            per_epoch = (elapsed - checks_done) / epoch
            epochs = int(np.clip((deadline - checks) / max(per_epoch, 1e-3), max(epoch + 1, cfg["min_epochs"]), cfg["max_epochs"]))
        # Stop when the next epoch would end past the deadline (the schedule then ends un-annealed).
        out_of_time = epoch < epochs and elapsed * (epoch + 1) / epoch > deadline and epoch >= cfg["min_epochs"]
        check_every = max(1, math.ceil(epochs * 0.4 / MAX_VAL_CHECKS))
        entry = {"epoch": epoch, "loss": float(np.mean(losses)), "time_s": round(elapsed, 1)}
        if epoch >= epochs * 0.6 and ((epochs - epoch) % check_every == 0 or epoch >= epochs or out_of_time):
            t = time.monotonic()
            entry["val_map50"] = quick_map50(ema.model, val, cfg["val_det"])
            checks_done += time.monotonic() - t
            events.metric("val", "map50", entry["val_map50"], epoch=epoch)
            if entry["val_map50"] > best:
                best, best_state = entry["val_map50"], copy.deepcopy(ema.model.state_dict())
        events.metric("train", "loss", entry["loss"], epoch=epoch)
        history.append(entry)
        eta = (elapsed / epoch) * (epochs - epoch)
        progress(epoch / epochs, epoch=epoch, epochs=epochs, best_metric=best if best >= 0 else None, eta_s=round(eta, 1))
        if out_of_time:
            events.log("warn", f"time budget reached after {epoch} of {epochs} epochs")
            break
    model.load_state_dict(best_state if best_state is not None else ema.model.state_dict())
    return {"epochs_run": epoch, "epochs_planned": epochs, "best_val_map50": best, "history": history,
            "train_time_s": round(time.monotonic() - start, 1)}
