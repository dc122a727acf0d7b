"""Split-level scoring shared by every classification and regression pipeline (tabular, vision): contract metrics
with patient-level intervals, the report's curves and confusion matrices, the manifest's ``clinical`` section, and
the test figures drawn from them (report_figures, clinical_figures). Task adapters (tabular/evaluation.py,
vision/evaluation.py) keep their own report.json layout and figure titles; detection's box metrics are in
detection/evaluation.py.

``truth`` is one-hot (classification, one column per class) or the values (regression)."""

from __future__ import annotations

import numpy as np

from . import clinical, clinical_figures
from . import figure_tables as FT
from . import metrics as M
from . import report_figures as RF
from . import thresholds as T


def positive_index(positive: tuple[int, str] | None) -> int:
    """The class whose sensitivity, PPV, curves and decision curve a binary report shows (index 1 by default)."""
    return positive[0] if positive else 1


def split_metrics(
    problem: str,
    truth: np.ndarray,
    scores: np.ndarray,
    thresholds: list[float] | None,
    groups,
    seed: int,
    positive: tuple[int, str] | None = None,
) -> dict:
    """Contract metrics with patient-level bootstrap intervals."""
    if problem == "regression":
        return M.regression_metrics(truth, scores[:, 0], groups, seed=seed)
    decisions = T.apply_thresholds(problem, scores, thresholds)
    return M.classification_metrics(
        problem, truth, scores, decisions, groups, seed=seed, positive=positive_index(positive)
    )


def clinical_section(
    problem: str,
    classes: list[dict],
    truth: np.ndarray,
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
    decisions = T.apply_thresholds(problem, scores, thresholds)
    return clinical.section(problem, classes, truth, decisions, groups, positive, scores, subgroups, seed)


def decision_curve(truth: np.ndarray, scores: np.ndarray, positive: tuple[int, str] | None) -> tuple[int, dict]:
    """(positive class index, its net benefit against threshold: common/decision.py), for a binary task."""
    k = positive_index(positive)
    return k, clinical.decision_curve(truth[:, k], scores[:, k])


def confusion_matrix(problem: str, truth: np.ndarray, scores: np.ndarray, thresholds) -> list[list[int]]:
    return M.confusion_matrix(truth, T.apply_thresholds(problem, scores, thresholds))


def confusion_per_class(truth: np.ndarray, scores: np.ndarray, thresholds) -> dict[str, list[list[int]]]:
    """Multilabel: one 2x2 matrix per label, [[tn, fp], [fn, tp]]."""
    dec = T.apply_thresholds("multilabel", scores, thresholds)
    return {
        str(c): [[int(((truth[:, c] == a) & (dec[:, c] == b)).sum()) for b in (0, 1)] for a in (0, 1)]
        for c in range(truth.shape[1])
    }


def emit_metrics(events, split: str, metrics: dict) -> None:
    for name, entry in metrics.items():
        events.metric(split, name, entry["value"])


def curve_rows(problem: str, classes: list[dict], curves: dict, k: int) -> dict[str, list[RF.Series]]:
    """ROC, precision-recall and calibration series: binary one curve, for the positive class ``k``; otherwise
    one-vs-rest per class."""
    shown = [k] if problem == "binary" else [int(c["index"]) for c in classes]
    label = {int(c["index"]): str(c["name"]) for c in classes}
    roc, pr, cal = curves["roc"], curves["pr"], curves["calibration"]
    return {
        "roc": [(label[c], roc[str(c)]["fpr"], roc[str(c)]["tpr"]) for c in shown if str(c) in roc],
        "pr": [(label[c], pr[str(c)]["recall"], pr[str(c)]["precision"]) for c in shown if str(c) in pr],
        "calibration": [(label[c], cal[str(c)]["mean_predicted"], cal[str(c)]["fraction_positive"]) for c in shown],
    }


def curve_figures(
    problem: str,
    classes: list[dict],
    curves: dict,
    k: int,
    net_benefit: dict | None,
    titles: dict[str, tuple[str, str]],
    look: RF.Look,
    calibration_ylabel: str,
) -> list[tuple]:
    """The test split's ROC, precision-recall and calibration figures, and for a binary task the positive class's
    calibration with bin counts and its decision curve (``net_benefit``), as report_figures.write_figures tuples.
    ``titles``: per figure (manifest title, title drawn on the chart)."""
    rows = curve_rows(problem, classes, curves, k)
    unit = {"look": look, "xlim": (0, 1), "ylim": (0, 1)}
    figs = [
        (
            "roc",
            titles["roc"][0],
            RF.line_chart(
                rows["roc"], titles["roc"][1], "false positive rate", "true positive rate", diagonal=True, **unit
            ),
            FT.series_table("false positive rate", "true positive rate", rows["roc"]),
        ),
        (
            "pr",
            titles["pr"][0],
            RF.line_chart(rows["pr"], titles["pr"][1], "recall", "precision", **unit),
            FT.series_table("recall", "precision", rows["pr"]),
        ),
    ]
    if net_benefit is not None:
        name = next(str(c["name"]) for c in classes if int(c["index"]) == k)
        svg, table = clinical_figures.calibration_svg(curves["calibration"][str(k)], name, titles["calibration"][1])
        figs.append(("calibration", titles["calibration"][0], svg, table))
        svg, table = clinical_figures.decision_curve_svg(net_benefit, name)
        figs.append(("decision_curve", titles["decision_curve"][0].format(name=name), svg, table))
    else:
        cal = rows["calibration"]
        svg = RF.line_chart(
            cal,
            titles["calibration"][1],
            "mean predicted probability",
            calibration_ylabel,
            diagonal=True,
            markers=look == "tabular",
            **unit,
        )
        figs.append(
            (
                "calibration",
                titles["calibration"][0],
                svg,
                FT.series_table("mean predicted probability", calibration_ylabel, cal),
            )
        )
    return figs
