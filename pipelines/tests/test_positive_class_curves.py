"""The binary ROC and precision-recall figures are drawn for the positive class the request named, not always for
class index 1 (issue 37: BreastMNIST's curves were drawn for normal_or_benign)."""

import numpy as np

from builder_pipelines.tabular import evaluation
from builder_pipelines.vision import evaluation as report


def _figures(tmp_path, positive):
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.2).astype(int)  # class 1 is rare, so the two classes' PR curves differ clearly
    s1 = np.clip(0.5 * y + rng.random(200) * 0.6, 0, 1)
    scores = np.stack([1 - s1, s1], axis=1)
    truth = np.stack([1 - y, y], axis=1)
    classes = [{"index": 0, "name": "malignant"}, {"index": 1, "name": "benign"}]
    section = report.test_report("binary", classes, truth, scores, [0.5, 0.5], positive=positive)
    figs = report.write_test_figures(str(tmp_path), "binary", classes, section)
    return section, {f["name"]: f for f in figs}


def test_curves_follow_the_positive_class(tmp_path):
    _, figs = _figures(tmp_path, (0, "malignant"))
    rows = figs["pr"]["table"]["rows"]
    assert "malignant" in (tmp_path / "pr.svg").read_text()
    assert "benign" not in (tmp_path / "pr.svg").read_text()
    # Class 0 is common, so its precision stays high where class 1's cannot: the table is class 0's curve.
    assert min(r[1] for r in rows) >= 0.7
    other = tmp_path / "other"
    other.mkdir()
    _, figs1 = _figures(other, (1, "benign"))
    assert min(r[1] for r in figs1["pr"]["table"]["rows"]) < 0.5
    assert "benign" in (other / "pr.svg").read_text()


def _tabular_pr_rows(tmp_path, positive):
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.2).astype(int)
    s1 = np.clip(0.5 * y + rng.random(200) * 0.6, 0, 1)
    scores = np.stack([1 - s1, s1], axis=1)
    _, extras = evaluation.score_split("binary", y, scores, [0.5, 0.5], np.arange(200).astype(str), 0, positive)
    classes = [{"index": 0, "name": "malignant"}, {"index": 1, "name": "benign"}]
    figs = {f["name"]: f for f in evaluation.write_figures(str(tmp_path), "binary", classes, extras, None)}
    return figs["pr"]["table"]["rows"]


def test_tabular_curves_follow_the_positive_class(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert min(r[1] for r in _tabular_pr_rows(a, (0, "malignant"))) >= 0.7
    assert "malignant" in (a / "pr.svg").read_text()
    assert min(r[1] for r in _tabular_pr_rows(b, (1, "benign"))) < 0.5
