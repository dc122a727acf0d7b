"""ONNX export: input "input" [1, 3, H, W] float32 -> "boxes" [1, M, 4] (x1,y1,x2,y2, input-tensor
pixels, before NMS) and "scores" [1, M, K]. Checked with onnx.checker and compared with PyTorch
before it is published."""

from __future__ import annotations

import copy
import os

import numpy as np
import onnx
import onnxruntime as ort
import torch

OPSET = 17
PARITY_TOL = 1e-4


def export_onnx(model: torch.nn.Module, path: str, sample_inputs: list[np.ndarray]) -> dict:
    """Writes ``path`` only once the graph passed onnx.checker and matched PyTorch (a temp file, then a rename, like
    the vision and tabular exports); raises otherwise and leaves nothing at ``path``. -> parity report."""
    tmp = path + ".tmp"
    try:
        report = _export_checked(model, tmp, sample_inputs)
        os.replace(tmp, path)
        return report
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _export_checked(model: torch.nn.Module, path: str, sample_inputs: list[np.ndarray]) -> dict:
    m = copy.deepcopy(model).cpu().eval().float()  # exported and checked on the CPU, wherever it trained
    dummy = torch.zeros(1, 3, m.in_h, m.in_w)
    with torch.no_grad():
        torch.onnx.export(
            m,
            (dummy,),
            path,
            input_names=["input"],
            output_names=["boxes", "scores"],
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
    onnx.checker.check_model(onnx.load(path), full_check=True)
    sess = session(path)
    worst = {"boxes": 0.0, "scores": 0.0}
    with torch.no_grad():
        for x in sample_inputs:
            tb, ts = m(torch.from_numpy(x[None]))
            ob, os_ = sess.run(["boxes", "scores"], {"input": x[None].astype(np.float32)})
            # Boxes are in pixels (up to hundreds); compare them relative to the input size.
            worst["boxes"] = max(worst["boxes"], float(np.abs(ob - tb.numpy()).max()) / max(m.in_w, m.in_h))
            worst["scores"] = max(worst["scores"], float(np.abs(os_ - ts.numpy()).max()))
    if max(worst.values()) > PARITY_TOL:
        raise RuntimeError(f"ONNX output differs from PyTorch: {worst}")
    return {
        "max_abs_diff_scores": worst["scores"],
        "max_abs_diff_boxes_over_input_side": worst["boxes"],
        "tolerance": PARITY_TOL,
        "images_compared": len(sample_inputs),
        "opset": OPSET,
    }


def session(path: str, threads: int = 2) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
