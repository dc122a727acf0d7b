"""ONNX export of ``scores`` + ``cam`` in one graph, checked before anything is published."""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

from .models import ExportModel

OPSET = 17
PARITY_TOL = 1e-4


def export_onnx(model: ExportModel, sample: torch.Tensor, path: str) -> None:
    """Writes model.onnx (opset 17, dynamic batch) with input ``input`` and outputs ``scores``, ``cam``."""
    model = model.cpu().eval()
    tmp = path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(
            model,
            (sample[:2].cpu(),),
            tmp,
            input_names=["input"],
            output_names=["scores", "cam"],
            dynamic_axes={"input": {0: "N"}, "scores": {0: "N"}, "cam": {0: "N"}},
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
    onnx.checker.check_model(onnx.load(tmp), full_check=True)
    os.replace(tmp, path)


def session(path: str) -> ort.InferenceSession:
    # As many threads as the pipeline gave torch (the free cores): onnxruntime's default, every core, spins against
    # other jobs on a shared host (a 3,200-image evaluation took 119 s beside another job's tests).
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = torch.get_num_threads()
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run_onnx(sess: ort.InferenceSession, x: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
    scores, cams = [], []
    for i in range(0, len(x), batch):
        s, c = sess.run(["scores", "cam"], {"input": np.ascontiguousarray(x[i : i + batch], dtype=np.float32)})
        scores.append(s)
        cams.append(c)
    return np.concatenate(scores), np.concatenate(cams)


def check_parity(model: ExportModel, path: str, x: torch.Tensor) -> dict:
    """onnxruntime vs PyTorch on real inputs (and a batch of 1): max abs difference of scores and cam.

    Raises when either exceeds PARITY_TOL, so a wrong graph is never published.
    """
    model = model.cpu().eval()
    sess = session(path)
    diffs = {"scores": 0.0, "cam": 0.0}
    for batch in (x[:1], x[:16]):
        with torch.no_grad():
            ref_s, ref_c = (t.numpy() for t in model(batch.cpu()))
        got_s, got_c = run_onnx(sess, batch.numpy())
        if got_s.shape != ref_s.shape or got_c.shape != ref_c.shape:
            raise RuntimeError(
                f"ONNX output shapes {got_s.shape}/{got_c.shape} differ from PyTorch {ref_s.shape}/{ref_c.shape}"
            )
        diffs["scores"] = max(diffs["scores"], float(np.abs(got_s - ref_s).max()))
        diffs["cam"] = max(diffs["cam"], float(np.abs(got_c - ref_c).max()))
    if max(diffs.values()) > PARITY_TOL:
        raise RuntimeError(f"ONNX and PyTorch disagree beyond {PARITY_TOL}: {diffs}")
    return diffs
