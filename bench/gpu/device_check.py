"""The GPU check a lent device runs first: train a vision and a detection model on CUDA, then time their ONNX files.

Run on the device machine (its own python3 holds PyTorch with CUDA) from the repository root:

    python3 bench/gpu/device_check.py --data DIR --out DIR

DIR (data) holds copies of ../shared/datasets' breastmnist/ and bccd/ folders (the device cannot reach ../shared).
It trains BreastMNIST in fast mode (bench/vision-medmnist/bench.py's spec and split) and BCCD detection in fast
mode (bench/detection-bccd/run.py), both with `device: cuda`, then times each published model.onnx with ONNX
Runtime: the providers the host's onnxruntime has (CPU always; CUDA only where that build ships it), one image per
call, as `/predict` runs a model. The figures go to stdout and to OUT/device-check.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def load(path: Path, name: str):
    """Imports a bench script by path (its folder name has a hyphen, so it is no package)."""
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe() -> dict:
    import torch

    facts = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.cuda.is_available()}
    if facts["cuda"]:
        facts["gpu"] = torch.cuda.get_device_name(0)
    try:
        import onnxruntime as ort

        facts["onnxruntime"] = ort.__version__
        facts["ort_providers"] = ort.get_available_providers()
    except ImportError as err:
        facts["onnxruntime"] = f"absent ({err})"
    facts["node"] = subprocess.run(["sh", "-c", "node -v 2>&1 || true"], capture_output=True, text=True).stdout.strip()
    facts["cpus"] = os.cpu_count()
    return facts


def train_vision(data: Path, work: Path) -> dict:
    bench = load(ROOT / "bench" / "vision-medmnist" / "bench.py", "bench_medmnist")
    npz = data / "breastmnist" / "breastmnist_trainval.npz"
    work.mkdir(parents=True, exist_ok=True)
    ids = bench.make_zip(str(work / "breastmnist.zip"), npz_path=str(npz), seed=0)
    import zipfile

    with zipfile.ZipFile(work / "breastmnist.zip") as zf:
        zf.extractall(work)
    original = bench.run_spec

    def on_cuda(spec, w, tag):  # the bench writes device "auto"; name CUDA so a CPU fallback fails loudly
        spec["device"] = "cuda"
        return original(spec, w, tag)

    bench.run_spec = on_cuda
    r = bench.run_mode("fast", work, ids, 0, 0)
    test = r["manifest"]["metrics"]["test"]
    return {
        "model": find_model(work),
        "wall_s": round(r["wall_s"], 1),
        "test_auc": test["auc"]["value"],
        "test_auc_ci": [test["auc"]["ci_low"], test["auc"]["ci_high"]],
        "peak_rss_mib": round(r["peak_rss_mib"]),
        "log_tail": r["logs"][-8:],
    }


def find_model(work: Path) -> str:
    found = sorted(work.rglob("model.onnx"))
    return str(found[0]) if found else ""


def train_detection(data: Path, work: Path) -> dict:
    t0 = time.monotonic()
    cmd = [sys.executable, str(ROOT / "bench" / "detection-bccd" / "run.py"), "--mode", "fast", "--threads", "8"]
    cmd += ["--device", "cuda", "--voc", str(data / "bccd"), "--work", str(work)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout[-3000:], proc.stderr[-3000:], flush=True)
    return {
        "model": find_model(work),
        "wall_s": round(time.monotonic() - t0, 1),
        "rc": proc.returncode,
        "report": proc.stdout[-1500:],
    }


def time_model(path: str, providers: list[str], calls: int = 200) -> dict:
    """Median and p90 of one-image session.run calls, after 20 warm-ups, per provider."""
    import onnxruntime as ort

    out = {}
    for provider in providers:
        opts = ort.SessionOptions()
        try:
            sess = ort.InferenceSession(path, opts, providers=[provider])
        except Exception as err:  # noqa: BLE001 -- a provider that cannot load is a finding, not a crash
            out[provider] = f"could not load: {err}"
            continue
        feeds = {}
        for inp in sess.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in inp.shape]
            dtype = np.float32 if "float" in inp.type else np.int64
            feeds[inp.name] = np.random.default_rng(0).random(shape).astype(dtype)
        for _ in range(20):
            sess.run(None, feeds)
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            times.append((time.perf_counter() - t0) * 1000)
        out[provider] = {
            "median_ms": round(float(np.median(times)), 3),
            "p90_ms": round(float(np.percentile(times, 90)), 3),
            "used": sess.get_providers(),
            "input": {i.name: [d if isinstance(d, int) else 1 for d in i.shape] for i in sess.get_inputs()},
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/tmp/device-check")
    args = ap.parse_args()
    data, out, work = Path(args.data), Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    result: dict = {"probe": probe()}
    print("probe", json.dumps(result["probe"]), flush=True)

    def save() -> None:
        (out / "device-check.json").write_text(json.dumps(result, indent=2))

    for name, step in (("vision", train_vision), ("detection", train_detection)):
        try:
            result[name] = step(data, work / name)
        except (Exception, SystemExit) as err:  # noqa: BLE001 -- one failed step must not lose the other's figures
            result[name] = {"error": repr(err)[-2000:]}
        print(name, json.dumps({k: v for k, v in result[name].items() if k != "report"}), flush=True)
        save()
    providers = result["probe"].get("ort_providers") or []
    wanted = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in providers]
    for name in ("vision", "detection"):
        model = result[name].get("model")
        if model:
            result[name]["onnx_timing"] = time_model(model, wanted)
            print(name, "onnx timing", json.dumps(result[name]["onnx_timing"]), flush=True)
            save()


if __name__ == "__main__":
    main()
