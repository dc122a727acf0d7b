"""The ``train`` command: data -> budgeted search -> ONNX (checked) -> thresholds -> metrics -> manifest."""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
import torch

from ..common import clinical, events, image_descriptors, monitoring_baseline, operating_scores, subgroups, thresholds
from ..common.cpu_share import busy_cores
from ..common.data import read_table, split_indices
from ..common.device import pick_device
from ..common.errors import PART_EMPTY, DataError
from ..common.figure_tables import split_tables
from ..common.manifest import provenance, write_manifest, write_report
from ..common.spec import JobSpec
from . import backbone as backbones
from . import crossfit, crossfit_plan, dataset, input_check, size_plan
from . import evaluation as report
from .export import check_parity, export_onnx, run_onnx, session
from .models import ExportModel
from .preprocess import normalise
from .search import run_search
from .train import TrainData


def default_threads() -> int:
    """The CPU count, less the cores other processes keep busy (common/cpu_share.py).

    On a shared host, more threads than free cores makes PyTorch's OpenMP barriers spin: measured
    here, 2 threads under a load of 14 trained 9x slower than 1 thread.
    """
    cpus = os.cpu_count() or 1
    return max(1, min(cpus, cpus - busy_cores(cpus)))


def _train_tensors(targets, rows, y_mean: float, y_std: float) -> torch.Tensor:
    y = targets.y[rows]
    if targets.problem == "regression":
        return torch.tensor((y - y_mean) / y_std, dtype=torch.float32)
    if targets.problem == "multilabel":
        return torch.tensor(y, dtype=torch.float32)
    return torch.tensor(y, dtype=torch.long)


def _loss_weights(targets, rows) -> torch.Tensor | None:
    """Tempered (square-root) inverse-frequency weights: rare classes count more without wrecking calibration."""
    if targets.problem == "regression":
        return None
    if targets.problem == "multilabel":
        pos = targets.y[rows].sum(0).astype(float)
        neg = len(rows) - pos
        return torch.tensor(np.clip(np.sqrt(neg / np.maximum(pos, 1)), 1.0, 10.0), dtype=torch.float32)
    counts = np.bincount(targets.y[rows], minlength=len(targets.classes)).astype(float)
    w = np.sqrt(len(rows) / (len(counts) * np.maximum(counts, 1)))
    return torch.tensor(w / w.mean(), dtype=torch.float32)


def _pooled(
    data: TrainData, x: dict, targets, parts: dict, problem: str, y_mean: float, y_std: float, device
) -> TrainData:
    """Train + validation images as one set (validation fields = the same rows) for cross-fitting."""
    rows = parts["train"] + parts["val"]
    xs = torch.cat([x["train"], x["val"]]).to(device) if device.type == "cuda" else torch.cat([x["train"], x["val"]])
    y = _train_tensors(targets, rows, y_mean, y_std)
    truth = (targets.y[rows] - y_mean) / y_std if problem == "regression" else targets.onehot(rows)
    return dataclasses.replace(
        data, x_train=xs, y_train=y, x_val=xs, y_val=y, val_onehot=truth, class_weights=_loss_weights(targets, rows)
    )


def _strata(targets, parts: dict) -> np.ndarray:
    """Fold strata: the class (binary/multiclass), the first label (multi-label), the target's quartile (regression)."""
    y = targets.y[parts["train"] + parts["val"]]
    if targets.problem == "multilabel":
        return y[:, 0]
    if targets.problem == "regression":
        return np.searchsorted(np.quantile(y, [0.25, 0.5, 0.75]), y)
    return y


def _crossfit_progress(metric: str, training_deadline: float, planned_models: int):
    # planned_models is the plan's ceiling (max rounds x folds), fixed for the whole build so the page's "of up to N"
    # never changes mid-build.
    t_start = time.monotonic()

    def for_model(model_no: int):
        def on_epoch(epoch, epochs, row):
            frac = 0.1 + 0.75 * min(1.0, (time.monotonic() - t_start) / max(training_deadline - t_start, 1e-6))
            events.metric("train", "loss", row["train_loss"], epoch=epoch, trial=model_no)
            events.metric("val", "loss", row["val_loss"], epoch=epoch, trial=model_no)
            events.metric("val", metric, row["val_metric"], epoch=epoch, trial=model_no)
            events.progress(
                "training",
                frac,
                epoch=epoch,
                epochs=epochs,
                trial=model_no,
                trials=planned_models,
                eta_s=max(0.0, training_deadline - time.monotonic()),
            )

        return on_epoch

    return for_model


def _choose_side(
    sides, image, native_side, paths, parts, table, targets, spec, device, threads, deadline, y_mean, y_std
):
    """The training side by measurement (size_plan.py): each candidate side probed on a subset of the training part,
    within a share of the budget; returns the input with the chosen side and the record for the manifest."""
    train_rows = parts["train"]
    problem = spec.problem
    base = TrainData(
        x_train=torch.empty(0),
        y_train=torch.empty(0),
        x_val=torch.empty(0),
        y_val=torch.empty(0),
        val_onehot=np.zeros(0),
        problem=problem,
        metric=spec.metric,
        n_out=len(targets.classes),
        class_weights=_loss_weights(targets, train_rows),
        allow_flips=bool(spec.options.allow_flips),
        y_scale=y_std,
    )
    truth = (targets.y[train_rows] - y_mean) / y_std if problem == "regression" else targets.onehot(train_rows)
    groups = np.array([table.rows[i][spec.data.id_col] for i in train_rows])

    def decode(rows, side):
        return dataset.load_images(
            [paths[train_rows[i]] for i in rows], {**image, "width": side, "height": side}, threads
        )

    n_images = len(parts["train"]) + len(parts["val"])
    reserve = min(60.0, max(3.0, 0.08 * spec.budget.time_budget_s))
    left = deadline - reserve - time.monotonic()
    probe_s = size_plan.PROBE_SHARE * left
    events.progress("preparing", 0.02, key="trying_input_sizes", params={"sizes": ", ".join(map(str, sides))})
    t = time.monotonic()
    try:
        probes = size_plan.run_probes(
            sides,
            decode,
            base,
            groups,
            _train_tensors(targets, train_rows, y_mean, y_std),
            truth,
            crossfit_plan.RECIPES[0],
            n_images,
            spec.seed,
            device,
            probe_s,
            left - probe_s,
        )
    except size_plan.NoProbe as exc:  # too few patients or classes for a probe: the capped size, as before
        why = f"{image['width']} px (the cap): no size probe ({exc})"
        return image, {
            "native_side": native_side,
            "cap": image["width"],
            "chosen": image["width"],
            "why": why,
            "probes": [],
        }
    training_s = deadline - reserve - time.monotonic()
    side, why = size_plan.choose(probes, n_images, training_s)
    record = {
        "native_side": native_side,
        "cap": image["width"],
        "chosen": side,
        "why": why,
        "probe_seconds": round(time.monotonic() - t, 2),
        "probes": [p.record(n_images, training_s) for p in probes],
    }
    return {**image, "width": side, "height": side}, record


def train(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    t0 = time.monotonic()
    budget = spec.budget.time_budget_s
    deadline = t0 + budget
    opts = spec.options
    threads = int(opts.threads or default_threads())
    torch.set_num_threads(threads)
    torch.manual_seed(spec.seed)
    device = pick_device(spec)
    problem, metric = spec.problem, spec.metric
    events.progress("preparing", 0.0, key="reading_table")
    # An installed backbone (checked against its SHA-256 pin before anything else runs) sets the recipe and caps the
    # input at its native resolution; without one, the from-scratch recipes (backbone.py).
    backbone = backbones.from_spec(spec)
    init_state = backbones.load_checked(backbone) if backbone else backbones.load_unpinned(opts.pretrained_weights)
    if backbone is not None:
        side_cap = min(opts.max_image_side or backbone.native_side, backbone.native_side)
        spec = dataclasses.replace(spec, options=dataclasses.replace(opts, max_image_side=side_cap))

    table = dataset.expand_dicom_frames(read_table(spec.data.table), spec)
    targets = dataset.build_targets(table, spec)
    parts = split_indices(table, spec.data.id_col, spec.split.parts())
    # Resolved before any training, so a positive_class the label does not have fails at once.
    positive = clinical.positive_class(
        problem, targets.classes, targets.y[parts["train"] + parts["val"] + parts["test"]], spec.positive_class
    )
    for part in ("train", "val", "test"):
        if not parts[part]:
            raise DataError(PART_EMPTY[part])
    paths = dataset.image_paths(table, spec)
    used = parts["train"] + parts["val"] + parts["test"]
    image, native_side = dataset.choose_input([paths[i] for i in used], spec)
    y_mean = float(targets.y[parts["train"]].mean()) if problem == "regression" else 0.0
    y_std = (float(targets.y[parts["train"]].std()) or 1.0) if problem == "regression" else 1.0
    # Above 64 px the training size is measured, not fixed (issue 52): an installed backbone keeps its own size.
    sides = size_plan.candidate_sides(native_side, image["width"])
    input_size = {"native_side": native_side, "cap": image["width"], "chosen": image["width"], "why": "", "probes": []}
    if len(sides) > 1 and backbone is None:
        image, input_size = _choose_side(
            sides, image, native_side, paths, parts, table, targets, spec, device, threads, deadline, y_mean, y_std
        )
    elif len(sides) > 1:
        input_size["why"] = f"the installed backbone's own resolution ({image['width']} px)"
    elif native_side <= size_plan.MIN_NATIVE_SIDE:
        input_size["why"] = f"the images' own size ({image['width']} px): at most {size_plan.MIN_NATIVE_SIDE} px"
    else:
        input_size["why"] = f"{image['width']} px, the cap (options.max_image_side or memory): nothing smaller to try"
    events.log("info", f"input size: {input_size['why']}")
    events.progress(
        "preparing",
        0.03,
        key="decoding_images",
        params={"images": len(used), "width": image["width"], "height": image["height"], "channels": image["channels"]},
    )
    u8 = {part: dataset.load_images([paths[i] for i in rows], image, threads) for part, rows in parts.items()}
    image["mean"], image["std"] = dataset.channel_stats(u8["train"], image["scale"])
    x = {part: torch.from_numpy(normalise(v, image)) for part, v in u8.items()}
    groups = {part: np.array([table.rows[i][spec.data.id_col] for i in rows]) for part, rows in parts.items()}
    truth = {
        part: (targets.y[rows] if problem == "regression" else targets.onehot(rows)) for part, rows in parts.items()
    }
    if device.type == "cuda":
        x["train"], x["val"] = x["train"].to(device), x["val"].to(device)
    data = TrainData(
        x_train=x["train"],
        y_train=_train_tensors(targets, parts["train"], y_mean, y_std),
        x_val=x["val"],
        y_val=_train_tensors(targets, parts["val"], y_mean, y_std),
        val_onehot=(targets.y[parts["val"]] - y_mean) / y_std if problem == "regression" else truth["val"],
        problem=problem,
        metric=metric,
        n_out=len(targets.classes),
        class_weights=_loss_weights(targets, parts["train"]),
        allow_flips=bool(opts.allow_flips),
        y_scale=y_std,
    )
    events.log(
        "info",
        f"{len(parts['train'])}/{len(parts['val'])}/{len(parts['test'])} train/val/test images, "
        f"input {image['width']}x{image['height']}x{image['channels']}, device {device.type}, {threads} threads",
    )

    reserve = min(60.0, max(3.0, 0.08 * budget))  # export, parity check, metrics, figures
    t_prepared = time.monotonic()
    pooled_groups = np.concatenate([groups["train"], groups["val"]])
    selection, plan, flip_tta = None, None, False
    if crossfit_plan.eligible(spec.budget.mode, pooled_groups, (x["train"][:1].nbytes) * len(pooled_groups)):
        large = len(pooled_groups) > crossfit_plan.SMALL_MAX_IMAGES
        plan, why, finish_s = crossfit_plan.choose_plan(
            data,
            len(pooled_groups),
            image["width"],
            device,
            spec.seed,
            # a large set's plan measures what its finish needs; a small one keeps the fixed reserve
            deadline - (0.0 if large else reserve) - time.monotonic(),
            n_scored=len(parts["val"]) + len(parts["test"]),
            n_test=len(parts["test"]),
            main=backbone.recipe if backbone else None,
        )
        events.log("info", f"cross-fitted ensemble plan: {why}")
        if finish_s is not None:  # measured by the probe: the search fallback keeps it too
            reserve = finish_s
    t_training = time.monotonic()
    if plan is not None:
        # Best quality: train and validation images pooled into cross-fitted folds (see crossfit.py); the
        # validation metrics and thresholds come from out-of-fold predictions over the pooled images.
        pooled = _pooled(data, x, targets, parts, problem, y_mean, y_std, device)
        check_fit = input_check.fit_subset(x["train"], spec.seed)  # a bounded copy: the pooled one is freed below
        data = x["train"] = None  # the pooled copy holds these images now: keep one copy in memory, not two
        rounds = crossfit.run_crossfit(
            pooled,
            pooled_groups,
            _strata(targets, parts),
            image["width"],
            spec.seed,
            device,
            deadline - reserve,
            plan,
            init_state=init_state,
            on_epoch=_crossfit_progress(pooled.metric, deadline - reserve, plan.max_rounds * plan.folds),
        )
        pool = [m for r in rounds for m in r.models]
        members = [m for r in rounds if r.kept for m in r.models]
        tta = crossfit.choose_flip_tta(rounds, pooled, pooled_groups, spec.seed)
        flip_tta = tta["kept"]
        events.log("info", f"test-time augmentation: {tta['why']}")
        selection = crossfit.selection_summary(rounds, problem, metric, len(pooled_groups), plan, tta)

        oof_scores = crossfit.raw_to_scores(problem, crossfit.ensemble_oof(rounds, flip_tta), y_std, y_mean)
        allow_flips = pooled.allow_flips
        del pooled
        truth["val"] = np.concatenate([truth["train"], truth["val"]])
        groups["val"] = pooled_groups
    else:
        check_fit = None
        pool, members = run_search(
            data,
            image["width"],
            spec,
            device,
            deadline - reserve,
            init_state=init_state,
            candidates=[backbone.recipe] if backbone else None,
        )
        allow_flips = data.allow_flips
    if len(members) > 1:
        events.progress("exporting", 0.86, key="exporting_ensemble", params={"models": len(members)})
    else:
        events.progress("exporting", 0.86, key="exporting")
    model = ExportModel(
        [m.model.float().cpu() for m in members], problem, out_scale=y_std, out_shift=y_mean, flip_tta=flip_tta
    )
    # Unfamiliar inputs: statistics of the training images' features, calibrated on images they were not fitted on.
    checked, check_record = input_check.build(
        model,
        check_fit if check_fit is not None else input_check.fit_subset(x["train"], spec.seed),
        x["val"].cpu(),
        spec.seed,
        "validation images trained on by the cross-fitted ensemble" if selection is not None else "validation split",
    )
    del check_fit
    os.makedirs(out_dir, exist_ok=True)
    model_path = os.path.join(out_dir, "model.onnx")
    export_onnx(checked, x["val"].cpu(), model_path, extra_outputs=[input_check.OUTPUT])
    parity = check_parity(checked, model_path, x["val"].cpu())
    events.artifact("model.onnx", "model")

    t_exported = time.monotonic()
    events.progress("evaluating", 0.92, key="test_metrics")
    sess = session(model_path)
    check_record.update(input_check.test_rate(sess, x["test"].cpu().numpy(), check_record))
    check_record["descriptors"] = input_check.descriptors([paths[i] for i in parts["train"]], image["channels"])
    scores = {part: run_onnx(sess, x[part].cpu().numpy())[0].astype(np.float64) for part in ("val", "test")}
    # The served model's own scores for the monitoring baseline: validation and test images, or the test images alone
    # when the ensemble trained on the validation ones (their scores would look better than new patients' can).
    baseline_scores = scores["test"] if selection is not None else np.vstack([scores["val"], scores["test"]])
    if selection is not None:  # the ensemble trained on the validation images: judge them out of fold
        scores["val"] = oof_scores
    thr = (
        None
        if problem == "regression"
        else thresholds.choose_thresholds(problem, truth["val"], scores["val"], spec.threshold_metric)
    )
    seed = spec.seed
    found = {
        part: report.split_metrics(problem, truth[part], scores[part], thr, groups[part], seed, positive)
        for part in ("val", "test")
    }
    for name, entry in found["test"].items():
        events.metric("test", name, entry["value"])
    test_section = report.test_report(problem, targets.classes, truth["test"], scores["test"], thr, positive)
    histories = [t.history for t in pool]
    figures, figure_tables = split_tables(
        report.write_test_figures(out_dir, problem, targets.classes, test_section)
        + report.write_training_figures(out_dir, histories, metric)
    )
    summary = {
        "input_side": image["width"],
        # how the training size was chosen: the images' own size, the cap, each probed side's score and seconds
        "input_size": input_size,
        "device": device.type,
        "ensemble_size": len(members),
        "members": [
            {
                "architecture": m.candidate.name,
                "seed": m.seed,
                "epochs": m.epochs_run,
                "val_selection": round(abs(m.val_score), 6),
            }
            for m in members
        ],
        "trials": [
            {
                "trial": i + 1,
                "architecture": t.candidate.name,
                "seed": t.seed,
                "epochs": t.epochs_run,
                "stopped": t.stopped,
                "seconds": round(t.seconds, 2),
                "val_selection": round(abs(t.val_score), 6) if np.isfinite(t.val_score) else None,
            }
            for i, t in enumerate(pool)
        ],
        "parameters": int(sum(p.numel() for p in model.parameters())),
        # which pretrained weights the model was fine-tuned from (name, SHA-256, licence), or that none were
        "backbone": backbone.summary() if backbone else backbones.NONE_INSTALLED,
        **({"selection": selection} if selection is not None else {}),
        "onnx_parity": {"max_abs_diff": parity},
        "allow_flips": allow_flips,
        "flip_tta": flip_tta,
        # How the budget was spent (issue 43): the plan's probe, training, export (with the out-of-fold decisions and
        # the parity check), evaluation, and what was kept back for the last two when training began.
        "seconds": {
            "budget": budget,
            "preparing": round(t_prepared - t0, 2),
            "plan_probe": round(t_training - t_prepared, 2),
            "search": round(sum(t.seconds for t in pool), 2),
            "export": round(t_exported - t_training - sum(t.seconds for t in pool), 2),
            "evaluation": round(time.monotonic() - t_exported, 2),
            "kept_for_export_and_evaluation": round(reserve, 2),
        },
    }
    write_report(
        out_dir,
        {
            "kind": spec.kind,
            "problem": problem,
            "classes": targets.classes,
            "thresholds": thr,
            "metrics": found,
            "test": test_section,
            "training": {"trials": histories},
            "model_summary": summary,
            "figure_tables": figure_tables,
        },
    )
    manifest = {
        "schema_version": 1,
        "kind": "vision_classification",
        "problem": problem,
        "model_file": "model.onnx",
        "input": {"name": "input", "image": image},
        "outputs": {"scores": "scores", "cam": "cam"},
        "classes": targets.classes,
        "metrics": {"validation": found["val"], "test": found["test"]},
        "figures": figures,
        "report_file": "report.json",
        "model_summary": summary,
        "metric": metric,
        "input_check": {"mode": "flag", "image": check_record},
        "provenance": provenance(
            spec, time.monotonic() - t0, device.type, {"torch": torch.__version__, "onnx_opset": "17"}
        ),
    }
    if problem != "regression":
        manifest.update(
            thresholds=[float(t) for t in thr],
            threshold_rule=thresholds.RULES[spec.threshold_metric],
            clinical=report.clinical_section(
                problem,
                targets.classes,
                truth["test"],
                scores["test"],
                thr,
                groups["test"],
                positive,
                subgroups.inputs(spec, table, parts["test"]),
                spec.seed,
            ),
        )
    # What monitoring compares new images with (common/monitoring_baseline.py, common/image_descriptors.py):
    # aggregates of the validation and test images, never an image or a file name.
    manifest["monitoring_baseline"] = monitoring_baseline.build(
        problem,
        None,
        None,
        baseline_scores,
        thr,
        positive[0] if (problem == "binary" and positive is not None) else None,
    )
    described = image_descriptors.build([paths[i] for i in parts["val"] + parts["test"]], image.get("dicom"))
    if described:
        manifest["monitoring_baseline"]["image"] = described
    # The feature summary's projections of the same images as the scores' baseline (and for the same reason the test
    # images alone after a cross-fitted ensemble: it trained on the validation ones, whose features look more familiar).
    baseline_x = [x["test"]] if selection is not None else [x["val"], x["test"]]
    features = input_check.feature_baseline(
        sess,
        np.concatenate([v.cpu().numpy() for v in baseline_x]),
        check_record,
        "test images" if selection is not None else monitoring_baseline.SOURCE.replace("patients", "images"),
    )
    if features:
        manifest["monitoring_baseline"]["features"] = features
    if problem == "binary" and positive is not None:
        manifest["operating_scores_file"] = operating_scores.write(
            out_dir,
            positive[0],
            truth["val"],
            scores["val"],
            "out-of-fold (cross-fitted)" if selection is not None else "validation split",
            truth["test"],
            scores["test"],
            groups["test"],
        )
        events.artifact(manifest["operating_scores_file"], "report")
    events.progress("evaluating", 1.0, key="done")
    return write_manifest(out_dir, manifest)
