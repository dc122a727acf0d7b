"""COCO-style detection metrics: mAP@0.5 and mAP@0.5:0.95 (101-point interpolated precision),
per-class AP, precision/recall at the served score threshold, bootstrap CIs over patients
(images of one patient move together), PR curves, and the rule that picks the served threshold.

Matching (COCO): per image and class, detections in descending score take the unmatched
ground-truth box of highest IoU, if that IoU >= the threshold. Because a detection's match depends
only on higher-scoring detections, keeping the detections with score >= t of a low-threshold run
gives exactly what serving returns at threshold t.
"""

from __future__ import annotations

import numpy as np

from ..common.metrics import _bootstrap
from .boxes import iou_matrix
from .infer import EVAL_SCORE_FLOOR, detections, raw_outputs

IOU_THRESHOLDS = np.round(np.linspace(0.5, 0.95, 10), 2)
RECALL_POINTS = np.linspace(0, 1, 101)
N_BOOT = 300
FLOOR = 0.5

RULES = {
    "f_macro": "score threshold maximising the macro F1 of boxes matched at IoU 0.5 on validation",
    "precision": f"highest validation macro precision (IoU 0.5) with macro recall >= {FLOOR}, else maximum F1",
    "recall": f"highest validation macro recall (IoU 0.5) with macro precision >= {FLOOR}, else maximum F1",
}


class Matched:
    """Every detection of a split, matched once: flat arrays plus per-image ground-truth counts."""

    def __init__(self, dets, gts, num_classes: int) -> None:
        """dets: per image (boxes, scores, labels); gts: per image (boxes, labels)."""
        self.k = num_classes
        img, lab, score, tp = [], [], [], []
        self.n_gt = np.zeros((len(gts), num_classes), dtype=np.int64)
        for i, ((db, ds, dl), (gb, gl)) in enumerate(zip(dets, gts)):
            self.n_gt[i] = np.bincount(np.asarray(gl, np.int64), minlength=num_classes)[:num_classes]
            for c in np.unique(dl):
                sel = np.nonzero(dl == c)[0]
                sel = sel[np.argsort(-ds[sel], kind="stable")]
                g = np.asarray(gb)[np.asarray(gl) == c]
                img.append(np.full(len(sel), i))
                lab.append(np.full(len(sel), c))
                score.append(ds[sel])
                tp.append(_match(np.asarray(db)[sel], g))
        cat = lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)  # noqa: E731
        self.img, self.label, self.score = cat(img, np.int64), cat(lab, np.int64), cat(score, np.float64)
        self.tp = np.concatenate(tp).astype(bool) if tp else np.zeros((0, len(IOU_THRESHOLDS)), bool)
        self.rows_of = [np.nonzero(self.img == i)[0] for i in range(len(gts))]


def _match(det_boxes, gt_boxes) -> np.ndarray:
    """(n_det, n_thresholds) true-positive flags for detections already sorted by score."""
    out = np.zeros((len(det_boxes), len(IOU_THRESHOLDS)), dtype=bool)
    if len(det_boxes) == 0 or len(gt_boxes) == 0:
        return out
    ious = iou_matrix(det_boxes, gt_boxes)
    for t, thr in enumerate(IOU_THRESHOLDS):
        taken = np.zeros(len(gt_boxes), dtype=bool)
        for d in range(len(det_boxes)):
            cand = np.where(taken, -1.0, ious[d])
            j = int(np.argmax(cand))
            if cand[j] >= thr:
                taken[j] = True
                out[d, t] = True
    return out


def average_precision(scores, tp, n_gt: int):
    """101-point interpolated AP per IoU threshold -> (n_thresholds,) and the interpolated
    precision at RECALL_POINTS for each threshold; NaN when the class has no ground truth."""
    if n_gt == 0:
        return np.full(tp.shape[1], np.nan), None
    order = np.argsort(-scores, kind="stable")
    tp = tp[order]
    ctp = np.cumsum(tp, 0)
    cfp = np.cumsum(~tp, 0)
    recall = ctp / n_gt
    precision = ctp / np.maximum(ctp + cfp, 1)
    precision = np.maximum.accumulate(precision[::-1], 0)[::-1]  # envelope
    ap = np.zeros(tp.shape[1])
    curves = np.zeros((tp.shape[1], len(RECALL_POINTS)))
    for t in range(tp.shape[1]):
        idx = np.searchsorted(recall[:, t], RECALL_POINTS, side="left")
        ok = idx < len(recall)
        curves[t, ok] = precision[idx[ok], t]
        ap[t] = curves[t].mean()
    return ap, curves


def _point(m: Matched, rows, n_gt, score_threshold: float):
    """Metric values and per-class arrays for the detections ``rows`` and ground-truth counts ``n_gt``."""
    ap50, ap5095, prec, rec = (np.full(m.k, np.nan) for _ in range(4))
    for c in range(m.k):
        r = rows[m.label[rows] == c]
        ap, _ = average_precision(m.score[r], m.tp[r], int(n_gt[c]))
        ap50[c], ap5095[c] = ap[0], np.nanmean(ap) if np.isfinite(ap).any() else np.nan
        kept = r[m.score[r] >= score_threshold]
        tp = int(m.tp[kept, 0].sum())
        if len(kept) or n_gt[c]:
            prec[c] = tp / len(kept) if len(kept) else 0.0
            rec[c] = tp / n_gt[c] if n_gt[c] else np.nan
    mean = lambda v: float(np.nanmean(v)) if np.isfinite(v).any() else np.nan  # noqa: E731
    values = {"map50": mean(ap50), "map50_95": mean(ap5095), "precision": mean(prec), "recall": mean(rec)}
    return values, {"map50": ap50, "map50_95": ap5095, "precision": prec, "recall": rec}


def _num(v):
    return None if v is None or not np.isfinite(v) else round(float(v), 6)


def _interval(samples):
    s = np.asarray(samples, float)
    s = s[np.isfinite(s)]
    return np.percentile(s, [2.5, 97.5]) if len(s) >= 20 else (np.nan, np.nan)


def detection_metrics(m: Matched, groups, score_threshold: float, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """Contract metrics {map50, map50_95, precision, recall}, each with a 95% bootstrap CI and per_class."""
    all_rows = np.arange(len(m.score))
    point, per_class = _point(m, all_rows, m.n_gt.sum(0), score_threshold)
    reps = []
    for pick in _bootstrap(groups, n_boot, seed):
        rows = np.concatenate([m.rows_of[i] for i in pick]) if len(pick) else all_rows[:0]
        reps.append(_point(m, rows, m.n_gt[pick].sum(0), score_threshold))
    out = {}
    for name, value in point.items():
        lo, hi = _interval([r[0][name] for r in reps])
        pcs = {}
        for c in range(m.k):
            clo, chi = _interval([r[1][name][c] for r in reps])
            pcs[str(c)] = {"value": _num(per_class[name][c]), "ci_low": _num(clo), "ci_high": _num(chi)}
        out[name] = {"value": _num(value), "ci_low": _num(lo), "ci_high": _num(hi), "per_class": pcs}
    return out


def pr_curves(m: Matched) -> dict:
    """Per class, at IoU 0.5: interpolated precision at 101 recall points, for report.json."""
    out = {}
    for c in range(m.k):
        r = np.nonzero(m.label == c)[0]
        _, curves = average_precision(m.score[r], m.tp[r], int(m.n_gt[:, c].sum()))
        if curves is not None:
            out[str(c)] = {"recall": RECALL_POINTS.round(2).tolist(), "precision": np.round(curves[0], 5).tolist()}
    return out


SCORE_GRID = np.round(np.arange(0.05, 0.96, 0.01), 2)


def choose_score_threshold(m: Matched, metric: str, grid=SCORE_GRID):
    """-> (threshold, objective value) by the rule RULES[metric], on boxes matched at IoU 0.5."""
    n_gt = m.n_gt.sum(0)
    has = n_gt > 0
    p = np.zeros((len(grid), m.k))
    r = np.zeros((len(grid), m.k))
    for i, t in enumerate(grid):
        for c in range(m.k):
            kept = (m.label == c) & (m.score >= t)
            tp = m.tp[kept, 0].sum()
            p[i, c] = tp / kept.sum() if kept.sum() else 0.0
            r[i, c] = tp / n_gt[c] if n_gt[c] else 0.0
    p, r = p[:, has].mean(1), r[:, has].mean(1)
    f1 = 2 * p * r / np.maximum(p + r, 1e-12)
    if metric == "precision":
        ok = np.nonzero(r >= FLOOR)[0]
        i = int(ok[np.argmax(p[ok])]) if len(ok) else int(np.argmax(f1))
        return float(grid[i]), float(p[i])
    if metric == "recall":
        ok = np.nonzero(p >= FLOOR)[0]
        i = int(ok[np.argmax(r[ok])]) if len(ok) else int(np.argmax(f1))
        return float(grid[i]), float(r[i])
    i = int(np.argmax(f1))
    return float(grid[i]), float(f1[i])


def evaluate_split(forward, prep, det_cfg: dict, k: int, seed: int):
    """One split scored with ``forward`` (the exported ONNX model for reported metrics) and the serving
    post-processing ``det_cfg``: (metrics with patient-level intervals, PR curves, served detections per image)."""
    raw = raw_outputs(forward, prep)
    m = Matched(
        detections(raw, prep, det_cfg, score_floor=min(EVAL_SCORE_FLOOR, det_cfg["score_threshold"])), prep.gts, k
    )
    groups = np.array([r.patient for r in prep.records])
    metrics = detection_metrics(m, groups, det_cfg["score_threshold"], seed=seed)
    served = detections(raw, prep, det_cfg)  # exactly what serving returns, for the figures
    return metrics, pr_curves(m), served
