"""Net benefit and logistic recalibration on inputs whose answers are known by hand or by construction."""

import numpy as np
import pytest

from builder_pipelines.common import decision
from builder_pipelines.common import metrics as M


def test_net_benefit_by_hand():
    # 10 patients, 4 with the disease. At pt = 0.25 the model treats the 5 with p >= 0.25: 3 true, 2 false positives.
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    p = np.array([0.9, 0.8, 0.3, 0.1, 0.6, 0.25, 0.2, 0.1, 0.05, 0.0])
    nb = decision.net_benefit(y, p, [0.25])[0]
    assert nb == pytest.approx(3 / 10 - 2 / 10 * (0.25 / 0.75))
    # Treat all at 0.25: prevalence 0.4 - 0.6 * 1/3 = 0.2; treat none is 0.
    assert decision.treat_all_benefit(y, [0.25])[0] == pytest.approx(0.2)


def test_perfect_model_net_benefit_is_prevalence_and_curve_shape():
    y = np.array([1] * 30 + [0] * 70)
    p = y.astype(float)  # certain and right
    curve = decision.decision_curve(y, p)
    assert len(curve["thresholds"]) == 99 and curve["thresholds"][0] == 0.01 and curve["thresholds"][-1] == 0.99
    assert all(v == pytest.approx(0.3) for v in curve["model"])
    assert curve["treat_all"][0] == pytest.approx(0.3 - 0.7 * 0.01 / 0.99, abs=1e-6)
    assert curve["treat_all"][-1] < -60  # treating everyone at a 99% threshold is very harmful


def test_perfectly_calibrated_predictions_give_slope_one_intercept_zero():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.02, 0.98, 20000)
    y = (rng.uniform(size=p.size) < p).astype(int)  # outcomes drawn with exactly the predicted probability
    slope, intercept = decision.calibration_slope_intercept(y, p)
    assert slope == pytest.approx(1.0, abs=0.06)
    assert intercept == pytest.approx(0.0, abs=0.05)


def test_overconfident_and_overpredicting_models_are_recognised():
    rng = np.random.default_rng(1)
    true_logit = rng.normal(0, 1.5, 20000)
    y = (rng.uniform(size=true_logit.size) < 1 / (1 + np.exp(-true_logit))).astype(int)
    too_extreme = 1 / (1 + np.exp(-2 * true_logit))  # logits doubled: slope 0.5
    slope, _ = decision.calibration_slope_intercept(y, too_extreme)
    assert slope == pytest.approx(0.5, abs=0.04)
    too_high = 1 / (1 + np.exp(-(true_logit + 1)))  # every risk shifted up by one logit: intercept about -1
    _, intercept = decision.calibration_slope_intercept(y, too_high)
    assert intercept == pytest.approx(-1.0, abs=0.1)


def test_separation_and_one_class_are_undefined_not_infinite():
    y = np.array([0, 0, 0, 1, 1, 1])
    slope, intercept = decision.calibration_slope_intercept(y, [0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    assert np.isnan(slope)
    assert np.isfinite(intercept)  # the mean risk is still estimable
    assert all(np.isnan(v) for v in decision.calibration_slope_intercept([1, 1, 1], [0.2, 0.5, 0.9]))


def test_binary_metrics_carry_slope_and_intercept_with_patient_intervals():
    rng = np.random.default_rng(2)
    n = 400
    p1 = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < p1).astype(int)
    yo = np.stack([1 - y, y], 1)
    s = np.stack([1 - p1, p1], 1)
    dec = np.stack([p1 < 0.5, p1 >= 0.5], 1).astype(int)
    m = M.classification_metrics("binary", yo, s, dec, np.arange(n).astype(str), n_boot=200, positive=1)
    for name in ("calibration_slope", "calibration_intercept"):
        entry = m[name]
        assert entry["ci_low"] < entry["value"] < entry["ci_high"]
    assert m["calibration_slope"]["ci_low"] < 1 < m["calibration_slope"]["ci_high"]
    # The positive class is the other one: the same probabilities read for class 0 are just as well calibrated.
    m0 = M.classification_metrics("binary", yo, s, dec, np.arange(n).astype(str), n_boot=50, positive=0)
    assert m0["calibration_slope"]["value"] == pytest.approx(m["calibration_slope"]["value"], abs=1e-6)
    multi = M.classification_metrics(
        "multiclass",
        np.eye(3)[rng.integers(0, 3, 60)],
        rng.dirichlet([1, 1, 1], 60),
        np.eye(3)[rng.integers(0, 3, 60)],
        np.arange(60).astype(str),
        n_boot=20,
    )
    assert "calibration_slope" not in multi


def _font_sizes(svg: str) -> list[float]:
    import re

    return [float(v) for v in re.findall(r'font-size="([\d.]+)"', svg)]


def test_every_chart_writes_axis_text_of_at_least_14_units(tmp_path):
    """14 units on a 480-unit figure shown >= 480 px wide (the page's columns) display at >= 12 px; the browser
    test measures the displayed size, this catches a chart module drifting back to small text."""
    from builder_pipelines.common import clinical_figures
    from builder_pipelines.common import report_figures as RF

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    p = np.clip(y * 0.6 + rng.uniform(0, 0.4, 200), 0, 1)
    curves = M.curves(np.stack([1 - y, y], 1), np.stack([1 - p, p], 1))
    svgs = [
        clinical_figures.decision_curve_svg(decision.decision_curve(y, p), "malignant")[0],
        clinical_figures.calibration_svg(curves["calibration"]["1"], "malignant", "Calibration")[0],
        RF.confusion_chart([[5, 1], [2, 7]], ["benign", "malignant"], "Confusion"),
        RF.bar_chart({"radius": 1.0, "texture": 0.5}, "t"),
    ]
    for look in ("tabular", "vision"):
        svgs.append(RF.line_chart([("a", [0, 1], [0, 1])], "t", "x", "y", look=look, diagonal=True, markers=True))
        svgs.append(RF.scatter_chart([0, 1], [0, 1], "t", "x", "y", look=look))
    for svg in svgs:
        assert 'viewBox="0 0 480 ' in svg
        assert min(_font_sizes(svg)) >= 14


def test_calibration_figure_counts_every_case_once():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 86)
    p = np.where(y == 1, rng.uniform(0.9, 1, 86), rng.uniform(0, 0.1, 86))  # WDBC-like: near 0 and 1
    p[:3] = [0.35, 0.55, 0.75]
    curves = M.curves(np.stack([1 - y, y], 1), np.stack([1 - p, p], 1))
    svg, table = clinical_figures_calibration(curves)
    assert sum(row[2] for row in table["rows"]) == 86
    assert all(row[2] > 0 for row in table["rows"])
    assert "<polyline" not in svg  # no line joining thin middle bins into a zig-zag
    assert svg.count("<circle") == len(table["rows"])


def clinical_figures_calibration(curves):
    from builder_pipelines.common import clinical_figures

    return clinical_figures.calibration_svg(curves["calibration"]["1"], "M", "Calibration")
