"""The monitoring baseline frozen into manifest.json (``monitoring_baseline``, issue 49 item 1).

Aggregates of the validation and test patients only, never rows: per input column the counts in bins between its
deciles (a value goes to the count of edges at or below it, numpy's ``searchsorted(side="right")``, as serving's
``binOf`` in src/monitoring/baseline.ts) or, for a categorical column, the count per category code; the score's
counts in bins (20 of width 0.05 for probabilities, deciles for a regression's value) and, for a binary model, the
share flagged positive at the manifest's thresholds. Serving bins each prediction the same way so that drift is
measured bin for bin. Deciles are interpolated, so an edge is not a patient's own value.
"""

from __future__ import annotations

import numpy as np

SOURCE = "validation and test patients"
PROBABILITY_EDGES = [round((i + 1) * 0.05, 2) for i in range(19)]


def _edges(values: np.ndarray) -> list[float]:
    if values.size == 0:
        return []
    qs = np.quantile(values, np.linspace(0.1, 0.9, 9))
    return sorted({round(float(q), 6) for q in qs})


def _counts(values: np.ndarray, edges: list[float]) -> list[int]:
    bins = np.searchsorted(np.asarray(edges, dtype=float), values, side="right")
    return [int(c) for c in np.bincount(bins, minlength=len(edges) + 1)]


def numeric(name: str, x: np.ndarray) -> dict:
    present = x[~np.isnan(x)]
    edges = _edges(present)
    q = np.quantile(present, [0.05, 0.25, 0.5, 0.75, 0.95]) if present.size else [float("nan")] * 5
    return {
        "name": name,
        "type": "numeric",
        "edges": edges,
        "counts": _counts(present, edges),
        "missing": int(np.isnan(x).sum()),
        "quantiles": dict(zip(["p05", "p25", "p50", "p75", "p95"], [round(float(v), 6) for v in q])),
    }


def _categorical(name: str, x: np.ndarray, n_codes: int) -> dict:
    codes = x[~np.isnan(x)].astype(int)
    counts = np.bincount(codes[(codes >= 0) & (codes < n_codes)], minlength=n_codes)
    return {"name": name, "type": "categorical", "counts": {str(i): int(c) for i, c in enumerate(counts)}}


def decisions(problem: str, scores: np.ndarray, thresholds: list[float] | None) -> np.ndarray | None:
    """The predicted class per row as serving decides it (src/serving/postprocess.ts applyThresholds)."""
    if problem == "binary":
        t = thresholds[1] if thresholds else 0.5
        return (scores[:, 1] >= t).astype(int)
    if problem == "multiclass":
        return np.argmax(scores, axis=1)
    return None


def build(
    problem: str,
    columns: list | None,
    X: np.ndarray | None,
    scores: np.ndarray,
    thresholds: list[float] | None,
    positive_index: int | None,
) -> dict:
    """columns: objects with name, type and codes (tabular), with X their rows; scores: (n, k) as the model outputs."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 1:
        scores = scores[:, None]
    out: dict = {"schema_version": 1, "source": SOURCE, "n": int(scores.shape[0])}
    if columns is not None and X is not None:
        X = np.asarray(X, dtype=float)
        out["columns"] = [
            _categorical(c.name, X[:, j], len(c.codes)) if c.type == "categorical" else numeric(c.name, X[:, j])
            for j, c in enumerate(columns)
        ]
    if problem == "regression":
        values = scores[:, 0]
        edges = _edges(values)
        out["score"] = {"edges": edges, "counts": _counts(values, edges)}
    elif problem in ("binary", "multiclass"):
        pos = positive_index if (problem == "binary" and positive_index is not None) else None
        shown = scores[:, pos] if pos is not None else scores.max(axis=1)
        out["score"] = {"edges": PROBABILITY_EDGES, "counts": _counts(shown, PROBABILITY_EDGES)}
        decided = decisions(problem, scores, thresholds)
        if pos is not None and decided is not None:
            out["positive_index"] = int(pos)
            out["positive_rate"] = round(float(np.mean(decided == pos)), 6)
    return out


# Boxes per image are small integers: fixed bins (0, 1, 2, 3, 4, 5-6, 7-9, 10-14, 15-19, 20-29, 30+) rather than
# deciles, which collapse on data where most images have one or two boxes.
BOX_COUNT_EDGES = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30]


def detection(served, sizes: list[tuple[int, int]]) -> dict:
    """A detection model's baseline from what it serves on the validation and test images (issue 49 item 1):
    boxes per image (fixed bins), each box's size as the square root of its share of the image's area (0..1, so
    images of any resolution compare) and each box's score (both binned at their deciles). served: per image the
    post-processed (boxes (n,4) in original pixels, scores (n,), classes (n,)); sizes: per image (width, height).
    No box coordinates are kept, only these counts."""
    per_image = np.array([len(s[1]) for s in served], dtype=float)
    rel, scores = [], []
    for (boxes, sc, _), (w, h) in zip(served, sizes):
        b = np.asarray(boxes, dtype=float).reshape(-1, 4)
        area = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
        rel.extend(np.sqrt(area / max(float(w) * float(h), 1.0)).tolist())
        scores.extend(np.asarray(sc, dtype=float).tolist())
    boxes_desc = numeric("det:boxes", per_image)
    boxes_desc["edges"] = BOX_COUNT_EDGES
    boxes_desc["counts"] = _counts(per_image, BOX_COUNT_EDGES)
    return {
        "schema_version": 1,
        "source": SOURCE,
        "n": len(served),
        "detection": {
            "images": len(served),
            "boxes": int(per_image.sum()),
            # Sizes and scores only when some box was served (no quantile of nothing).
            "descriptors": [boxes_desc]
            + ([numeric("det:size", np.array(rel)), numeric("det:score", np.array(scores))] if rel else []),
        },
    }
