"""``evaluate`` (Retrospective): run a published tabular model on new data, every patient in split.test.

The data is encoded exactly as serving would: numeric columns as numbers, categorical columns with the
source manifest's codes. A value the model never saw in training (an unknown category, NA in a column trained
without gaps) takes the column's training fill (median or most frequent category) so that a few such rows do not
sink the study; the report and the job log say which columns and how many rows, and a column where more than
half the rows need it is a DataError (it is likely coded differently from the training data). Models published
before fills existed keep the old rule: such a value is a DataError naming the row and column. The output
folder gets a copy of model.onnx and a manifest identical to the source one except metrics.test (new),
metrics.validation (dropped) and provenance (fresh); report.json and figures describe the new data.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from ..common import clinical, events, subgroups
from ..common import figure_tables as FT
from ..common.data import read_table, require_columns, split_indices
from ..common.errors import DataError, SpecError
from ..common.manifest import provenance, write_manifest, write_report
from ..common.spec import JobSpec
from . import evaluation, export
from .table import Column, Unseen, encode_features, encode_labels


def _source(spec: JobSpec | dict) -> tuple[Path, dict]:
    spec = JobSpec.of(spec)
    src = spec.source_model.dir if spec.source_model else None
    if not src:
        raise SpecError("evaluate needs source_model.dir")
    path = Path(src) / "manifest.json"
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SpecError(f"cannot read the source manifest {path}: {exc}") from exc
    if manifest.get("kind") != "tabular":
        raise SpecError(f"the source model is a {manifest.get('kind')!r} model, not tabular")
    return Path(src), manifest


# Above this share of rows, filling a column would hide a coding mismatch (M/F against male/female) behind
# metrics that mean little; below it, a rare new category or a few NA should not sink the whole study.
MAX_UNSEEN_SHARE = 0.5


def _check_unseen(unseen: dict[str, Unseen], columns: list[Column], n_rows: int) -> list[dict]:
    """The report's ``unseen_values``; a DataError when a column needs the fill in more than half the rows.

    The messages (the job log, the failure reason) name the column and count the rows, never a value: a category
    may identify a patient ("Richard Roe"), and a failure reason travels on to the chat, whose backend may be a
    model server outside the hospital (issue 42). The examples stay in report.json, which only the owner reads.
    """
    out = []
    for col in columns:
        seen = unseen.get(col.name)
        if seen is None:
            continue
        if seen.rows > MAX_UNSEEN_SHARE * n_rows:
            raise DataError("unseen_values_share", column=col.name, rows=seen.rows, total=n_rows)
        # A category is training data (it may identify a patient): named by its role, never by its value.
        numeric = col.type == "numeric"
        filled_with = "training median" if numeric else "most frequent training category"
        events.log(
            "warn",
            f"column {col.name!r}: {seen.rows} of {n_rows} rows hold values the model never saw "
            f"in training; they were evaluated with the {filled_with}"
            f"{f' ({col.fill:g})' if numeric else ''} instead (report.json lists examples)",
        )
        out.append(
            {
                "column": col.name,
                "rows": seen.rows,
                "examples": seen.examples,
                "filled_with": filled_with,
                **({"value": col.fill} if numeric else {}),
            }
        )
    return out


def evaluate(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    start = time.monotonic()
    src_dir, src = _source(spec)
    problem = src["problem"]
    if spec.problem != problem:
        events.log("warn", f"spec.problem is {spec.problem!r} but the model is {problem!r}; using the model's")
    os.makedirs(out_dir, exist_ok=True)
    events.progress("preparing", 0.0, key="reading_table")
    d = spec.data
    table = read_table(d.table)
    columns = [Column.from_manifest(c) for c in src["input"]["columns"]]
    label_col = d.label_cols[0]
    require_columns(table, [d.id_col, label_col] + [c.name for c in columns])
    rows = split_indices(table, d.id_col, spec.split.parts())["test"]
    if not rows:
        raise DataError("evaluation_part_empty")
    unseen: dict[str, Unseen] = {}
    X = encode_features(table, columns, rows, unseen)
    filled = _check_unseen(unseen, columns, len(rows))
    y = encode_labels(table, label_col, src["classes"], problem, rows)
    groups = np.array([table.rows[r][d.id_col] for r in rows])

    events.progress("evaluating", 0.3, key="running_onnx_model")
    model_path = src_dir / src["model_file"]
    scores = export.run_onnx(model_path.read_bytes(), X)
    shutil.copyfile(model_path, Path(out_dir) / src["model_file"])
    events.artifact(src["model_file"], "model")
    # The source model's positive class unless this study names another; an older model without one: the rule.
    positive = (
        clinical.positive_for_evaluation(problem, src["classes"], y, spec.positive_class, src)
        if problem != "regression"
        else None
    )
    metrics, extras = evaluation.score_split(problem, y, scores, src.get("thresholds"), groups, spec.seed, positive)
    clinical_facts = evaluation.clinical_section(
        problem,
        src["classes"],
        y,
        scores,
        src.get("thresholds"),
        groups,
        positive,
        subgroups.inputs(spec, table, rows),
        spec.seed,
    )
    evaluation.emit_metrics(events, "test", metrics)

    # Figures: curves are redrawn on the new data; importance comes from training and is copied.
    # Figures first drawn after the source was trained (the decision curve) join the list; tables of copied figures
    # (importance) come from the source's report.
    redrawn, figure_tables = FT.split_tables(evaluation.write_figures(out_dir, problem, src["classes"], extras, None))
    drawn = {f["file"] for f in redrawn}
    figs = []
    for fig in src.get("figures", []) + [
        f for f in redrawn if f["name"] not in {g["name"] for g in src.get("figures", [])}
    ]:
        if fig["file"] not in drawn and (src_dir / fig["file"]).is_file():
            shutil.copyfile(src_dir / fig["file"], Path(out_dir) / fig["file"])
        if (Path(out_dir) / fig["file"]).is_file():
            figs.append(fig)
            events.artifact(fig["file"], "figure")

    source_report = {}
    if src.get("report_file") and (src_dir / src["report_file"]).is_file():
        source_report = json.loads((src_dir / src["report_file"]).read_text())
    write_report(
        out_dir,
        {
            "problem": problem,
            "evaluation_of": str(src_dir),
            "rows": len(rows),
            "test": extras,
            "unseen_values": filled,
            "thresholds": src.get("thresholds"),
            "importance": source_report.get("importance"),
            "figure_tables": {
                **{k: v for k, v in (source_report.get("figure_tables") or {}).items() if k not in figure_tables},
                **figure_tables,
            },
        },
    )
    manifest = copy.deepcopy(src)
    manifest["metrics"] = {"test": metrics}
    # The source's validation/test scores (operating_scores.json) are not copied: an operating point is chosen on
    # the model's own validation data, never on a study's. Its thresholds (saved operating point or not) are kept.
    manifest.pop("operating_scores_file", None)
    manifest.pop("operating_point", None)
    manifest.pop("clinical", None)
    if clinical_facts is not None:
        manifest["clinical"] = clinical_facts
    # Regression models published before `metric` was required carry none; they were selected on rmse, as the spec says.
    manifest.setdefault("metric", spec.metric)
    manifest["figures"] = figs
    manifest["report_file"] = "report.json"
    manifest["provenance"] = provenance(
        spec, time.monotonic() - start, "cpu", src.get("provenance", {}).get("framework", {})
    )
    path = write_manifest(out_dir, manifest)
    events.progress("evaluating", 1.0, key="done")
    return path
