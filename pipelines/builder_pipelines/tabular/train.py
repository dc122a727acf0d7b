"""``train``: search on the train part, fit, calibrate and set thresholds on val, export, test.

Data use, stated once:
- train: grouped cross-validation for the search (and the out-of-fold predictions calibration is fitted on),
  then the chosen config is fitted on all of train (LightGBM with the tree count the search found).
- val: that train-only model's validation scores decide whether calibration is kept (log-loss), set the
  decision thresholds and give the validation metrics.
- refit: the published model is the same config refitted on train+val (REFIT_ON_TRAIN_VAL), keeping the
  calibration map and thresholds chosen above: 15% more data for small clinical tables. The validation
  metrics therefore describe the train-only fit; the test metrics describe the published graph.
- test: touched once, by the exported ONNX graph; its scores are the reported test metrics.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..common import clinical, events, monitoring_baseline, operating_scores, subgroups
from ..common import figure_tables as FT
from ..common import thresholds as T
from ..common.data import read_table, require_columns, split_indices
from ..common.errors import PART_EMPTY, DataError, SpecError
from ..common.manifest import provenance, write_manifest, write_report
from ..common.spec import JobSpec
from . import calibration, evaluation, export, input_check, models
from .search import PLANS, run_search
from .table import class_list, encode_features, encode_labels, infer_columns, one_hot, set_fills

REFIT_ON_TRAIN_VAL = True
SEARCH_SHARE = 0.6  # of the time budget; the rest covers the final fit, export, bootstrap CIs and figures
PROBLEMS = ("binary", "multiclass", "regression")


def threads_for(spec: JobSpec | dict) -> int:
    """spec.options.threads when set. Otherwise one thread for small tables: LightGBM's OpenMP threads
    spin-wait, and on a busy host two threads fitting 400 rows were measured 27x slower than one."""
    spec = JobSpec.of(spec)
    given = spec.options.threads
    if given:
        return int(given)
    try:
        size = os.path.getsize(spec.data.table)
    except OSError:
        size = 0
    return 1 if size < 50_000_000 else min(4, os.cpu_count() or 1)


def _load(spec: JobSpec | dict):
    spec = JobSpec.of(spec)
    d = spec.data
    table = read_table(d.table)
    require_columns(table, [d.id_col])
    columns = infer_columns(table, list(d.data_cols or []))
    problem = spec.problem
    classes = class_list(table, d.label_cols[0], d.class_name_col, problem)
    parts = split_indices(table, d.id_col, spec.split.parts())
    for part in ("train", "val", "test"):
        if not parts[part]:
            raise DataError(PART_EMPTY[part])
    data = {}
    for part, rows in parts.items():
        data[part] = (
            encode_features(table, columns, rows),
            encode_labels(table, d.label_cols[0], classes, problem, rows),
            np.array([table.rows[r][d.id_col] for r in rows]),
        )
    if problem != "regression":
        seen = set(np.unique(data["train"][1]).tolist())
        missing = [c["code"] for c in classes if c["index"] not in seen]
        if missing:
            raise DataError("classes_without_training_rows", classes=", ".join(missing))
    # The request's subgroup columns on the test rows (common/subgroups.py), or None.
    return columns, classes, data, subgroups.inputs(spec, table, parts["test"])


def _trial_reporter(problem: str, metric: str, budget_s: float):
    name = metric  # rmse for regression: the job spec says so (src/experiments/study.ts)
    sign = -1.0 if problem == "regression" else 1.0

    def on_trial(i, n, record, best, elapsed):
        done = (i + 1) / n
        frac = max(done, min(1.0, elapsed / budget_s))
        rate_eta = elapsed / (i + 1) * (n - i - 1)
        events.metric("val", f"cv_{name}", sign * record["cv_score"], trial=i + 1)
        events.progress(
            "training",
            0.05 + 0.75 * frac,
            trial=i + 1,
            trials=n,
            best_metric=sign * best,
            eta_s=round(min(rate_eta, max(0.0, budget_s - elapsed)) + 2.0, 1),
            key="trial_result",
            params={
                "trial": i + 1,
                "model": record["model"],
                "metric": name,
                "score": round(sign * record["cv_score"], 4),
            },
        )

    return on_trial


def train(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    start = time.monotonic()
    problem, metric, seed = spec.problem, spec.metric, spec.seed
    threshold_metric = spec.threshold_metric
    if problem not in PROBLEMS:
        raise SpecError(f"the tabular pipeline handles {', '.join(PROBLEMS)}, not {problem!r}")
    mode, budget_s = spec.budget.mode, spec.budget.time_budget_s
    os.makedirs(out_dir, exist_ok=True)
    events.progress("preparing", 0.0, key="reading_table")
    columns, classes, data, subgroup_inputs = _load(spec)
    (Xtr, ytr, gtr), (Xva, yva, gva), (Xte, yte, gte) = data["train"], data["val"], data["test"]
    # Resolved before any training, so a positive_class the label does not have fails at once.
    positive = clinical.positive_class(problem, classes, np.r_[ytr, yva, yte], spec.positive_class)
    set_fills(columns, np.vstack([Xtr, Xva]))  # the rows the published model is fitted on, never test
    k = len(classes) if problem != "regression" else 1
    threads = threads_for(spec)
    events.log(
        "info",
        f"{problem}: {len(ytr)}/{len(yva)}/{len(yte)} rows train/val/test, {len(columns)} features, "
        f"mode {mode}, budget {budget_s:g} s, {threads} threads",
    )
    events.progress("preparing", 0.05, key="searching_models")

    search_budget = max(0.5, SEARCH_SHARE * budget_s - (time.monotonic() - start))
    res = run_search(
        problem,
        metric,
        columns,
        Xtr,
        ytr,
        gtr,
        k,
        seed,
        mode,
        search_budget,
        threads,
        _trial_reporter(problem, metric, search_budget),
    )
    best = res.best
    events.log(
        "info",
        f"chosen: {best['model']} {best['params']} (cv score {res.best_score:.4f}, {len(res.trials)} trials, "
        f"search {time.monotonic() - start:.1f} s since start): {res.selection['reason']}",
    )

    events.progress("training", 0.8, key="fitting_final_model")
    train_only = models.fit(best, problem, columns, Xtr, ytr, seed, threads)
    val_raw = models.predict(train_only, problem, Xva)
    cal, cal_record = (
        calibration.choose(problem, np.tile(ytr, len(res.oof)), np.vstack(res.oof), yva, val_raw)
        if problem != "regression"
        else (None, {"applied": False, "reason": "regression"})
    )
    val_scores = calibration.apply(cal, val_raw)
    thresholds = None
    if problem != "regression":
        thresholds = [round(t, 7) for t in T.choose_thresholds(problem, one_hot(yva, k), val_scores, threshold_metric)]

    final = (
        models.fit(best, problem, columns, np.vstack([Xtr, Xva]), np.r_[ytr, yva], seed, threads)
        if REFIT_ON_TRAIN_VAL
        else train_only
    )
    for part in final.parts if best["model"] == "blend" else [final]:
        if isinstance(part, (models.lgb.LGBMClassifier, models.lgb.LGBMRegressor)):
            models.float32_exact(part)

    events.log("info", f"final fits done at {time.monotonic() - start:.1f} s")
    events.progress("exporting", 0.85, key="exporting_checked")
    onnx_model = export.build_onnx(final, best, problem, Xtr.shape[1], k, cal)
    test_ref = calibration.apply(cal, models.predict(final, problem, Xte))
    test_scores, parity = export.check_parity(onnx_model, Xte, test_ref, problem)
    tmp = os.path.join(out_dir, "model.onnx.tmp")
    with open(tmp, "wb") as fh:
        fh.write(onnx_model.SerializeToString())
    os.replace(tmp, os.path.join(out_dir, "model.onnx"))
    events.artifact("model.onnx", "model")

    events.log("info", f"export and parity done at {time.monotonic() - start:.1f} s")
    events.progress("evaluating", 0.9, key="test_metrics_bootstrap")
    val_metrics, val_extras = evaluation.score_split(problem, yva, val_scores, thresholds, gva, seed, positive)
    test_metrics, test_extras = evaluation.score_split(problem, yte, test_scores, thresholds, gte, seed, positive)
    clinical_facts = evaluation.clinical_section(
        problem, classes, yte, test_scores, thresholds, gte, positive, subgroup_inputs, seed
    )
    if clinical_facts is not None and problem == "binary":
        numeric = [j for j, c in enumerate(columns) if c.type == "numeric"]
        strongest = (
            clinical.strongest_feature(Xtr[:, numeric], ytr, [columns[j].name for j in numeric]) if numeric else None
        )
        if strongest:
            clinical_facts["strongest_feature"] = strongest
    evaluation.emit_metrics(events, "val", val_metrics)
    evaluation.emit_metrics(events, "test", test_metrics)
    importance = models.importance(final, best, columns, Xte)
    figs, figure_tables = FT.split_tables(evaluation.write_figures(out_dir, problem, classes, test_extras, importance))
    for f in figs:
        events.artifact(f["file"], "figure")

    summary = {
        "model": best["model"],
        "params": best["params"],
        "n_estimators": best.get("n_estimators"),
        "parts": best.get("parts"),
        "cv_score": round(res.best_score, 6),
        "cv_se": next((t["cv_se"] for t in res.trials if t["trial"] == res.selection.get("chosen")), None),
        "selection_reason": res.selection.get("reason"),
        "cv_folds": PLANS[mode].folds,
        "cv_repeats": PLANS[mode].repeats,
        "trials": len(res.trials),
        "search_stopped_by_time": res.stopped_by_time,
        "calibration": cal_record.get("method") if cal else None,
        "final_fit": (
            "train+val refit; calibration, thresholds and validation metrics from the train-only fit"
            if REFIT_ON_TRAIN_VAL
            else "train split only (val: calibration choice, thresholds, validation metrics)"
        ),
        "onnx_parity": {"max_abs_diff": {"scores": parity}},
        "threads": threads,
    }
    write_report(
        out_dir,
        {
            "problem": problem,
            "metric": metric,
            "classes": classes,
            "model": summary,
            "test": test_extras,
            "validation": val_extras,
            "calibration": cal_record,
            "thresholds": thresholds,
            "importance": importance,
            "trials": res.trials,
            "selection": res.selection,
            "figure_tables": figure_tables,
        },
    )
    events.artifact("report.json", "report")
    manifest = {
        "schema_version": 1,
        "kind": "tabular",
        "problem": problem,
        "model_file": "model.onnx",
        "input": {"name": export.INPUT, "columns": [c.manifest() for c in columns]},
        "outputs": {"scores": export.OUTPUT},
        "classes": classes,
        "metrics": {"validation": val_metrics, "test": test_metrics},
        "figures": figs,
        "report_file": "report.json",
        "model_summary": summary,
        # Unfamiliar rows: the training rows' ranges, the threshold calibrated on the validation rows.
        "input_check": {"mode": "flag", "table": input_check.build(columns, Xtr, Xva, Xte)},
        "provenance": provenance(spec, time.monotonic() - start, "cpu", _framework()),
    }
    manifest["metric"] = metric
    if clinical_facts is not None:
        manifest["clinical"] = clinical_facts
    if problem != "regression":
        manifest["thresholds"] = thresholds
        manifest["threshold_rule"] = (
            T.RULES[threshold_metric]
            if problem == "binary"
            else "multiclass: prediccion is the argmax of scores; thresholds are informational"
        )
    if problem == "binary" and positive is not None:
        # The validation scores come from the train-only fit, as the thresholds above do.
        manifest["operating_scores_file"] = operating_scores.write(
            out_dir, positive[0], one_hot(yva, k), val_scores, "validation split", one_hot(yte, k), test_scores, gte
        )
        events.artifact(manifest["operating_scores_file"], "report")
    # Validation and test patients together, as aggregates (common/monitoring_baseline.py): what serving compares with.
    manifest["monitoring_baseline"] = monitoring_baseline.build(
        problem,
        columns,
        np.vstack([Xva, Xte]),
        np.vstack([np.asarray(val_scores).reshape(len(yva), -1), np.asarray(test_scores).reshape(len(yte), -1)]),
        thresholds,
        positive[0] if (problem == "binary" and positive is not None) else None,
    )
    path = write_manifest(out_dir, manifest)
    events.progress("evaluating", 1.0, key="done")
    return path


def _framework() -> dict[str, str]:
    import catboost
    import lightgbm
    import onnx
    import onnxruntime
    import sklearn

    return {
        "lightgbm": lightgbm.__version__,
        "catboost": catboost.__version__,
        "scikit-learn": sklearn.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
    }
