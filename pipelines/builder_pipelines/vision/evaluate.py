"""The ``evaluate`` command (Retrospective): the published model.onnx on new images, new test metrics.

The output manifest is the source one with metrics.test replaced, metrics.validation dropped and a
fresh provenance. Figures keep their names: test figures are redrawn from the new data, training
figures are copied from the source folder, so every listed file exists.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import time

import numpy as np
import onnxruntime

from ..common import clinical, events, subgroups
from ..common.data import read_table, split_indices
from ..common.errors import DataError
from ..common.figure_tables import split_tables
from ..common.manifest import provenance, write_manifest, write_report
from ..common.spec import JobSpec
from . import dataset
from . import evaluation as report
from .export import run_onnx, session
from .preprocess import preprocess_file


def _preprocess(path: str, image: dict) -> np.ndarray:
    try:
        return preprocess_file(path, image)
    except OSError as exc:
        raise DataError("image_unreadable", path=os.path.basename(path), detail=str(exc)) from exc


def evaluate(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    t0 = time.monotonic()
    src_dir = spec.source_model.dir if spec.source_model else None
    if not src_dir or not os.path.isfile(os.path.join(src_dir, "manifest.json")):
        raise DataError("source_model_missing")
    with open(os.path.join(src_dir, "manifest.json"), encoding="utf-8") as fh:
        source = json.load(fh)
    if source.get("kind") != "vision_classification":
        raise DataError("source_model_wrong_kind", kind=str(source.get("kind")))
    problem, image = source["problem"], source["input"]["image"]
    if spec.problem != problem:
        raise DataError("source_model_wrong_task", task=problem, asked=spec.problem)
    events.progress("preparing", 0.0, key="reading_table")
    table = read_table(spec.data.table)
    targets = dataset.build_targets(table, spec, classes=source["classes"])
    rows = split_indices(table, spec.data.id_col, spec.split.parts())["test"]
    if not rows:
        raise DataError("evaluation_part_empty")
    paths = dataset.image_paths(table, spec)
    x = np.stack([_preprocess(paths[i], image) for i in rows])

    events.progress("evaluating", 0.5, key="running_model_on_images", params={"images": len(rows)})
    scores = run_onnx(session(os.path.join(src_dir, source["model_file"])), x)[0].astype(np.float64)
    truth = targets.y[rows] if problem == "regression" else targets.onehot(rows)
    groups = np.array([table.rows[i][spec.data.id_col] for i in rows])
    thr = source.get("thresholds")
    # The source model's positive class unless this study names another; an older model without one: the rule.
    positive = clinical.positive_for_evaluation(
        problem, source["classes"], targets.y[rows], spec.positive_class, source
    )
    found = report.split_metrics(problem, truth, scores, thr, groups, spec.seed, positive)
    for name, entry in found.items():
        events.metric("test", name, entry["value"])

    os.makedirs(out_dir, exist_ok=True)
    shutil.copyfile(os.path.join(src_dir, source["model_file"]), os.path.join(out_dir, source["model_file"]))
    section = report.test_report(problem, source["classes"], truth, scores, thr, positive)
    drawn, figure_tables = split_tables(report.write_test_figures(out_dir, problem, source["classes"], section))
    redrawn = {f["name"] for f in drawn}
    for fig in source.get("figures", []):
        if fig["name"] not in redrawn and os.path.isfile(os.path.join(src_dir, fig["file"])):
            shutil.copyfile(os.path.join(src_dir, fig["file"]), os.path.join(out_dir, fig["file"]))
    manifest = copy.deepcopy(source)
    manifest["metrics"] = {"test": found}
    # The source's validation/test scores (operating_scores.json) are not copied: an operating point is chosen on
    # the model's own validation data, never on a study's. Its thresholds (saved operating point or not) are kept.
    manifest.pop("operating_scores_file", None)
    manifest.pop("operating_point", None)
    manifest.pop("clinical", None)
    if problem != "regression":
        manifest["clinical"] = report.clinical_section(
            problem,
            source["classes"],
            truth,
            scores,
            thr,
            groups,
            positive,
            subgroups.inputs(spec, table, rows),
            spec.seed,
        )
    # Regression models published before `metric` was required carry none; they were selected on rmse, as the spec says.
    manifest.setdefault("metric", spec.metric)
    # Figures first drawn after the source was trained (the decision curve) join the source's list.
    listed = source.get("figures", []) + [
        f for f in drawn if f["name"] not in {g["name"] for g in source.get("figures", [])}
    ]
    manifest["figures"] = [f for f in listed if os.path.isfile(os.path.join(out_dir, f["file"]))]
    manifest["provenance"] = provenance(spec, time.monotonic() - t0, "cpu", {"onnxruntime": onnxruntime.__version__})
    if source.get("report_file"):
        write_report(
            out_dir,
            {
                "kind": source["kind"],
                "problem": problem,
                "classes": source["classes"],
                "thresholds": thr,
                "evaluated_model": source.get("provenance", {}),
                "metrics": {"test": found},
                "test": section,
                "figure_tables": {**_source_tables(src_dir, source), **figure_tables},
            },
        )
        manifest["report_file"] = "report.json"
    events.progress("evaluating", 1.0, key="done")
    return write_manifest(out_dir, manifest)


def _source_tables(src_dir: str, source: dict) -> dict:
    """The figure tables of the copied training figures (loss curves), from the source's report.json."""
    path = os.path.join(src_dir, source.get("report_file") or "report.json")
    if not os.path.isfile(path):
        return {}
    with open(path) as fh:
        return json.load(fh).get("figure_tables") or {}
