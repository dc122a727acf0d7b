"""The tabular report of one split: common/evaluation.py's metrics, curves and figures, with tabular's report.json
layout (``extras``), figure titles and chart look, and the feature-importance figure; shared by train and evaluate."""

from __future__ import annotations

import numpy as np

from ..common import evaluation as E
from ..common import figure_tables as FT
from ..common import metrics as M
from ..common import report_figures as RF
from .table import one_hot

emit_metrics = E.emit_metrics

TITLES = {  # (manifest title, title drawn on the chart)
    "roc": ("ROC curve on the test set", "Test ROC curve"),
    "pr": ("Precision-recall curve on the test set", "Test precision-recall curve"),
    "calibration": ("Calibration (reliability) on the test set", "Test calibration (reliability)"),
    "decision_curve": ("Decision curve on the test set: net benefit of acting on {name}", ""),
}
IMPORTANCE_TITLES = {
    "mean_abs_contribution": "Mean |SHAP contribution| on the test set",
    "abs_coefficient_standardised": "|coefficient| on standardised features",
    "gain": "LightGBM split gain",
    "impurity_decrease": "Mean decrease in impurity (forest, training data)",
    "prediction_values_change": "Prediction change per feature (CatBoost, from its trees)",
}


def score_split(
    problem: str,
    y: np.ndarray,
    scores: np.ndarray,
    thresholds: list[float] | None,
    groups,
    seed: int,
    positive: tuple[int, str] | None = None,
) -> tuple[dict, dict]:
    """(contract metrics with patient-level CIs, report extras: curves, confusion matrix); ``y``: class indices
    or values."""
    if problem == "regression":
        m = E.split_metrics(problem, y, scores, None, groups, seed)
        return m, {
            "predicted_vs_true": {"actual": np.round(y, 6).tolist(), "predicted": np.round(scores[:, 0], 6).tolist()}
        }
    yo = one_hot(y, scores.shape[1])
    m = E.split_metrics(problem, yo, scores, thresholds, groups, seed, positive)
    extras = {"curves": M.curves(yo, scores), "confusion_matrix": E.confusion_matrix(problem, yo, scores, thresholds)}
    if problem == "binary":  # the positive class's net benefit (common/decision.py); figures read it from here
        extras["positive_index"], extras["decision_curve"] = E.decision_curve(yo, scores, positive)
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
    """The manifest's ``clinical`` section for the test split (None for regression)."""
    if problem == "regression":
        return None
    yo = one_hot(y, scores.shape[1])
    return E.clinical_section(problem, classes, yo, scores, thresholds, groups, positive, subgroups, seed)


def write_figures(out_dir: str, problem: str, classes: list[dict], extras: dict, importance: dict | None) -> list[dict]:
    """SVG files beside the manifest; returns manifest ``figures`` entries, each with its data ``table``
    (figure_tables.split_tables moves those to report.json)."""
    if problem == "regression":
        pva = extras["predicted_vs_true"]
        svg = RF.scatter_chart(
            pva["actual"], pva["predicted"], "Test: predicted vs actual", "actual", "predicted", look="tabular"
        )
        table = FT.series_table("actual", "predicted", [("test rows", pva["actual"], pva["predicted"])])
        figs = [("predicted_vs_true", "Test set: predicted against actual values", svg, table)]
    else:
        figs = E.curve_figures(
            problem,
            classes,
            extras["curves"],
            int(extras.get("positive_index", 1)),
            extras.get("decision_curve"),
            TITLES,
            "tabular",
            "observed fraction positive",
        )
    if importance:
        key, values = (
            next(iter(importance.items()))
            if "mean_abs_contribution" not in importance
            else ("mean_abs_contribution", importance["mean_abs_contribution"])
        )
        title = IMPORTANCE_TITLES.get(key, key)
        figs.append(
            (
                "importance",
                f"Feature importance: {title}",
                RF.bar_chart(values, title),
                FT.bars_table(key.replace("_", " "), values),
            )
        )
    return RF.write_figures(out_dir, figs)
