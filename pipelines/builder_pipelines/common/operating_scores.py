"""``operating_scores.json``: what the server needs to move a binary model's operating point without retraining.

Beside the manifest (``operating_scores_file``), binary tasks only:
- ``validation``: the positive class's probability and the truth (1 = positive) for each validation row, or each
  out-of-fold row where the validation figures come from cross-fitting. Thresholds are chosen on these only.
- ``test``: the same for each test row, with ``patient``: a number per patient (0, 1, ... in order of first
  appearance, never the patient's id) so that the server's bootstrap resamples whole patients, as the test
  metrics' intervals do (common/metrics.py).
A row is flagged positive when its score is at or above the threshold (the manifest's ``thresholds`` say how
serving applies that to class 1's score when the positive class is class 0).
"""

from __future__ import annotations

import json
import os

import numpy as np

FILE = "operating_scores.json"


def _pairs(truth_onehot, scores, k: int) -> dict:
    y = np.asarray(truth_onehot).astype(int)[:, k]
    s = np.asarray(scores, dtype=float)[:, k]
    return {"score": [round(float(v), 9) for v in s], "label": [int(v) for v in y]}


def write(
    out_dir: str,
    positive_index: int,
    val_truth,
    val_scores,
    val_source: str,
    test_truth,
    test_scores,
    test_groups,
) -> str:
    """Writes the file; returns its name (the manifest's ``operating_scores_file``)."""
    _, patient = np.unique(np.asarray(test_groups).astype(str), return_inverse=True)
    first_seen: dict[int, int] = {}
    numbered = [first_seen.setdefault(int(p), len(first_seen)) for p in patient]
    doc = {
        "schema_version": 1,
        "positive_index": int(positive_index),
        "validation": {"source": val_source, **_pairs(val_truth, val_scores, positive_index)},
        "test": {**_pairs(test_truth, test_scores, positive_index), "patient": numbered},
    }
    path = os.path.join(out_dir, FILE)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, separators=(",", ":"), allow_nan=False)
    os.replace(tmp, path)
    return FILE
