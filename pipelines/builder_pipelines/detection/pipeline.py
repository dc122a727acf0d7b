"""The train and evaluate commands: data -> detector -> thresholds on validation -> ONNX ->
test metrics computed with the ONNX model and the serving post-processing -> manifest."""

from __future__ import annotations

import json
import math
import os
import shutil
import time

import numpy as np
import onnx
import onnxruntime
import torch

from ..common import dicom, events, monitoring_baseline
from ..common.device import pick_device
from ..common.errors import DataError
from ..common.evaluation import emit_metrics
from ..common.manifest import provenance, write_manifest, write_report
from ..common.spec import JobSpec
from .augment import TrainStore
from .data import read_detection_table
from .evaluation import RULES, Matched, choose_score_threshold, detection_metrics, evaluate_split
from .export import export_onnx, session
from .figures import draw_examples
from .infer import EVAL_SCORE_FLOOR, detections, onnx_forward, prepare, raw_outputs, torch_forward
from .loss import class_weights
from .model import SIZES, Detector
from .train import fit

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
PAD_VALUE = 114  # grey, in 0..255 pixel units before scaling
# Best mode trains at up to 512 px on the long side: small objects (BCCD platelets, ~40 px at 640x480) then
# cover 4-16 stride-8 cells instead of 1-4 at 320; internal-validation platelet AP@0.5 went from 0.84
# (fast, 320, 300 s) to 0.96 (best, 512, 240 s), at about 9 training images/s on 2 cores.
MODES = {
    "fast": {"size": "fast", "side": 320, "lr": 2e-3, "batch_size": 8, "min_epochs": 3, "max_epochs": 150},
    "best": {"size": "best", "side": 512, "lr": 1.5e-3, "batch_size": 8, "min_epochs": 3, "max_epochs": 300},
}
NMS_CANDIDATES = [(0.5, False), (0.6, False), (0.5, True)]  # (IoU, class-agnostic); first = default


def _input_size(records, side: int) -> tuple[int, int]:
    """Input W, H: the longer side ``side`` (no larger than the images need), the other from the
    median aspect ratio, both multiples of 32 so every level's grid is exact."""
    sizes = np.array([dicom.open_path(r.path, r.dicom).size for r in records], dtype=float)
    w, h = np.median(sizes, axis=0)
    side = min(side, int(math.ceil(max(w, h) / 32) * 32))
    up32 = lambda v: max(32, int(math.ceil(v / 32) * 32))  # noqa: E731
    return (side, up32(side * h / w)) if w >= h else (up32(side * w / h), side)


def _image_cfg(in_w, in_h) -> dict:
    return {
        "width": in_w,
        "height": in_h,
        "channels": 3,
        "resize": "letterbox",
        "interpolation": "bilinear",
        "pad_value": PAD_VALUE,
        "scale": 1 / 255,
        "mean": MEAN,
        "std": STD,
    }


def _load_pretrained(model: Detector, path: str) -> None:
    state = torch.load(path, map_location="cpu", weights_only=True)
    own = model.backbone.state_dict()
    usable = {k.removeprefix("backbone."): v for k, v in state.items()}
    usable = {k: v for k, v in usable.items() if k in own and own[k].shape == v.shape}
    model.backbone.load_state_dict(usable, strict=False)
    events.log(
        "info" if usable else "warn", f"pretrained backbone: {len(usable)} of {len(own)} tensors loaded from {path}"
    )


def _choose_serving(model, val, metric, max_det):
    """NMS setting by validation mAP@0.5, then the score threshold by the metric's rule."""
    raw = raw_outputs(torch_forward(model), val)
    tried = []
    for iou, agnostic in NMS_CANDIDATES:
        cfg = {
            "score_threshold": EVAL_SCORE_FLOOR,
            "nms_iou": iou,
            "max_detections": max_det,
            "class_agnostic_nms": agnostic,
        }
        m = Matched(detections(raw, val, cfg), val.gts, model.num_classes)
        map50 = detection_metrics(m, np.arange(len(val.records)), EVAL_SCORE_FLOOR, n_boot=0)["map50"]["value"] or 0.0
        tried.append((map50, -len(tried), cfg, m))
    map50, _, cfg, m = max(tried, key=lambda t: (round(t[0], 4), t[1]))
    thr, objective = choose_score_threshold(m, metric)
    cfg = {**cfg, "score_threshold": thr}
    return cfg, {
        "nms_trials": [
            {"nms_iou": c["nms_iou"], "class_agnostic_nms": c["class_agnostic_nms"], "val_map50": v}
            for v, _, c, _ in tried
        ],
        "objective": objective,
    }


def _framework():
    return {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__}


def train(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    t0 = time.monotonic()
    opts = spec.options
    torch.set_num_threads(int(opts.threads or 2))
    torch.manual_seed(spec.seed)
    device = pick_device(spec)
    mode = MODES[spec.budget.mode]
    events.progress("preparing", 0.0, key="reading_box_table")
    splits, classes = read_detection_table(spec)
    if not splits["train"]:
        raise DataError("train_part_empty")
    if not splits["test"]:
        raise DataError("test_part_empty")
    val_records = splits["val"]
    if not val_records:
        events.log("warn", "no validation images: thresholds are chosen on the training images")
        val_records = splits["train"]
    side = min(mode["side"], int(opts.max_image_side or mode["side"]))
    in_w, in_h = _input_size(splits["train"], side)
    image_cfg = _image_cfg(in_w, in_h)
    rendering = next((r.dicom for r in splits["train"] + val_records + splits["test"] if r.dicom), None)
    if rendering:  # the manifest records how DICOMs were rendered, for serving to do the same
        image_cfg["dicom"] = rendering
    store = TrainStore(splits["train"], in_w, in_h)
    val, test = prepare(val_records, image_cfg), prepare(splits["test"], image_cfg)
    max_det = int(max(100, 2 * max(len(r.boxes) for r in splits["train"] + val_records)))
    model = Detector(len(classes), in_w, in_h, mode["size"]).to(memory_format=torch.channels_last)
    if opts.pretrained_weights:
        _load_pretrained(model, opts["pretrained_weights"])
    model = model.to(device)
    flips = opts.allow_flips is not False
    counts = np.bincount(np.concatenate([r.labels for r in splits["train"]]).astype(np.int64), minlength=len(classes))
    cfg = {
        **mode,
        "weight_decay": 5e-4,
        "pad_value": PAD_VALUE,
        "flips": flips,
        "class_weights": class_weights(counts),
        "mean_t": torch.tensor(MEAN)[:, None, None] * 1.0,
        "std_t": torch.tensor(STD)[:, None, None],
        "val_det": {"score_threshold": EVAL_SCORE_FLOOR, "nms_iou": 0.5, "max_detections": max_det},
    }
    budget = spec.budget.time_budget_s
    cfg["post_images"] = len(NMS_CANDIDATES) * len(val.records) + 2 * (len(val.records) + len(test.records))
    train_budget = max(1.0, budget - (time.monotonic() - t0))
    events.log(
        "info",
        f"{len(store)} training images, {len(val.records)} validation, {len(test.records)} test; "
        f"input {in_w}x{in_h}; classes {classes}; device {device.type}; "
        f"{train_budget:.0f}s left for training and evaluation",
    )
    summary = fit(
        model,
        store,
        val,
        cfg,
        train_budget,
        spec.seed,
        lambda f, **kw: events.progress("training", 0.05 + 0.8 * f, **kw),
    )

    events.progress("evaluating", 0.86, key="choosing_threshold_nms")
    det_cfg, choice = _choose_serving(model, val, spec.threshold_metric, max_det)
    os.makedirs(out_dir, exist_ok=True)
    events.progress("exporting", 0.9, key="exporting_checked")
    parity = export_onnx(model, os.path.join(out_dir, "model.onnx"), test.inputs[:3])
    events.artifact("model.onnx", "model")
    sess = session(os.path.join(out_dir, "model.onnx"), int(opts.threads or 2))
    events.progress("evaluating", 0.93, key="test_metrics_exported")
    val_metrics, val_pr, val_served = evaluate_split(onnx_forward(sess), val, det_cfg, len(classes), spec.seed)
    test_metrics, test_pr, served = evaluate_split(onnx_forward(sess), test, det_cfg, len(classes), spec.seed)
    emit_metrics(events, "test", test_metrics)
    figures = draw_examples(out_dir, test.records, served, classes)
    report = {
        "pr_curves": {"test": test_pr, "validation": val_pr},
        "training": summary,
        "serving_choice": choice,
        "onnx_parity": parity,
        "note": "validation precision/recall are optimistic: the threshold was chosen there",
    }
    write_report(out_dir, report)
    manifest = {
        "schema_version": 1,
        "kind": "detection",
        "problem": "detection",
        "model_file": "model.onnx",
        "input": {"name": "input", "image": image_cfg},
        "outputs": {"scores": "scores", "boxes": "boxes"},
        "classes": [{"index": i, "code": c, "name": c} for i, c in enumerate(classes)],
        "threshold_rule": f"{RULES[spec.threshold_metric]}; NMS IoU and class-agnostic NMS chosen by validation mAP@0.5 "
        f"among {NMS_CANDIDATES}",
        "detection": det_cfg,
        "metric": spec.metric,
        "metrics": {"validation": val_metrics, "test": test_metrics},
        "figures": figures,
        "report_file": "report.json",
        "model_summary": {
            "architecture": "FCOS-style anchor-free detector, residual CNN backbone, FPN strides 8/16/32, shared head",
            "size": mode["size"],
            "channels": SIZES[mode["size"]][0],
            "parameters": sum(p.numel() for p in model.parameters()),
            "scores": "sqrt(sigmoid(class logit) * sigmoid(centerness logit)) per location and class",
            "letterbox": "scale = min(W/w, H/h); resized to (round(w*scale), round(h*scale)) with round half up; "
            "placed at the top-left; pad_value in 0..255 pixel units before scale/mean/std",
            "flips": flips,
            "pretrained_weights": bool(opts.pretrained_weights),
            "epochs": summary["epochs_run"],
            "best_val_map50_during_training": summary["best_val_map50"],
            "device": device.type,
            "onnx_parity": {
                "max_abs_diff": {
                    "scores": parity["max_abs_diff_scores"],
                    "boxes_over_input_side": parity["max_abs_diff_boxes_over_input_side"],
                }
            },
        },
        "provenance": provenance(spec, time.monotonic() - t0, device.type, _framework()),
        # What monitoring compares new predictions with: boxes per image, box sizes and box scores as served on the
        # validation and test images (common/monitoring_baseline.py; src/monitoring/recorder.ts bins the same way).
        "monitoring_baseline": monitoring_baseline.detection(
            list(val_served) + list(served), [(r.width, r.height) for r in list(val.records) + list(test.records)]
        ),
    }
    path = write_manifest(out_dir, manifest)
    events.progress("exporting", 1.0, key="done")
    return path


def evaluate(spec: JobSpec | dict, out_dir: str) -> str:
    """Retrospective: the source model.onnx on new images; same post-processing, new test metrics."""
    spec = JobSpec.of(spec)
    t0 = time.monotonic()
    src = spec.source_model.dir if spec.source_model else None
    if not src:
        raise DataError("source_model_missing")
    with open(os.path.join(src, "manifest.json"), encoding="utf-8") as fh:
        source = json.load(fh)
    classes = [c["code"] for c in sorted(source["classes"], key=lambda c: c["index"])]
    splits, _ = read_detection_table(spec, classes=classes, rendering=source["input"]["image"].get("dicom"))
    if not splits["test"]:
        raise DataError("evaluation_part_empty")
    events.progress("evaluating", 0.1, key="running_model_on_images", params={"images": len(splits["test"])})
    test = prepare(splits["test"], source["input"]["image"])
    os.makedirs(out_dir, exist_ok=True)
    shutil.copyfile(os.path.join(src, source["model_file"]), os.path.join(out_dir, "model.onnx"))
    sess = session(os.path.join(out_dir, "model.onnx"), int(spec.options.threads or 2))
    metrics, pr, served = evaluate_split(onnx_forward(sess), test, source["detection"], len(classes), spec.seed)
    emit_metrics(events, "test", metrics)
    figures = draw_examples(out_dir, test.records, served, classes)
    write_report(out_dir, {"pr_curves": {"test": pr}, "source_model": src})
    manifest = {k: v for k, v in source.items() if k not in ("metrics", "provenance")}
    # Detection has always been selected on mAP@0.5; models published before `metric` said so named the threshold rule's metric.
    manifest["metric"] = spec.metric
    manifest.update(
        {
            "model_file": "model.onnx",
            "metrics": {"test": metrics},
            "figures": figures,
            "report_file": "report.json",
            "provenance": provenance(spec, time.monotonic() - t0, "cpu", _framework()),
        }
    )
    path = write_manifest(out_dir, manifest)
    events.progress("evaluating", 1.0, key="done")
    return path
