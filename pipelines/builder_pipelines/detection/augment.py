"""Training samples: images kept in memory once, then per step a random scale (jitter around the
letterbox scale), a random crop or placement on the padded canvas, flips and a mild colour jitter.
Boxes move with the pixels; boxes cut to less than MIN_VISIBLE of their area are dropped.

Flip rule: horizontal and vertical flips are on unless spec.options.allow_flips is explicitly false
(cells and slides have no left/right; set it false for anatomy where the side matters).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from .boxes import letterbox_geometry
from .data import ImageRecord, open_image

SCALE_JITTER = (0.7, 1.3)
MIN_VISIBLE = 0.4


class TrainStore:
    """Training images resized once to the largest jitter scale (uint8 CHW tensors) with their boxes."""

    def __init__(self, records: list[ImageRecord], in_w: int, in_h: int) -> None:
        self.items = []
        for rec in records:
            img = open_image(rec)
            lb_scale, _, _ = letterbox_geometry(img.width, img.height, in_w, in_h)
            keep = min(1.0, lb_scale * SCALE_JITTER[1])
            size = (max(1, round(img.width * keep)), max(1, round(img.height * keep)))
            if size != img.size:
                img = img.resize(size, Image.BILINEAR)
            t = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1)
            self.items.append((t, rec.boxes * keep, rec.labels, lb_scale / keep))

    def __len__(self) -> int:
        return len(self.items)


def sample(store: TrainStore, i: int, in_w: int, in_h: int, pad_value: float, rng: np.random.Generator, flips: bool):
    """-> float image (3, in_h, in_w) in 0..255, boxes (n, 4) float32 tensor, labels (n,) long tensor."""
    img, boxes, labels, base = store.items[i]
    s = base * rng.uniform(*SCALE_JITTER)
    h, w = img.shape[1:]
    nh, nw = max(1, round(h * s)), max(1, round(w * s))
    x = F.interpolate(img[None].float(), size=(nh, nw), mode="bilinear", align_corners=False, antialias=s < 1)[0]
    b = boxes.astype(np.float32) * np.array([nw / w, nh / h, nw / w, nh / h], np.float32)
    if flips and rng.random() < 0.5:
        x = x.flip(2)
        b = np.stack([nw - b[:, 2], b[:, 1], nw - b[:, 0], b[:, 3]], 1)
    if flips and rng.random() < 0.5:
        x = x.flip(1)
        b = np.stack([b[:, 0], nh - b[:, 3], b[:, 2], nh - b[:, 1]], 1)
    # Crop when larger than the canvas, random placement when smaller (serving uses top-left; the
    # convolutional detector does not care where the image sits, and placement adds variety).
    cx = int(rng.integers(0, nw - in_w + 1)) if nw > in_w else 0
    cy = int(rng.integers(0, nh - in_h + 1)) if nh > in_h else 0
    px = int(rng.integers(0, in_w - nw + 1)) if nw < in_w and rng.random() < 0.5 else 0
    py = int(rng.integers(0, in_h - nh + 1)) if nh < in_h and rng.random() < 0.5 else 0
    crop = x[:, cy : cy + in_h, cx : cx + in_w]
    canvas = torch.full((3, in_h, in_w), float(pad_value))
    canvas[:, py : py + crop.shape[1], px : px + crop.shape[2]] = crop
    b = b.reshape(-1, 4) + np.array([px - cx, py - cy, px - cx, py - cy], np.float32)
    full = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    b[:, [0, 2]] = np.clip(b[:, [0, 2]], px, px + crop.shape[2])
    b[:, [1, 3]] = np.clip(b[:, [1, 3]], py, py + crop.shape[1])
    bw, bh = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    ok = (bw >= 2) & (bh >= 2) & (bw * bh >= MIN_VISIBLE * np.maximum(full, 1e-6))
    canvas = colour_jitter(canvas, rng, pad_value, (py, px, crop.shape[1], crop.shape[2]))
    return canvas, torch.from_numpy(b[ok]), torch.from_numpy(np.asarray(labels)[ok])


def colour_jitter(x: torch.Tensor, rng: np.random.Generator, pad_value: float, region) -> torch.Tensor:
    """Brightness, contrast and per-channel gain of about +-12% on the image region only."""
    py, px, h, w = region
    r = x[:, py : py + h, px : px + w]
    gain = torch.tensor(rng.uniform(0.9, 1.1, 3), dtype=torch.float32)[:, None, None]
    contrast = float(rng.uniform(0.88, 1.12))
    bright = float(rng.uniform(-15, 15))
    mean = r.mean()
    x[:, py : py + h, px : px + w] = ((r - mean) * contrast + mean + bright).mul(gain).clamp(0, 255)
    return x
