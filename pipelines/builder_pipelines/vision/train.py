"""One training trial: augmentation suited to medical images, a class-weighted loss, cosine schedule,
early stopping on the validation metric, best weights kept.

Reproducible on CPU for a given seed: the data order and augmentation come from seeded generators;
only the wall-clock guard (trial deadline) can end a trial at a machine-dependent epoch.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from ..common import metrics, thresholds
from .models import CamNet

BACKBONE_LR_SCALE = 0.1  # a pretrained backbone's learning rate, as a share of the head's (fine-tuning)


@dataclass(frozen=True)
class Candidate:
    family: str
    width: int
    depth: int
    lr: float
    weight_decay: float = 5e-4
    dropout: float = 0.2
    ema: bool = True  # evaluate/keep an exponential moving average of the weights

    @property
    def name(self) -> str:
        return f"{self.family}-w{self.width}-d{self.depth}-lr{self.lr:g}"


@dataclass
class TrialResult:
    candidate: Candidate
    seed: int
    model: CamNet
    val_score: float  # selection score, higher is better
    val_loss: float
    val_out: np.ndarray  # raw outputs (logits or standardised values) on validation
    history: list[dict] = field(default_factory=list)
    epochs_run: int = 0
    stopped: str = ""
    seconds: float = 0.0


@dataclass
class TrainData:
    x_train: torch.Tensor  # float32 normalised [N, C, H, W] (on the training device)
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor
    val_onehot: np.ndarray  # classification truth for the selection metric; regression: values
    problem: str
    metric: str
    n_out: int
    class_weights: torch.Tensor | None  # CE weights or BCE pos_weight
    allow_flips: bool
    y_scale: float = 1.0  # regression: standard deviation of the target (outputs are standardised)


def selection_score(problem: str, metric: str, truth: np.ndarray, out: np.ndarray, y_scale: float = 1.0) -> float:
    """The validation number trials are compared on (higher is better; regression: -RMSE in target units)."""
    if problem == "regression":
        return -float(np.sqrt(np.mean((out[:, 0] - truth) ** 2))) * y_scale
    scores = probabilities(problem, out)
    if metric == "auc":
        point, _ = metrics._classification_point(
            problem, truth, scores, thresholds.apply_thresholds(problem, scores, None)
        )
    else:
        thr = thresholds.choose_thresholds(problem, truth, scores, metric)
        point, _ = metrics._classification_point(
            problem, truth, scores, thresholds.apply_thresholds(problem, scores, thr)
        )
    value = point[metric]
    return float(value) if value is not None and np.isfinite(value) else -math.inf


def probabilities(problem: str, logits: np.ndarray) -> np.ndarray:
    if problem == "multilabel":
        return 1 / (1 + np.exp(-logits))
    z = logits - logits.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def augment(x: torch.Tensor, gen: torch.Generator, allow_flips: bool) -> torch.Tensor:
    """Small rotations (±10°), scale (±10%), shifts (±8%), brightness/contrast jitter; flips only if allowed."""
    n = x.shape[0]
    r = lambda: torch.rand(n, generator=gen) * 2 - 1  # noqa: E731 - uniform [-1, 1], seeded, on CPU
    angle, scale, tx, ty = r() * math.radians(10), 1 + r() * 0.1, r() * 0.08, r() * 0.08
    contrast, brightness = 1 + r() * 0.15, r() * 0.15
    flip = (torch.rand(n, generator=gen) < 0.5) if allow_flips else torch.zeros(n, dtype=torch.bool)
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    sx = torch.where(flip, -1.0, 1.0)
    theta = torch.stack([torch.stack([cos * sx, -sin, tx], 1), torch.stack([sin * sx, cos, ty], 1)], 1)
    theta = theta.to(x.device, x.dtype)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    return x * contrast.to(x.device).view(n, 1, 1, 1) + brightness.to(x.device).view(n, 1, 1, 1)


def loss_fn(problem: str, out: torch.Tensor, y: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    out = out.float()
    if problem == "multilabel":
        return F.binary_cross_entropy_with_logits(out, y.float(), pos_weight=weights)
    if problem == "regression":
        return F.smooth_l1_loss(out[:, 0], y.float())
    return F.cross_entropy(out, y, weight=weights)


@torch.no_grad()
def predict(model: torch.nn.Module, x: torch.Tensor, device: torch.device, batch: int = 256) -> np.ndarray:
    model.eval()
    outs = []
    for i in range(0, len(x), batch):
        xb = x[i : i + batch].to(device, non_blocking=True)
        if device.type == "cuda":
            xb = xb.contiguous(memory_format=torch.channels_last)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                outs.append(model(xb).float().cpu())
        else:
            outs.append(model(xb).cpu())
    return torch.cat(outs).numpy().astype(np.float64)


def batch_size(n_train: int, device: torch.device) -> int:
    if device.type == "cuda":
        return 128 if n_train >= 2000 else 64
    return 32 if n_train < 4000 else 64


def max_epochs(n_train: int, bs: int) -> int:
    """About 1,500 optimiser steps, between 12 and 100 epochs: small sets get many epochs."""
    steps = max(1, n_train // bs)
    return int(min(100, max(12, round(1500 / steps))))


class WeightAverage:
    """Exponential moving average of parameters and BatchNorm statistics (steadier on small, noisy data).

    The decay spans about two epochs; early steps use a shorter window so the random start fades quickly.
    """

    def __init__(self, model: torch.nn.Module, decay: float) -> None:
        self.model = copy.deepcopy(model).eval()
        self.decay = min(0.999, decay)

    @torch.no_grad()
    def update(self, model: torch.nn.Module, step: int) -> None:
        d = min(self.decay, (1 + step) / (10 + step))
        for mine, theirs in zip(self.model.state_dict().values(), model.state_dict().values()):
            if mine.dtype.is_floating_point:
                mine.lerp_(theirs, 1 - d)
            else:
                mine.copy_(theirs)


def train_trial(
    cand: Candidate,
    data: TrainData,
    side: int,
    seed: int,
    device: torch.device,
    deadline: float,
    on_epoch=None,
    init_state: dict | None = None,
    epochs: int | None = None,
    keep: str = "best",
) -> TrialResult:
    """Trains one candidate until its schedule ends, early stopping fires, or ``deadline`` passes.

    ``keep="best"`` keeps the epoch with the best validation score (early stopping on validation);
    ``keep="last"`` runs the whole (time-fitted) schedule and keeps the final weights, so the validation
    outputs were not used for any choice and stay an honest out-of-fold estimate (cross-fitting).
    """
    if keep not in ("best", "last"):
        raise ValueError(f"keep must be 'best' or 'last', not {keep!r}")
    t0 = time.monotonic()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    in_ch = data.x_train.shape[1]
    model = CamNet(cand.family, in_ch, data.n_out, side, cand.width, cand.depth, cand.dropout)
    pretrained = False
    if init_state:  # pretrained backbone: every tensor whose name and shape match, never the head
        own = model.state_dict()
        usable = {
            k: v for k, v in init_state.items() if k in own and not k.startswith("head.") and own[k].shape == v.shape
        }
        model.load_state_dict(usable, strict=False)
        # fine-tune only a model that is mostly pretrained: another recipe (a slower machine's smaller one) trains
        # from scratch at the full rate even when a backbone is installed
        pretrained = 2 * len(usable) >= len([k for k in own if not k.startswith("head.")])
    model = model.to(device)
    if device.type == "cuda":
        model = model.to(memory_format=torch.channels_last)
    if pretrained:  # fine-tuning: the pretrained layers move at a tenth of the new head's rate
        head = [p for name, p in model.named_parameters() if name.startswith("head.")]
        body = [p for name, p in model.named_parameters() if not name.startswith("head.")]
        groups = [{"params": body, "lr_scale": BACKBONE_LR_SCALE}, {"params": head, "lr_scale": 1.0}]
    else:
        groups = [{"params": list(model.parameters()), "lr_scale": 1.0}]
    opt = torch.optim.AdamW(groups, lr=cand.lr, weight_decay=cand.weight_decay)
    n = len(data.x_train)
    bs = min(batch_size(n, device), n)
    steps_per_epoch = max(1, n // bs)
    epochs = full_epochs = epochs or max_epochs(n, bs)
    patience = max(10, epochs // 4)
    weights = data.class_weights.to(device) if data.class_weights is not None else None
    ema = WeightAverage(model, 1 - 1 / (2 * steps_per_epoch)) if cand.ema else None
    best = TrialResult(cand, seed, model, -math.inf, math.inf, np.zeros((0, data.n_out)))
    best_state, since_best, history, step, stopped = None, 0, [], 0, "schedule"
    epoch = 0
    while epoch < epochs:
        epoch += 1
        e0 = time.monotonic()
        model.train()
        order = torch.randperm(n, generator=gen)
        total, seen = 0.0, 0
        for b in range(steps_per_epoch):
            if b > 0 and time.monotonic() > deadline:
                break  # a huge epoch must not overrun the budget: evaluate what was learnt so far
            idx = order[b * bs : (b + 1) * bs]
            xb = augment(data.x_train[idx].to(device, non_blocking=True), gen, data.allow_flips)
            yb = data.y_train[idx].to(device, non_blocking=True)
            frac = step / (epochs * steps_per_epoch)  # linear warm-up (3%), then cosine decay
            lr = cand.lr * min(1.0, frac / 0.03 + 0.05) * 0.5 * (1 + math.cos(math.pi * frac))
            for g in opt.param_groups:
                g["lr"] = lr * g["lr_scale"]
            if device.type == "cuda":
                xb = xb.contiguous(memory_format=torch.channels_last)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = loss_fn(data.problem, model(xb), yb, weights)
            else:
                loss = loss_fn(data.problem, model(xb), yb, weights)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if ema is not None:
                ema.update(model, step)
            step += 1
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
        judged = ema.model if ema is not None else model
        val_out = predict(judged, data.x_val, device)
        with torch.no_grad():
            val_loss = float(
                loss_fn(
                    data.problem,
                    torch.from_numpy(val_out).float(),
                    data.y_val.cpu(),
                    weights.cpu() if weights is not None else None,
                )
            )
        score = selection_score(data.problem, data.metric, data.val_onehot, val_out, data.y_scale)
        history.append(
            {
                "epoch": epoch,
                "train_loss": round(total / max(seen, 1), 6),
                "val_loss": round(val_loss, 6),
                "val_metric": None
                if not np.isfinite(score)
                else round(abs(score) if data.problem == "regression" else score, 6),
            }
        )
        if on_epoch:
            on_epoch(epoch, epochs, history[-1])
        # Higher score wins; on a tie (small validation sets) the lower validation loss wins.
        if keep == "last" or score > best.val_score or (score == best.val_score and val_loss < best.val_loss):
            best.val_score, best.val_loss, best.val_out = score, val_loss, val_out
            best_state = copy.deepcopy(judged.state_dict())
            since_best = 0
        else:
            since_best += 1
        if since_best >= patience and keep == "best":
            stopped = f"early stop (no gain in {patience} epochs)"
            break
        took = time.monotonic() - e0
        if epoch <= 2:
            # Fit the schedule to the time left so the cosine decay completes; epoch 2 re-estimates
            # because the first epoch carries one-off start-up costs.
            fit = epoch - 1 + int(min((deadline - e0) / max(took, 1e-6), 1e6))
            epochs = max(epoch + 1, min(full_epochs, fit))
            patience = max(5, min(max(10, full_epochs // 4), epochs // 3))
        if time.monotonic() + took > deadline:
            stopped = "time budget"
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    best.model, best.history, best.epochs_run, best.stopped = model, history, len(history), stopped
    best.seconds = time.monotonic() - t0
    return best
