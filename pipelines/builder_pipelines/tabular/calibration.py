"""Probability calibration that the ONNX graph can reproduce exactly.

- binary: Platt scaling on the logit of p(class 1): q = sigmoid(a * logit(p) + b).
- multiclass: temperature scaling: q = softmax(log(p) / T).
Fitted on the search's out-of-fold predictions of the chosen model (data the final model's validation
never saw), and kept only when it lowers the log-loss on the validation split. Both maps are monotonic
per row, so they change probabilities (and thresholds) but not the ranking within a class.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar

EPS = 1e-6  # probabilities are clipped to [EPS, 1-EPS] before logs, in numpy and in the graph alike


def log_loss(y: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(p[np.arange(len(y)), y], 1e-15, 1.0)
    return float(-np.log(p).mean())


def _logit(p):
    p = np.clip(p, EPS, 1 - EPS)
    return np.log(p) - np.log(1 - p)


def apply(cal: dict | None, p: np.ndarray) -> np.ndarray:
    if not cal:
        return p
    if cal["method"] == "platt":
        q = 1 / (1 + np.exp(-(cal["a"] * _logit(p[:, 1]) + cal["b"])))
        return np.stack([1 - q, q], axis=1)
    z = np.log(np.clip(p, EPS, 1.0)) / cal["temperature"]
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit(problem: str, y: np.ndarray, p: np.ndarray) -> dict:
    if problem == "binary":
        x = _logit(p[:, 1])

        def nll(ab):
            z = ab[0] * x + ab[1]
            return float(np.mean(np.logaddexp(0, z) - y * z))

        a, b = minimize(nll, np.array([1.0, 0.0]), method="L-BFGS-B").x
        return {"method": "platt", "a": float(a), "b": float(b)}
    res = minimize_scalar(
        lambda lt: log_loss(y, apply({"method": "temperature", "temperature": float(np.exp(lt))}, p)),
        bounds=(np.log(0.05), np.log(20)),
        method="bounded",
    )
    return {"method": "temperature", "temperature": float(np.exp(res.x))}


def choose(problem: str, y_fit, p_fit, y_val, p_val) -> tuple[dict | None, dict]:
    """Returns (calibration or None, a record of the decision for the report)."""
    if problem not in ("binary", "multiclass"):
        return None, {"applied": False, "reason": "regression: no probabilities"}
    cal = fit(problem, y_fit, p_fit)
    before, after = log_loss(y_val, p_val), log_loss(y_val, apply(cal, p_val))
    applied = after < before - 1e-4
    if problem == "binary" and cal["a"] <= 0:  # a reversed ranking is never a calibration
        applied = False
    record = {
        "applied": bool(applied),
        **cal,
        "val_logloss_before": round(before, 6),
        "val_logloss_after": round(after, 6),
        "fitted_on": "out-of-fold predictions of the search on the train split",
    }
    return (cal if applied else None), record
