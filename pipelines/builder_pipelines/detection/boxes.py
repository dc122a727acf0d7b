"""Box geometry in numpy: IoU, greedy NMS and the letterbox that serving applies.

Boxes are (x1, y1, x2, y2) in pixels, float. Everything here is shared by training,
evaluation and the post-processing that mirrors serving, so the rules live in one place.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image


def area(b: np.ndarray) -> np.ndarray:
    return np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in a (N,4) with every box in b (M,4) -> (N, M)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    union = area(a)[:, None] + area(b)[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float, limit: int | None = None) -> np.ndarray:
    """Greedy NMS: indices kept, highest score first. A box is dropped when its IoU with a kept,
    higher-scoring box is strictly greater than iou_threshold. Ties in score keep the lower index first.
    ``limit`` stops after that many kept boxes (the later ones could only be cut by max_detections)."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = area(b)
    keep = []
    while order.size and (limit is None or len(keep) < limit):
        i, rest = order[0], order[1:]
        keep.append(i)
        iw = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        ih = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = iw * ih
        union = areas[i] + areas[rest] - inter
        iou = np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)
        order = rest[iou <= iou_threshold]
    return np.asarray(keep, dtype=np.int64)


def js_round(x: float) -> int:
    """Math.round of JavaScript (half up), so Python and the TypeScript serving agree on sizes."""
    return int(math.floor(x + 0.5))


def letterbox_geometry(w: int, h: int, in_w: int, in_h: int) -> tuple[float, int, int]:
    """scale = min(in_w / w, in_h / h); the resized image is (round(w*scale), round(h*scale)),
    each at least 1 and at most the input size, placed at the top-left corner."""
    scale = min(in_w / w, in_h / h)
    nw = min(in_w, max(1, js_round(w * scale)))
    nh = min(in_h, max(1, js_round(h * scale)))
    return scale, nw, nh


def letterbox(img: Image.Image, in_w: int, in_h: int, pad_value: int) -> tuple[np.ndarray, float]:
    """RGB uint8 array (in_h, in_w, 3) and the scale; bilinear resize, pad bottom/right."""
    img = img.convert("RGB")
    scale, nw, nh = letterbox_geometry(img.width, img.height, in_w, in_h)
    if (nw, nh) != (img.width, img.height):
        img = img.resize((nw, nh), Image.BILINEAR)
    out = np.full((in_h, in_w, 3), pad_value, dtype=np.uint8)
    out[:nh, :nw] = np.asarray(img, dtype=np.uint8)
    return out, scale


def normalise(rgb: np.ndarray, mean, std) -> np.ndarray:
    """uint8 (H, W, 3) -> float32 (3, H, W): x/255, then (x - mean) / std per channel."""
    x = rgb.astype(np.float32) / 255.0
    x = (x - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1))
