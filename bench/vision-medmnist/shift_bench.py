"""A shifted development set (issue 43 items 2 and 3): train on one acquisition setting, test on another.

The model is built by the vision pipeline (best mode unless --mode) on BreastMNIST's official train part (split
85/15 into train / validation by bench.patient_split) and tested twice on the official validation part (78 images,
disjoint from training): as it is (the internal test) and after four acquisition shifts applied to those test
images only (the shifted test):

    gamma    intensities u in [0, 1] -> u ** 1.5, then contrast 0.75 around the image mean (another scanner setting)
    blur     Gaussian blur, radius 1 px (a softer probe / lower focus)
    noise    Gaussian noise, sd 15 grey levels (lower dose / gain)
    lowres   down to half the size and back up, bilinear (a coarser acquisition matrix)

The shifted AUC is the mean of the four. ``--set large`` does the same on a large_synthetic-style set: N training
images drawn (flip, shift, noise) from the official train part only, and N_TEST test images from the official
validation part only, so that its test images are never copies of training sources.

Variants are run side by side (alternating within each seed) and compared as means over seeds with the interval of
the paired difference (t interval over seeds). ``today`` is the pipeline as it is; the others patch it in-process
(see VARIANTS) so an idea is measured before it is adopted.

Run (niced, 1 torch thread, small budget; the machine is shared):
  nice -n 10 pipelines/.venv/bin/python bench/vision-medmnist/shift_bench.py --variants today,acq --seeds 0,1,2 --budget 120
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "pipelines"))
from bench import NPZ, patient_split  # noqa: E402

SHIFTS = ("gamma", "blur", "noise", "lowres")


def shift_image(img: np.ndarray, shift: str, rng: np.random.Generator) -> np.ndarray:
    """One uint8 [H, W] image as another acquisition setting would record it."""
    x = img.astype(np.float32)
    if shift == "gamma":
        u = (x / 255.0) ** 1.5 * 255.0
        x = (u - u.mean()) * 0.75 + u.mean()
    elif shift == "blur":
        x = np.asarray(Image.fromarray(img, "L").filter(ImageFilter.GaussianBlur(1.0)), dtype=np.float32)
    elif shift == "noise":
        x = x + rng.normal(0, 15, x.shape)
    elif shift == "lowres":
        h, w = img.shape
        small = Image.fromarray(img, "L").resize((w // 2, h // 2), Image.Resampling.BILINEAR)
        x = np.asarray(small.resize((w, h), Image.Resampling.BILINEAR), dtype=np.float32)
    else:
        raise ValueError(shift)
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def make_set(root: Path, which: str, seed: int, n_train: int, n_test: int) -> dict:
    """Writes root/data/labels.csv + PNGs (train/val/test) and root/shift/<shift>/<id>.png; returns the split."""
    d = np.load(NPZ)
    rng = np.random.default_rng(1000 + seed)
    src = {"train": (d["train_images"], d["train_labels"].ravel()), "test": (d["val_images"], d["val_labels"].ravel())}
    folder = root / "data"
    (folder / "images").mkdir(parents=True)
    rows, ids = [], {"train": [], "test": []}
    for part, (images, labels) in src.items():
        count = len(images) if which == "breast" else (n_train if part == "train" else n_test)
        for i in range(count):
            j = i if which == "breast" else int(rng.integers(0, len(images)))
            img = images[j]
            if which == "large":  # a new image of the same source: flip, shift by up to 2 px, noise sd 8
                img = img[:, ::-1] if rng.random() < 0.5 else img
                img = np.roll(img, (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
                img = np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8)
            pid = f"{part[:2]}{i:05d}"
            Image.fromarray(np.ascontiguousarray(img), "L").save(folder / "images" / f"{pid}.png")
            rows.append(f"{pid},images/{pid}.png,{int(labels[j])}")
            ids[part].append(pid)
            if part == "test":
                for s in SHIFTS:
                    (root / "shift" / s).mkdir(parents=True, exist_ok=True)
                    Image.fromarray(shift_image(np.ascontiguousarray(img), s, rng), "L").save(
                        root / "shift" / s / f"{pid}.png"
                    )
    (folder / "labels.csv").write_text("patient_id,image,label\n" + "\n".join(rows) + "\n")
    labels = {r.split(",")[0]: int(r.split(",")[2]) for r in rows}
    train, val = patient_split(ids["train"], seed)
    return {"train": train, "val": val, "test": ids["test"], "labels": labels}


def auc(y: np.ndarray, s: np.ndarray) -> float:
    """Mann-Whitney AUC with ties counted half."""
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos = y == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def score(model_dir: Path, files: list[Path]) -> np.ndarray:
    """The published model.onnx's score for class 1, each file preprocessed exactly as serving does."""
    import onnxruntime as ort  # noqa: PLC0415

    from builder_pipelines.vision.preprocess import preprocess_file  # noqa: PLC0415

    manifest = json.loads((model_dir / "manifest.json").read_text())
    image = manifest["input"]["image"]
    x = np.stack([preprocess_file(str(f), image) for f in files]).astype(np.float32)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model_dir / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    return sess.run(["scores"], {"input": x})[0][:, 1]


def run_one(
    root: Path, split: dict, variant: str, seed: int, mode: str, budget: float, threads: int, device: str = "cpu"
) -> dict:
    out = root / f"out-{variant}"
    spec = {
        "schema_version": 1,
        "job_id": f"shift-{variant}-{seed}",
        "command": "train",
        "kind": "vision_classification",
        "problem": "binary",
        "data": {
            "root": str(root / "data"),
            "table": str(root / "data" / "labels.csv"),
            "id_col": "patient_id",
            "images_col": "image",
            "label_cols": ["label"],
        },
        "split": {"seed": seed, "train": split["train"], "val": split["val"], "test": split["test"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": mode, "time_budget_s": budget},
        "seed": seed,
        "device": device,
        "out_dir": str(out),
        "options": {"threads": threads} if threads else {},
    }
    spec_path = root / f"spec-{variant}.json"
    spec_path.write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "pipelines")}
    t0 = time.monotonic()
    with open(root / f"events-{variant}.jsonl", "w") as fh, open(root / f"stderr-{variant}.log", "w") as err:
        code = subprocess.call(
            [sys.executable, __file__, "--worker", variant, str(spec_path)], stdout=fh, stderr=err, env=env
        )
    if code != 0:
        raise SystemExit(f"{variant} seed {seed} failed:\n{(root / f'stderr-{variant}.log').read_text()[-3000:]}")
    wall = time.monotonic() - t0
    y = np.array([split["labels"][p] for p in split["test"]])
    internal = auc(y, score(out, [root / "data" / "images" / f"{p}.png" for p in split["test"]]))
    shifted = {s: auc(y, score(out, [root / "shift" / s / f"{p}.png" for p in split["test"]])) for s in SHIFTS}
    return {
        "variant": variant,
        "seed": seed,
        "internal": internal,
        "shifted": float(np.mean(list(shifted.values()))),
        "by_shift": shifted,
        "wall": wall,
        "manifest": json.loads((out / "manifest.json").read_text()),
    }


# ---- variants: each patches the pipeline in the worker process only --------------------------------------------


def _acquisition_augment():
    """Idea 1: augmentation for acquisition changes on top of today's (affine, brightness/contrast): per image, with
    probability 0.5 each, a random gamma (0.67-1.5, on the image's own range), a Gaussian blur (sigma 0.3-1.0),
    Gaussian noise (sd 0-0.25 in normalised units) and a lower resolution (down to 50-85 % and back up)."""
    import torch  # noqa: PLC0415
    import torch.nn.functional as F  # noqa: PLC0415

    from builder_pipelines.vision import crossfit_plan, train  # noqa: PLC0415

    base = train.augment

    def augment(x, gen, allow_flips):
        x = base(x, gen, allow_flips)
        n, c, h, w = x.shape
        u = lambda: torch.rand(n, generator=gen)  # noqa: E731
        on = lambda: (u() < 0.5).to(x.device).view(n, 1, 1, 1)  # noqa: E731
        lo = x.amin(dim=(1, 2, 3), keepdim=True)
        hi = x.amax(dim=(1, 2, 3), keepdim=True)
        unit = ((x - lo) / (hi - lo + 1e-6)).clamp(0, 1)
        gamma = torch.exp((u() * 2 - 1) * math.log(1.5)).to(x.device).view(n, 1, 1, 1)
        x = torch.where(on(), unit**gamma * (hi - lo) + lo, x)
        sigma = (0.3 + 0.7 * u()).to(x.device)
        k = torch.arange(-2, 3, device=x.device, dtype=x.dtype)
        g = torch.exp(-(k.view(1, -1) ** 2) / (2 * sigma.view(-1, 1) ** 2))
        g = g / g.sum(1, keepdim=True)  # [n, 5] per-image kernels, applied separably as a grouped convolution
        xb = x.reshape(1, n * c, h, w)
        gk = g.repeat_interleave(c, 0)
        xb = F.conv2d(F.pad(xb, (2, 2, 0, 0), mode="replicate"), gk.view(n * c, 1, 1, 5), groups=n * c)
        xb = F.conv2d(F.pad(xb, (0, 0, 2, 2), mode="replicate"), gk.view(n * c, 1, 5, 1), groups=n * c)
        x = torch.where(on(), xb.view(n, c, h, w), x)
        noise = torch.randn(x.shape, generator=gen).to(x.device) * (0.25 * u()).to(x.device).view(n, 1, 1, 1)
        x = torch.where(on(), x + noise, x)
        f = float(0.5 + 0.35 * torch.rand(1, generator=gen))
        small = F.interpolate(x, size=(max(4, int(h * f)), max(4, int(w * f))), mode="bilinear", align_corners=False)
        x = torch.where(on(), F.interpolate(small, size=(h, w), mode="bilinear", align_corners=False), x)
        return x

    train.augment = augment
    crossfit_plan.augment = augment


def _no_ema():
    """Idea 2 (control for the weight averaging the pipeline already does): EMA off."""
    import dataclasses  # noqa: PLC0415

    from builder_pipelines.vision import crossfit_plan  # noqa: PLC0415

    crossfit_plan.RECIPES[:] = [dataclasses.replace(c, ema=False) for c in crossfit_plan.RECIPES]
    crossfit_plan.LARGE_RECIPES[:] = crossfit_plan.RECIPES[:1]


def _input_standardisation():
    """Idea 2: every image standardised to its own mean and spread as the network's first step (inside the graph,
    so serving needs no change): a brightness or contrast change of the acquisition no longer reaches the features."""
    from builder_pipelines.vision import models  # noqa: PLC0415

    base = models.CamNet.features

    def features(self, x):
        m = x.mean(dim=(1, 2, 3), keepdim=True)
        s = ((x - m) ** 2).mean(dim=(1, 2, 3), keepdim=True).add(1e-4).sqrt()
        return base(self, (x - m) / s)

    models.CamNet.features = features  # forward and the exported ensemble both go through features


def _large_path():
    """Not an idea: the large-set plan (probe, measured finish, stretched schedules) on a set above 500 images, to
    time it on a machine too loaded for it to fit a real large set."""
    from builder_pipelines.vision import crossfit_plan  # noqa: PLC0415

    crossfit_plan.SMALL_MAX_IMAGES = 500


VARIANTS = {
    "today": lambda: None,
    "acq": _acquisition_augment,
    "noema": _no_ema,
    "inorm": _input_standardisation,
    "largepath": _large_path,
}


def worker(variant: str, spec_path: str) -> None:
    VARIANTS[variant]()
    from builder_pipelines.vision import run  # noqa: PLC0415

    spec = json.loads(Path(spec_path).read_text())
    run(spec, spec["out_dir"])


def paired(rows: list[dict], a: str, b: str, key: str) -> str:
    """Mean of b - a over seeds with a 95% t interval (paired by seed)."""
    by = {(r["variant"], r["seed"]): r[key] for r in rows}
    seeds = sorted({r["seed"] for r in rows if (a, r["seed"]) in by and (b, r["seed"]) in by})
    d = np.array([by[(b, s)] - by[(a, s)] for s in seeds])
    if len(d) < 2:
        return f"{d.mean():+.4f} (one seed)" if len(d) else "n/a"
    t = {2: 12.71, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571}.get(len(d), 2.3)
    half = t * d.std(ddof=1) / math.sqrt(len(d))
    return f"{d.mean():+.4f} [{d.mean() - half:+.4f}, {d.mean() + half:+.4f}] over {len(d)} seeds"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="today,acq")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--budget", type=float, default=120)
    ap.add_argument("--mode", choices=("best", "fast"), default="best")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", dest="which", choices=("breast", "large"), default="breast")
    ap.add_argument("--n-train", type=int, default=3200, help="--set large: training + validation images")
    ap.add_argument("--n-test", type=int, default=400, help="--set large: test images")
    args = ap.parse_args()
    variants = args.variants.split(",")
    rows = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        with tempfile.TemporaryDirectory(prefix="bench-shift-") as tmp:
            root = Path(tmp)
            split = make_set(root, args.which, seed, args.n_train, args.n_test)
            order = variants if seed % 2 == 0 else variants[::-1]  # alternate who runs first (load drifts)
            for v in order:
                r = run_one(root, split, v, seed, args.mode, args.budget, args.threads)
                rows.append(r)
                shifts = " ".join(f"{s} {r['by_shift'][s]:.3f}" for s in SHIFTS)
                print(
                    f"{args.which} {args.mode} seed {seed} {v:6s} internal {r['internal']:.3f} shifted {r['shifted']:.3f} ({shifts}) wall {r['wall']:.0f} s",
                    flush=True,
                )
    print(f"== {args.which}, {args.mode} mode, budget {args.budget:g} s, {args.threads} thread(s): means over seeds")
    for v in variants:
        mine = [r for r in rows if r["variant"] == v]
        print(
            f"   {v:6s} internal {np.mean([r['internal'] for r in mine]):.4f}  shifted {np.mean([r['shifted'] for r in mine]):.4f}  "
            + " ".join(f"{s} {np.mean([r['by_shift'][s] for r in mine]):.3f}" for s in SHIFTS)
        )
    for v in variants[1:]:
        print(f"   {v} - {variants[0]}: internal {paired(rows, variants[0], v, 'internal')}")
        print(f"   {v} - {variants[0]}: shifted  {paired(rows, variants[0], v, 'shifted')}")


if __name__ == "__main__":
    main()
