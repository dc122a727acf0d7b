"""ONNX export of ``scores`` + ``cam`` in one graph, checked before anything is published."""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

OPSET = 17
PARITY_TOL = 1e-4
CHECK_TOL = 2e-3


def export_onnx(
    model: torch.nn.Module, sample: torch.Tensor, path: str, extra_outputs: list[str] | None = None
) -> None:
    """Writes model.onnx (opset 17, dynamic batch) with input ``input`` and outputs ``scores``, ``cam`` (then
    ``extra_outputs``, in the module's order: the unfamiliar-input check, vision/input_check.py)."""
    names = ["scores", "cam", *(extra_outputs or [])]
    model = model.cpu().eval()
    tmp = path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(
            model,
            (sample[:2].cpu(),),
            tmp,
            input_names=["input"],
            output_names=names,
            dynamic_axes={"input": {0: "N"}, **{n: {0: "N"} for n in names}},
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


def check_parity(model: torch.nn.Module, path: str, x: torch.Tensor) -> dict:
    """onnxruntime vs PyTorch on real inputs (and a batch of 1): max abs difference of every output (scores, cam,
    and the input check when the graph carries it; its distance is compared relative to its size).

    Raises when either exceeds PARITY_TOL, so a wrong graph is never published.
    """
    model = model.cpu().eval()
    sess = session(path)
    names = [o.name for o in sess.get_outputs()]
    diffs = {n: 0.0 for n in names}
    for batch in (x[:1], x[:16]):
        with torch.no_grad():
            ref = [t.numpy() for t in model(batch.cpu())]
        got = sess.run(names, {"input": np.ascontiguousarray(batch.numpy(), dtype=np.float32)})
        for n, r, g in zip(names[2:], ref[2:], got[2:]):
            if g.shape != r.shape:
                raise RuntimeError(f"ONNX output {n} has shape {g.shape}, PyTorch {r.shape}")
            diffs[n] = max(diffs[n], float((np.abs(g - r) / np.maximum(1.0, np.abs(r))).max()))
        # The check's flatness counts pixel pairs under a cut: a pair on the cut may fall either way in float32
        # (one pair of a 28x28 image moves it by 0.0007). It decides a warning, not a score: compared more loosely.
        if len(names) > 2 and diffs[names[2]] <= CHECK_TOL:
            diffs[names[2]] = 0.0
        (ref_s, ref_c), (got_s, got_c) = ref[:2], got[:2]
        if got_s.shape != ref_s.shape or got_c.shape != ref_c.shape:
            raise RuntimeError(
                f"ONNX output shapes {got_s.shape}/{got_c.shape} differ from PyTorch {ref_s.shape}/{ref_c.shape}"
            )
        diffs["scores"] = max(diffs["scores"], float(np.abs(got_s - ref_s).max()))
        diffs["cam"] = max(diffs["cam"], float(np.abs(got_c - ref_c).max()))
    if max(diffs.values()) > PARITY_TOL:
        raise RuntimeError(f"ONNX and PyTorch disagree beyond {PARITY_TOL}: {diffs}")
    return diffs
