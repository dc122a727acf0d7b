"""Decision thresholds for ``prediccion``, chosen on the validation split from the optimization metric.

Rules (per class, on that class's score, one-vs-rest):
- AUC:       AUC has no threshold; take Youden's J (the point of the ROC curve farthest above chance).
- F-macro:   the threshold that maximises that class's F1 (binary: the macro F1 of both classes).
- Precision: the highest precision whose recall stays at or above RECALL_FLOOR (0.5);
             when no threshold reaches the floor, the F1-maximising one.
- Recall:    the highest recall whose precision stays at or above PRECISION_FLOOR (0.5);
             when no threshold reaches the floor, the F1-maximising one.
Serving applies them as documented in the manifest schema (``thresholds``).
"""

from __future__ import annotations

import numpy as np

RECALL_FLOOR = 0.5
PRECISION_FLOOR = 0.5

RULES = {
    "auc": "Youden's J on the validation ROC curve (AUC has no threshold of its own)",
    "f_macro": "threshold maximising F1 on the validation split",
    "precision": f"highest validation precision with recall >= {RECALL_FLOOR}, else maximum F1",
    "recall": f"highest validation recall with precision >= {PRECISION_FLOOR}, else maximum F1",
}


def _curve(y: np.ndarray, s: np.ndarray):
    """Candidate thresholds with TP/FP counts at ``score >= t`` for each."""
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    tp = np.cumsum(y_sorted)
    fp = np.cumsum(1 - y_sorted)
    last = np.r_[np.nonzero(np.diff(s_sorted))[0], len(s_sorted) - 1]  # last index of each distinct score
    return s_sorted[last], tp[last], fp[last]


def choose_threshold(y_true: np.ndarray, score: np.ndarray, metric: str) -> float:
    y = np.asarray(y_true).astype(int)
    s = np.asarray(score, dtype=float)
    pos = y.sum()
    if pos == 0 or pos == len(y):
        return 0.5
    thr, tp, fp = _curve(y, s)
    fn = pos - tp
    tn = (len(y) - pos) - fp
    precision = tp / np.maximum(tp + fp, 1)
    recall = tp / pos
    f1 = 2 * precision * recall / np.maximum(precision + recall, 1e-12)
    best_f1 = int(np.argmax(f1))
    if metric == "auc":
        idx = int(np.argmax(recall - fp / np.maximum(fp + tn, 1)))
    elif metric == "f_macro":
        neg_p = tn / np.maximum(tn + fn, 1)
        neg_r = tn / np.maximum(tn + fp, 1)
        f1_neg = 2 * neg_p * neg_r / np.maximum(neg_p + neg_r, 1e-12)
        idx = int(np.argmax((f1 + f1_neg) / 2))
    elif metric == "precision":
        ok = np.nonzero(recall >= RECALL_FLOOR)[0]
        idx = int(ok[np.argmax(precision[ok])]) if len(ok) else best_f1
    elif metric == "recall":
        ok = np.nonzero(precision >= PRECISION_FLOOR)[0]
        idx = int(ok[np.argmax(recall[ok])]) if len(ok) else best_f1
    else:
        raise ValueError(f"unknown metric {metric}")
    # Midpoint to the next lower score, so a score equal to the chosen one is still positive
    # and tiny float differences between PyTorch and ONNX Runtime do not flip decisions.
    t = float(thr[idx])
    lower = thr[idx + 1] if idx + 1 < len(thr) else t - 1e-3
    return float((t + lower) / 2)


def choose_thresholds(problem: str, y_onehot: np.ndarray, scores: np.ndarray, metric: str) -> list[float]:
    """Per-class thresholds; see the manifest schema for how serving applies them."""
    k = scores.shape[1]
    if problem == "binary":
        t = choose_threshold(y_onehot[:, 1], scores[:, 1], metric)
        return [1.0 - t, t]
    if problem == "multilabel":
        return [choose_threshold(y_onehot[:, c], scores[:, c], metric) for c in range(k)]
    return [0.5] * k  # multiclass: argmax; thresholds are informational


def apply_thresholds(problem: str, scores: np.ndarray, thresholds: list[float] | None) -> np.ndarray:
    """The 0/1 ``prediccion`` matrix serving would return, for evaluation with the same rule."""
    n, k = scores.shape
    if problem == "binary":
        t = thresholds[1] if thresholds else 0.5
        y = (scores[:, 1] >= t).astype(int)
        return np.stack([1 - y, y], axis=1)
    if problem == "multilabel":
        t = np.asarray(thresholds if thresholds else [0.5] * k)
        return (scores >= t[None, :]).astype(int)
    out = np.zeros((n, k), dtype=int)
    out[np.arange(n), np.argmax(scores, axis=1)] = 1
    return out
