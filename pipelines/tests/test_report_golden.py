"""Golden outputs of the split-level evaluation and report code on fixed synthetic scores: the report sections,
the manifest figure entries (names, files, titles, tables) and a hash of every SVG. Recorded before the shared
evaluation module (issue 37 item 9) replaced tabular/evaluation.py's and vision/report.py's own code, so that
refactor could not change what the result page and the model card read.

Re-record deliberately (after a reviewed change of a figure or a metric) with
``BUILDER_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/test_report_golden.py``."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from builder_pipelines.tabular import evaluation
from builder_pipelines.vision import evaluation as report

GOLDEN = Path(__file__).parent / "golden" / "report_outputs.json"


def _classes(k: int) -> list[dict]:
    return [{"index": i, "code": str(i), "name": f"class {i}"} for i in range(k)]


def _scores(problem: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    if problem == "regression":
        y = rng.normal(size=n)
        return y, (y + rng.normal(scale=0.5, size=n))[:, None], None
    k = {"binary": 2, "multiclass": 3, "multilabel": 3}[problem]
    if problem == "multilabel":
        y = (rng.random((n, k)) < 0.4).astype(int)
        scores = np.clip(0.6 * y + rng.random((n, k)) * 0.6, 0, 1)
        return y, scores, [0.5] * k
    y = rng.integers(0, k, size=n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    scores = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    return y, scores, [0.5] * k if problem == "binary" else None


def _svgs(out: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.svg"))}


def _subgroups(n: int) -> dict:
    rng = np.random.default_rng(7)
    site = [["A", "B", "C"][i] for i in rng.integers(0, 3, size=n)]
    return {"columns": [("site", site)], "bins": {}, "distinct": {"site": 3}}


def _tabular(problem: str, tmp: Path) -> dict:
    n = 160
    y, scores, thr = _scores(problem, n, 11)
    groups = np.array([f"p{i // 2}" for i in range(n)])
    k = scores.shape[1] if problem != "regression" else 0
    classes = _classes(k)
    positive = (1, "1") if problem == "binary" else None
    metrics, extras = evaluation.score_split(problem, y, scores, thr, groups, 3, positive)
    clin = evaluation.clinical_section(problem, classes, y, scores, thr, groups, positive, None, 3)
    importance = {"gain": {"age": 3.0, "bp": 1.5, "sex": 0.2}} if problem != "binary" else None
    out = tmp / f"tabular-{problem}"
    out.mkdir()
    figs = evaluation.write_figures(str(out), problem, classes, extras, importance)
    return {"metrics": metrics, "extras": extras, "clinical": clin, "figures": figs, "svg": _svgs(out)}


def _vision(problem: str, tmp: Path) -> dict:
    n = 150
    y, scores, thr = _scores(problem, n, 5)
    groups = np.array([f"p{i // 3}" for i in range(n)])
    if problem in ("binary", "multiclass"):
        truth = np.eye(scores.shape[1])[y]
    else:
        truth = y.astype(float) if problem == "regression" else y
    k = scores.shape[1] if problem != "regression" else 0
    classes = _classes(k)
    positive = (0, "0") if problem == "binary" else None
    metrics = report.split_metrics(problem, truth, scores, thr, groups, 4, positive)
    subgroups = _subgroups(n) if problem == "binary" else None
    clin = report.clinical_section(problem, classes, truth, scores, thr, groups, positive, subgroups, 4)
    section = report.test_report(problem, classes, truth, scores, thr, positive)
    out = tmp / f"vision-{problem}"
    out.mkdir()
    figs = report.write_test_figures(str(out), problem, classes, section)
    history = [
        [{"epoch": e, "train_loss": 1 / e, "val_loss": 1.2 / e, "val_metric": 1 - 1 / (e + 1)} for e in range(1, 6)]
        for _ in range(2)
    ]
    figs += report.write_training_figures(str(out), history, "auc")
    return {"metrics": metrics, "clinical": clin, "section": section, "figures": figs, "svg": _svgs(out)}


def _outputs(tmp: Path) -> dict:
    got = {}
    for problem in ("binary", "multiclass", "regression"):
        got[f"tabular/{problem}"] = _tabular(problem, tmp)
    for problem in ("binary", "multiclass", "multilabel", "regression"):
        got[f"vision/{problem}"] = _vision(problem, tmp)
    # JSON round trip: the manifest and report.json see exactly this
    return json.loads(json.dumps(got, sort_keys=True, default=float))


def test_report_outputs_match_the_golden_record(tmp_path):
    got = _outputs(tmp_path)
    if os.environ.get("BUILDER_RECORD_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        pytest.skip("golden outputs recorded")
    want = json.loads(GOLDEN.read_text())
    assert sorted(got) == sorted(want)
    for case in want:
        for part in want[case]:
            assert got[case][part] == want[case][part], f"{case}: {part} differs from the golden record"
