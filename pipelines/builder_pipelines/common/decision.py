"""Decision curve and logistic recalibration for a binary model's positive-class probabilities (test split).

Net benefit (Vickers & Elkin 2006) at a threshold probability pt weighs true positives against false positives at
the odds a clinician accepts when choosing pt: NB = TP/N - FP/N * pt / (1 - pt). Treating every patient gives
prevalence - (1 - prevalence) * pt / (1 - pt); treating none gives 0. A model is useful at pt where its curve lies
above both.

Calibration slope and intercept (Van Calster et al. 2016, "weak calibration"): the slope b of the logistic fit
logit P(y=1) = a + b * logit(p) (1: spread right; below 1: predictions too extreme; above 1: too timid), and the
calibration-in-the-large intercept a of the same fit with the slope held at 1 (0: the average risk is right;
negative: the model over-predicts). Either is undefined (NaN) when the fit does not converge, e.g. when the
predictions separate the classes perfectly and the slope runs to infinity.
"""

from __future__ import annotations

import numpy as np

THRESHOLDS = np.round(np.arange(1, 100) / 100, 2)  # 0.01 .. 0.99
EPS = 1e-6
MAX_ITER = 50
MAX_SLOPE = 100.0  # beyond this the fit is running to infinity (separation), not converging


def net_benefit(y, p, thresholds=THRESHOLDS) -> np.ndarray:
    """Net benefit of treating the patients with p >= pt, at each threshold probability pt."""
    y = np.asarray(y, dtype=int)
    p = np.asarray(p, dtype=float)
    t = np.asarray(thresholds, dtype=float)
    n = len(y)
    if n == 0:
        return np.full(len(t), np.nan)
    treat = p[None, :] >= t[:, None]
    tp = (treat & (y[None, :] == 1)).sum(1)
    fp = (treat & (y[None, :] == 0)).sum(1)
    return tp / n - fp / n * t / (1 - t)


def treat_all_benefit(y, thresholds=THRESHOLDS) -> np.ndarray:
    prevalence = float(np.mean(y)) if len(y) else np.nan
    t = np.asarray(thresholds, dtype=float)
    return prevalence - (1 - prevalence) * t / (1 - t)


def decision_curve(y, p, thresholds=THRESHOLDS) -> dict:
    """{thresholds, model, treat_all} (treat none is 0 everywhere), rounded for report.json."""
    r = lambda v: [round(float(x), 6) for x in v]  # noqa: E731
    return {
        "thresholds": r(thresholds),
        "model": r(net_benefit(y, p, thresholds)),
        "treat_all": r(treat_all_benefit(y, thresholds)),
    }


def _logit(p):
    p = np.clip(np.asarray(p, dtype=float), EPS, 1 - EPS)
    return np.log(p / (1 - p))


def _fit(y, X, offset) -> np.ndarray | None:
    """Logistic regression by Newton-Raphson; None when it does not converge (separation, one class)."""
    beta = np.zeros(X.shape[1])
    for _ in range(MAX_ITER):
        eta = offset + X @ beta
        mu = 0.5 * (1 + np.tanh(eta / 2))  # the logistic function without exp's overflow at large |eta|
        w = mu * (1 - mu)
        hess = X.T @ (X * w[:, None])
        try:
            step = np.linalg.solve(hess, X.T @ (y - mu))
        except np.linalg.LinAlgError:
            return None
        beta = beta + step
        if not np.all(np.isfinite(beta)) or np.abs(beta).max() > MAX_SLOPE:
            return None
        if np.abs(step).max() < 1e-8:
            return beta
    return None


def calibration_slope_intercept(y, p) -> tuple[float, float]:
    """(slope, intercept) of the logistic recalibration; NaN where undefined."""
    y = np.asarray(y, dtype=float)
    if len(y) < 2 or y.min() == y.max():
        return np.nan, np.nan
    lp = _logit(p)
    both = _fit(y, np.stack([np.ones_like(lp), lp], 1), np.zeros_like(lp))
    large = _fit(y, np.ones((len(lp), 1)), lp)
    return (float(both[1]) if both is not None else np.nan), (float(large[0]) if large is not None else np.nan)
