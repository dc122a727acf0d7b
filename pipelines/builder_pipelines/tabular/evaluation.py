"""Metrics, curves and figures for one split's scores; shared by train and evaluate."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..common import clinical, clinical_figures
from ..common import figure_tables as FT
from ..common import metrics as M
from ..common import thresholds as T
from . import figures
from .table import one_hot


def score_split(
    problem: str,
    y: np.ndarray,
    scores: np.ndarray,
    thresholds: list[float] | None,
    groups,
    seed: int,
    positive: tuple[int, str] | None = None,
) -> tuple[dict, dict]:
    """(contract metrics with patient-level CIs, report extras: curves, confusion matrix)."""
    if problem == "regression":
        m = M.regression_metrics(y, scores[:, 0], groups, seed=seed)
        return m, {
            "pred_vs_actual": {"actual": np.round(y, 6).tolist(), "predicted": np.round(scores[:, 0], 6).tolist()}
        }
    yo = one_hot(y, scores.shape[1])
    dec = T.apply_thresholds(problem, scores, thresholds)
    m = M.classification_metrics(problem, yo, scores, dec, groups, seed=seed, positive=positive[0] if positive else 1)
    extras = {"curves": M.curves(yo, scores), "confusion_matrix": M.confusion_matrix(yo, dec)}
    if problem == "binary":  # the positive class's net benefit (common/decision.py); figures read it from here
        k = positive[0] if positive else 1
        extras["positive_index"] = k
        extras["decision_curve"] = clinical.decision_curve(yo[:, k], scores[:, k])
    return m, extras


def clinical_section(
    problem: str,
    classes: list[dict],
    y: np.ndarray,
    scores: np.ndarray,
    thresholds,
    groups,
    positive: tuple[int, str] | None,
    subgroups: dict | None = None,
    seed: int = 0,
) -> dict | None:
    """The manifest's ``clinical`` section for the test split (None for regression); ``subgroups``: the request's
    subgroup columns on the test rows (common/subgroups.inputs)."""
    if problem == "regression":
        return None
    return clinical.section(
        problem,
        classes,
        one_hot(y, scores.shape[1]),
        T.apply_thresholds(problem, scores, thresholds),
        groups,
        positive,
        scores,
        subgroups,
        seed,
    )


def emit_metrics(events, split: str, metrics: dict) -> None:
    for name, entry in metrics.items():
        events.metric(split, name, entry["value"])


def write_figures(out_dir: str, problem: str, classes: list[dict], extras: dict, importance: dict | None) -> list[dict]:
    """SVG files beside the manifest; returns manifest ``figures`` entries, each with its data ``table``
    (figure_tables.split_tables moves those to report.json)."""
    out = Path(out_dir)
    figs = []
    if problem == "regression":
        pva = extras["pred_vs_actual"]
        figures.scatter(
            out / "pred_vs_actual.svg",
            "Test: predicted vs actual",
            "actual",
            "predicted",
            pva["actual"],
            pva["predicted"],
        )
        figs.append(
            {
                "name": "pred_vs_actual",
                "file": "pred_vs_actual.svg",
                "title": "Test set: predicted against actual values",
                "table": FT.series_table("actual", "predicted", [("test rows", pva["actual"], pva["predicted"])]),
            }
        )
    else:
        curves = extras["curves"]
        # Binary: one curve, for the positive class (the request's positive_class, else index 1); multiclass:
        # one-vs-rest per class.
        keys = [str(extras.get("positive_index", 1))] if problem == "binary" else [str(c["index"]) for c in classes]
        label = {str(c["index"]): str(c["name"]) for c in classes}
        roc = [(label[k], curves["roc"][k]["fpr"], curves["roc"][k]["tpr"]) for k in keys if k in curves["roc"]]
        pr = [(label[k], curves["pr"][k]["recall"], curves["pr"][k]["precision"]) for k in keys if k in curves["pr"]]
        cal = [
            (label[k], curves["calibration"][k]["mean_predicted"], curves["calibration"][k]["fraction_positive"])
            for k in keys
        ]
        figures.lines(
            out / "roc.svg", "Test ROC curve", "false positive rate", "true positive rate", roc, diagonal="up"
        )
        figures.lines(out / "pr.svg", "Test precision-recall curve", "recall", "precision", pr)
        figs += [
            {
                "name": "roc",
                "file": "roc.svg",
                "title": "ROC curve on the test set",
                "table": FT.series_table("false positive rate", "true positive rate", roc),
            },
            {
                "name": "pr",
                "file": "pr.svg",
                "title": "Precision-recall curve on the test set",
                "table": FT.series_table("recall", "precision", pr),
            },
        ]
        if (
            "decision_curve" in extras
        ):  # binary: calibration of the positive class with bin counts, and the decision curve
            k = str(extras["positive_index"])
            svg, table = clinical_figures.calibration_svg(
                curves["calibration"][k], label[k], "Test calibration (reliability)"
            )
            (out / "calibration.svg").write_text(svg)
            figs.append(
                {
                    "name": "calibration",
                    "file": "calibration.svg",
                    "title": "Calibration (reliability) on the test set",
                    "table": table,
                }
            )
            svg, table = clinical_figures.decision_curve_svg(extras["decision_curve"], label[k])
            (out / "decision_curve.svg").write_text(svg)
            figs.append(
                {
                    "name": "decision_curve",
                    "file": "decision_curve.svg",
                    "table": table,
                    "title": f"Decision curve on the test set: net benefit of acting on {label[k]}",
                }
            )
        else:
            figures.lines(
                out / "calibration.svg",
                "Test calibration (reliability)",
                "mean predicted probability",
                "observed fraction positive",
                cal,
                diagonal="up",
                markers=True,
            )
            figs.append(
                {
                    "name": "calibration",
                    "file": "calibration.svg",
                    "title": "Calibration (reliability) on the test set",
                    "table": FT.series_table("mean predicted probability", "observed fraction positive", cal),
                }
            )
    if importance:
        key, values = (
            next(iter(importance.items()))
            if "mean_abs_contribution" not in importance
            else ("mean_abs_contribution", importance["mean_abs_contribution"])
        )
        title = {
            "mean_abs_contribution": "Mean |SHAP contribution| on the test set",
            "abs_coefficient_standardised": "|coefficient| on standardised features",
            "gain": "LightGBM split gain",
            "impurity_decrease": "Mean decrease in impurity (forest, training data)",
            "prediction_values_change": "Prediction change per feature (CatBoost, from its trees)",
        }.get(key, key)
        figures.bars(out / "importance.svg", title, values)
        figs.append(
            {
                "name": "importance",
                "file": "importance.svg",
                "title": f"Feature importance: {title}",
                "table": FT.bars_table(key.replace("_", " "), values),
            }
        )
    return figs
