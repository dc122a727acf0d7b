"""The manifest's ``clinical`` section: which class is positive, the test confusion matrix, and the facts the
server's warnings are computed from (src/experiments/warnings.ts is the one place that turns them into warnings).

The positive class of a binary task is the one the request names (``positive_class``, a label value as written in
the CSV); without one, the less frequent class over every labelled row (all splits, as the dataset report counts
them), and on a tie the class that sorts second (index 1, the class the ROC curve was always drawn for).
"""

from __future__ import annotations

import numpy as np

from .decision import decision_curve
from .errors import DataError
from .metrics import _auc
from .subgroups import compute as subgroup_figures

RULE_REQUESTED = "requested"
RULE_RARER = "less frequent class"
RULE_TIE = "classes equally frequent: the second in sort order"


def positive_class(
    problem: str, classes: list[dict], class_index_of_rows, requested: str | None
) -> tuple[int, str] | None:
    """(index, rule) of the positive class; None unless binary. ``class_index_of_rows``: every labelled row's index."""
    if problem != "binary":
        if requested:
            raise DataError("positive_class_needs_two_values")
        return None
    if requested is not None and requested != "":
        wanted = requested.strip()
        for c in classes:
            if c["code"] == wanted:
                return int(c["index"]), RULE_REQUESTED
        values = ", ".join(c["code"] for c in classes)
        raise DataError("positive_class_unknown", value=requested, values=values)
    counts = np.bincount(np.asarray(class_index_of_rows, dtype=int), minlength=2)
    if counts[0] == counts[1]:
        return 1, RULE_TIE
    return int(np.argmin(counts)), RULE_RARER


RULE_SOURCE = "the evaluated model's positive class"


def positive_for_evaluation(
    problem: str, classes: list[dict], class_index_of_rows, requested: str | None, source_manifest: dict
) -> tuple[int, str] | None:
    """A Retrospective study: the class the request names, else the evaluated model's, else the rule on the new data."""
    if requested:
        return positive_class(problem, classes, class_index_of_rows, requested)
    inherited = (source_manifest.get("clinical") or {}).get("positive_class")
    if problem == "binary" and inherited:
        return positive_class(problem, classes, class_index_of_rows, inherited["code"])[0], RULE_SOURCE
    return positive_class(problem, classes, class_index_of_rows, None)


def section(
    problem: str,
    classes: list[dict],
    truth_onehot,
    decisions,
    groups,
    positive: tuple[int, str] | None,
    scores=None,
    subgroups: dict | None = None,
    seed: int = 0,
) -> dict:
    """{positive_class?, confusion_matrix, test_patients_per_class, decision_curve?, subgroups?} for a classification
    task's test split; the decision curve (binary, with ``scores``) is for the positive class's probability.
    ``subgroups``: the request's subgroup columns on the test rows (common/subgroups.inputs); binary and multiclass."""
    y = np.asarray(truth_onehot).astype(int)
    p = np.asarray(decisions).astype(int)
    names = [str(c["name"]) for c in classes]
    groups = np.asarray(groups).astype(str)
    out: dict = {}
    if positive is not None:
        c = classes[positive[0]]
        out["positive_class"] = {"index": int(c["index"]), "code": c["code"], "name": c["name"], "rule": positive[1]}
    if problem == "multilabel":  # one 2x2 table per label: rows truth (absent, present), columns prediction
        per_label = {
            names[k]: [[int(((y[:, k] == a) & (p[:, k] == b)).sum()) for b in (0, 1)] for a in (0, 1)]
            for k in range(y.shape[1])
        }
        out["confusion_matrix"] = {"labels": names, "per_label": per_label}
    else:
        m = np.zeros((len(names), len(names)), dtype=int)
        np.add.at(m, (y.argmax(1), p.argmax(1)), 1)
        out["confusion_matrix"] = {"labels": names, "counts": m.tolist()}
    out["test_patients_per_class"] = {names[k]: len(np.unique(groups[y[:, k] == 1])) for k in range(y.shape[1])}
    if positive is not None and scores is not None:
        k = positive[0]
        out["decision_curve"] = decision_curve(y[:, k], np.asarray(scores, dtype=float)[:, k])
    if subgroups and scores is not None and problem in ("binary", "multiclass"):
        out["subgroups"] = subgroup_figures(
            problem, y, scores, p, groups, positive[0] if positive else None, subgroups, seed=seed
        )
    return out


def strongest_feature(X, y_index, names: list[str]) -> dict | None:
    """The single feature that best separates two classes on its own: {name, auc} with auc folded to >= 0.5.

    Computed on training rows only. A feature near 1.0 separates the classes by itself: either the task is easy or
    the column leaks the answer (a diagnosis code, a follow-up measurement); warnings.ts says so.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y_index, dtype=int)
    if X.ndim != 2 or len(np.unique(y)) != 2:
        return None
    best: dict | None = None
    for j, name in enumerate(names):
        col = X[:, j]
        ok = np.isfinite(col)
        if ok.sum() < 2 or len(np.unique(y[ok])) != 2:
            continue
        a = _auc(y[ok], col[ok])
        a = max(a, 1 - a)
        if best is None or a > best["auc"]:
            best = {"name": name, "auc": round(float(a), 6)}
    return best
