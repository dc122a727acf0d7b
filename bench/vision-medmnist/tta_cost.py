"""What the flip test-time augmentation costs per prediction (issue 15): onnxruntime time of a published-size
ensemble graph with and without it, one image at a time and in batches of 64.

The graph is the largest best mode publishes on 28 px images: 5 small ResNets (width 16) + 5 MobileNet-style nets
(width 16), random weights (time does not depend on them). Medians over --repeats runs after a warm-up.
Run: pipelines/.venv/bin/python bench/vision-medmnist/tta_cost.py [--threads 1] [--side 28] [--repeats 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "pipelines"))
from builder_pipelines.vision.export import export_onnx  # noqa: E402
from builder_pipelines.vision.models import CamNet, ExportModel  # noqa: E402


def median_ms(sess: ort.InferenceSession, x: np.ndarray, repeats: int) -> float:
    for _ in range(5):
        sess.run(["scores", "cam"], {"input": x})
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        sess.run(["scores", "cam"], {"input": x})
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    ap.add_argument("--side", type=int, default=28)
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    torch.manual_seed(0)
    members = [CamNet(f, 1, 2, args.side, 16, 1).eval() for f in ["resnet"] * 5 + ["mobile"] * 5]
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for tta in (False, True):
            path = str(Path(tmp) / f"m{int(tta)}.onnx")
            export_onnx(
                ExportModel(members, "binary", flip_tta=tta).eval(), torch.randn(2, 1, args.side, args.side), path
            )
            sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
            results[tta] = [
                median_ms(sess, rng.normal(size=(n, 1, args.side, args.side)).astype(np.float32), reps)
                for n, reps in ((1, args.repeats), (64, max(10, args.repeats // 10)))
            ]
    print(
        f"== 10-member ensemble graph (5 ResNet-w16 + 5 MobileNet-w16), {args.side} px, onnxruntime CPU, {args.threads} thread(s)"
    )
    for tta, (one, batch) in results.items():
        print(
            f"   flip TTA {'on ' if tta else 'off'}: {one:.2f} ms per single image   {batch:.1f} ms per batch of 64 "
            f"({batch / 64:.2f} ms per image)"
        )
    print(
        f"   ratio on/off: single {results[True][0] / results[False][0]:.2f}x   batch {results[True][1] / results[False][1]:.2f}x"
    )


if __name__ == "__main__":
    main()
