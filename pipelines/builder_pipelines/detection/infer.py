"""Runs a detector (PyTorch or ONNX Runtime) over a split and applies the serving post-processing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .boxes import letterbox, normalise
from .data import ImageRecord, open_image
from .decode import postprocess

EVAL_SCORE_FLOOR = 0.05  # mAP ranks every detection down to this score (the served threshold is higher)


@dataclass
class Prepared:
    """A split letterboxed once: normalised inputs, scales, original sizes and ground truth."""

    records: list[ImageRecord]
    inputs: list[np.ndarray]  # (3, H, W) float32 each
    scales: list[float]

    @property
    def gts(self):
        return [(r.boxes, r.labels) for r in self.records]


def prepare(records: list[ImageRecord], image_cfg: dict) -> Prepared:
    inputs, scales = [], []
    for rec in records:
        rgb, scale = letterbox(open_image(rec), image_cfg["width"], image_cfg["height"], image_cfg["pad_value"])
        inputs.append(normalise(rgb, image_cfg["mean"], image_cfg["std"]))
        scales.append(scale)
    return Prepared(records, inputs, scales)


def torch_forward(model: torch.nn.Module, batch_size: int = 16):
    def run(inputs: list[np.ndarray]):
        model.eval()
        device = next(model.parameters()).device
        out = []
        with torch.no_grad():
            for i in range(0, len(inputs), batch_size):
                b, s = model(torch.from_numpy(np.stack(inputs[i : i + batch_size])).to(device))
                out.extend(zip(b.cpu().numpy(), s.cpu().numpy()))
        return out

    return run


def onnx_forward(session):
    name = session.get_inputs()[0].name

    def run(inputs: list[np.ndarray]):
        out = []
        for x in inputs:
            b, s = session.run(["boxes", "scores"], {name: x[None]})
            out.append((b[0], s[0]))
        return out

    return run


def raw_outputs(forward, prep: Prepared):
    return forward(prep.inputs)


def detections(raw, prep: Prepared, det_cfg: dict, score_floor: float | None = None):
    """Post-processes every image with the serving rule. ``score_floor`` replaces the served threshold
    (mAP needs the low-score tail; filtering at the served threshold afterwards is exact)."""
    thr = det_cfg["score_threshold"] if score_floor is None else score_floor
    out = []
    for (b, s), rec, scale in zip(raw, prep.records, prep.scales):
        out.append(
            postprocess(
                b,
                s,
                scale,
                scale,
                rec.width,
                rec.height,
                thr,
                det_cfg["nms_iou"],
                det_cfg["max_detections"],
                det_cfg.get("class_agnostic_nms", False),
            )
        )
    return out
