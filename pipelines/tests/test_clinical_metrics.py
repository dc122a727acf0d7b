"""Sensitivity, specificity, PPV, NPV, prevalence, the positive class and the confusion matrix, on known tables."""

import json

import numpy as np
import pytest

from builder_pipelines.common import clinical, contract, metrics
from builder_pipelines.common.errors import DataError


def _binary(tp, fn, fp, tn):
    """Rows realising a known 2x2 table with class 1 positive: (one-hot truth, scores, decisions, patient ids)."""
    truth = [1] * tp + [1] * fn + [0] * fp + [0] * tn
    called = [1] * tp + [0] * fn + [1] * fp + [0] * tn
    y = np.eye(2, dtype=int)[truth]
    p = np.eye(2, dtype=int)[called]
    s1 = np.where(np.array(called) == 1, 0.8, 0.2) + np.linspace(0, 0.01, len(truth))
    return y, np.stack([1 - s1, s1], 1), p, np.arange(len(truth)).astype(str)


def test_binary_rates_match_a_known_confusion_matrix():
    y, s, p, g = _binary(tp=30, fn=10, fp=5, tn=55)
    m = metrics.classification_metrics("binary", y, s, p, g, n_boot=200)
    assert m["sensitivity"]["value"] == pytest.approx(30 / 40)
    assert m["specificity"]["value"] == pytest.approx(55 / 60)
    assert m["ppv"]["value"] == pytest.approx(30 / 35)
    assert m["npv"]["value"] == pytest.approx(55 / 65)
    assert m["prevalence"]["value"] == pytest.approx(40 / 100)
    for name in metrics.CLINICAL:  # a real interval around the value, from the patient bootstrap
        assert m[name]["ci_low"] < m[name]["value"] < m[name]["ci_high"]
    # per_class takes each class as positive in turn: class 0's sensitivity is class 1's specificity.
    assert m["sensitivity"]["per_class"]["0"]["value"] == pytest.approx(55 / 60)
    assert m["ppv"]["per_class"]["0"]["value"] == pytest.approx(55 / 65)
    # The existing macro figures are unchanged: recall is the mean of both classes' sensitivities.
    assert m["recall"]["value"] == pytest.approx((30 / 40 + 55 / 60) / 2)


def test_positive_index_zero_reports_the_other_class():
    y, s, p, g = _binary(tp=30, fn=10, fp=5, tn=55)
    m = metrics.classification_metrics("binary", y, s, p, g, n_boot=50, positive=0)
    assert m["sensitivity"]["value"] == pytest.approx(55 / 60)
    assert m["specificity"]["value"] == pytest.approx(30 / 40)
    assert m["prevalence"]["value"] == pytest.approx(0.6)


def test_multiclass_is_one_vs_rest_with_a_macro_value():
    # truth rows x predicted columns
    table = np.array([[8, 1, 1], [2, 6, 2], [0, 0, 10]])
    truth, called = [], []
    for t in range(3):
        for q in range(3):
            truth += [t] * table[t, q]
            called += [q] * table[t, q]
    y, p = np.eye(3, dtype=int)[truth], np.eye(3, dtype=int)[called]
    s = p * 0.7 + 0.1
    m = metrics.classification_metrics("multiclass", y, s, p, np.arange(len(truth)).astype(str), n_boot=50)
    sens = [table[c, c] / table[c].sum() for c in range(3)]
    spec = [
        (table.sum() - table[c].sum() - table[:, c].sum() + table[c, c]) / (table.sum() - table[c].sum())
        for c in range(3)
    ]
    for c in range(3):
        assert m["sensitivity"]["per_class"][str(c)]["value"] == pytest.approx(sens[c])
        assert m["specificity"]["per_class"][str(c)]["value"] == pytest.approx(spec[c])
    assert m["sensitivity"]["value"] == pytest.approx(np.mean(sens))
    assert m["specificity"]["value"] == pytest.approx(np.mean(spec))


def test_undefined_rates_are_null_not_zero():
    # No patient called positive: PPV has no denominator.
    y, s, p, g = _binary(tp=0, fn=10, fp=0, tn=20)
    m = metrics.classification_metrics("binary", y, s, p, g, n_boot=30)
    assert m["ppv"]["value"] is None
    assert m["sensitivity"]["value"] == 0.0


CLASSES = [{"index": 0, "code": "B", "name": "benign"}, {"index": 1, "code": "M", "name": "malignant"}]


def test_positive_class_rules():
    rows = np.array([0] * 60 + [1] * 40)
    assert clinical.positive_class("binary", CLASSES, rows, "B") == (0, clinical.RULE_REQUESTED)
    assert clinical.positive_class("binary", CLASSES, rows, None) == (1, clinical.RULE_RARER)
    assert clinical.positive_class("binary", CLASSES, 1 - rows, None) == (0, clinical.RULE_RARER)
    assert clinical.positive_class("binary", CLASSES, np.array([0, 1] * 5), None) == (1, clinical.RULE_TIE)
    assert clinical.positive_class("multiclass", CLASSES, rows, None) is None
    with pytest.raises(DataError, match=r"'m' is not a value of the label column \(its values: B, M\)"):
        clinical.positive_class("binary", CLASSES, rows, "m")
    with pytest.raises(DataError, match="two values"):
        clinical.positive_class("multiclass", CLASSES, rows, "M")


def test_section_counts_rows_and_patients():
    y, _s, p, _ = _binary(tp=3, fn=1, fp=2, tn=4)
    groups = np.array(["a", "a", "b", "c", "d", "e", "f", "f", "g", "h"])  # two rows of a, two of f
    out = clinical.section("binary", CLASSES, y, p, groups, (1, clinical.RULE_REQUESTED))
    assert out["positive_class"] == {"index": 1, "code": "M", "name": "malignant", "rule": "requested"}
    assert out["confusion_matrix"] == {"labels": ["benign", "malignant"], "counts": [[4, 2], [1, 3]]}
    assert out["test_patients_per_class"] == {"malignant": 3, "benign": 5}  # 6 benign rows, 5 patients


def test_strongest_feature_finds_a_separating_column():
    rng = np.random.default_rng(0)
    y = np.array([0] * 50 + [1] * 50)
    X = np.stack([rng.normal(size=100), y * 10 - rng.random(100), rng.normal(size=100) + y * 0.5], 1)
    best = clinical.strongest_feature(X, y, ["noise", "leak", "weak"])
    assert best["name"] == "leak" and best["auc"] == pytest.approx(1.0)
    inverted = clinical.strongest_feature(-X, y, ["noise", "leak", "weak"])  # folded: a negative relation counts too
    assert inverted["name"] == "leak" and inverted["auc"] == pytest.approx(1.0)


def test_manifest_schema_accepts_the_clinical_section():
    y, s, p, g = _binary(tp=3, fn=1, fp=2, tn=4)
    section = clinical.section("binary", CLASSES, y, p, g, (1, clinical.RULE_RARER))
    section["strongest_feature"] = {"name": "x", "auc": 0.7}
    errs = contract.errors(
        "manifest",
        {"clinical": section, "metrics": {"test": metrics.classification_metrics("binary", y, s, p, g, n_boot=30)}},
    )
    assert not [e for e in errs if e.startswith(("clinical", "metrics"))]


def test_section_multiclass_and_multilabel_tables():
    classes = [{"index": i, "code": c, "name": c} for i, c in enumerate(["none", "left", "right"])]
    truth = np.eye(3, dtype=int)[[0, 0, 1, 1, 2, 2]]
    called = np.eye(3, dtype=int)[[0, 1, 1, 1, 2, 0]]
    out = clinical.section("multiclass", classes, truth, called, np.arange(6).astype(str), None)
    assert "positive_class" not in out
    assert out["confusion_matrix"] == {"labels": ["none", "left", "right"], "counts": [[1, 1, 0], [0, 2, 0], [1, 0, 1]]}
    y = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    p = np.array([[1, 1], [0, 1], [0, 1], [0, 0]])
    out = clinical.section("multilabel", classes[:2], y, p, np.arange(4).astype(str), None)
    # per label [[tn, fp], [fn, tp]]
    assert out["confusion_matrix"] == {
        "labels": ["none", "left"],
        "per_label": {"none": [[2, 0], [1, 1]], "left": [[1, 1], [0, 2]]},
    }
    assert not [e for e in contract.errors("manifest", {"clinical": out}) if e.startswith("clinical")]


def test_an_undefined_metric_is_sent_as_null_within_the_event_contract(capsys):
    from builder_pipelines.common import events

    saved = events._out
    events._out = __import__("sys").stdout
    try:
        events.metric("val", "ppv", None)
        events.metric("test", "npv", float("nan"))
    finally:
        events._out = saved
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"type": "metric", "split": "val", "name": "ppv", "value": None},
        {"type": "metric", "split": "test", "name": "npv", "value": None},
    ]
    assert all(contract.errors("event", e) == [] for e in lines)
