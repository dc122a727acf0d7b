"""The model families: LightGBM, CatBoost, a regularised linear model (logistic regression / ridge), and bagged
randomised trees (random forest, extra trees), which are strong on small tables; all export to ONNX (skl2onnx,
onnxmltools, CatBoost's own exporter).

A *config* is ``{"model": "lightgbm" | "catboost" | "linear" | "random_forest" | "extra_trees" | "blend", "params":
{...}}``; ``fit`` turns it into a fitted estimator whose scores are [N, K] probabilities (classification) or [N, 1]
values (regression). Forests and CatBoost see categorical columns as their integer codes (trees split codes like
numbers).
The linear model is a scikit-learn Pipeline (standardise numeric columns, one-hot the integer codes of
categorical columns, then the linear model), so skl2onnx exports the preprocessing inside the graph.

Missing values (NaN, from a numeric column's missing-value markers; see table.py): LightGBM and CatBoost take NaN
as it is, in Python and in their ONNX graphs alike. The linear model imputes the column's training median (a
SimpleImputer step, which skl2onnx exports) and gets one more input per such column, 1 where the value was missing
(MissingFlags; its ONNX converter is in export.py): a gap often says something (a test not ordered), and the median
alone would hide it. The forests see NaN as FOREST_MISSING, a value below every number,
so a split can set missing values apart; skl2onnx's tree ensembles ignore scikit-learn's own NaN routing, so the
graph replaces NaN by the same value first (export.py).
"""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from .table import Column

LGB_MAX_TREES = 2000
LGB_PATIENCE = 50
FOREST_TREES = 200  # enough for stable averages; every tree adds fitting time and graph size
FORESTS = {
    "random_forest": (RandomForestClassifier, RandomForestRegressor),
    "extra_trees": (ExtraTreesClassifier, ExtraTreesRegressor),
}
FOREST_TYPES = tuple(t for pair in FORESTS.values() for t in pair)
CATBOOST_TREES = 1000  # CatBoost's default; its learning rate is then chosen from the table's size
FOREST_MISSING = float(-np.finfo(np.float32).max)  # what the forests see for NaN, in Python and in the graph


def forest_input(X) -> np.ndarray:
    """The forests' view of X: NaN replaced by FOREST_MISSING (a copy only when there is a NaN)."""
    X = np.asarray(X, dtype=np.float64)
    gaps = np.isnan(X)
    return np.where(gaps, FOREST_MISSING, X) if gaps.any() else X


def _lgb_estimator(problem: str, params: dict, n_estimators: int, seed: int, threads: int):
    common = dict(
        n_estimators=n_estimators,
        random_state=seed,
        n_jobs=threads,
        verbose=-1,
        deterministic=True,
        force_row_wise=True,
        **params,
    )
    if problem == "regression":
        return lgb.LGBMRegressor(**common)
    return lgb.LGBMClassifier(**common)


class MissingFlags(TransformerMixin, BaseEstimator):
    """1.0 where a value is missing (NaN), else 0.0, per column: the linear model's view of a gap."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.isnan(np.asarray(X, dtype=np.float64)).astype(np.float64)


def _linear_estimator(problem: str, params: dict, columns: list[Column], seed: int) -> Pipeline:
    num = [i for i, c in enumerate(columns) if c.type == "numeric"]
    cat = [i for i, c in enumerate(columns) if c.type == "categorical"]
    parts = []
    if num:
        # Median imputation only where the training table had missing values: other tables keep the plain graph.
        scale = (
            Pipeline(
                [("impute", SimpleImputer(strategy="median", keep_empty_features=True)), ("scale", StandardScaler())]
            )
            if any(columns[i].missing for i in num)
            else StandardScaler()
        )
        parts.append(("num", scale, num))
    if cat:
        # Every code of the manifest is a known category, so the encoder never meets an unknown one.
        cats = [np.arange(len(columns[i].codes), dtype=np.float64) for i in cat]
        parts.append(("cat", OneHotEncoder(categories=cats, handle_unknown="ignore", sparse_output=False), cat))
    gaps = [i for i in num if columns[i].missing]
    if gaps:
        parts.append(("gaps", MissingFlags(), gaps))
    pre = ColumnTransformer(parts, remainder="drop")
    if problem == "regression":
        head = Ridge(alpha=params["alpha"])
    else:
        width = len(num) + sum(len(columns[i].codes) for i in cat) + len(gaps)
        # Newton-Cholesky converges in a few steps on narrow tables (measured 20x faster than lbfgs on WDBC);
        # its cost grows with width cubed, so wide tables keep lbfgs.
        solver = "newton-cholesky" if width <= 300 else "lbfgs"
        head = LogisticRegression(C=params["C"], solver=solver, max_iter=5000, random_state=seed)
    return Pipeline([("pre", pre), ("model", head)])


def _forest_estimator(family: str, problem: str, params: dict, seed: int, threads: int):
    classifier, regressor = FORESTS[family]
    est = regressor if problem == "regression" else classifier
    return est(n_estimators=FOREST_TREES, random_state=seed, n_jobs=threads, **params)


def float32_forest(est) -> None:
    """Moves every split threshold of a fitted forest down to the largest float32 at or below it.

    scikit-learn compares float32 inputs with float64 thresholds; the ONNX tree ensemble stores float32
    thresholds, and rounding a threshold to nearest can flip ``x <= t`` for a value next to it. Rounded down,
    ``x <= t32`` equals ``x <= t`` for every float32 x (as float32_exact does for LightGBM). ``tree_.threshold``
    is a view of the tree's node array, so the assignment edits the tree itself.
    """
    for tree in est.estimators_:
        t = tree.tree_.threshold
        leaf = tree.tree_.children_left < 0
        t32 = t.astype(np.float32)
        t32 = np.where(t32.astype(np.float64) > t, np.nextafter(t32, np.float32(-np.inf)), t32)
        t[~leaf] = t32.astype(np.float64)[~leaf]


def _catboost_estimator(problem: str, params: dict, seed: int, threads: int):
    # Imported here: the package is large and only best mode fits it.
    from catboost import CatBoostClassifier, CatBoostRegressor

    est = CatBoostRegressor if problem == "regression" else CatBoostClassifier
    # allow_writing_files=False: CatBoost otherwise writes a catboost_info/ folder into the working directory.
    return est(
        **{"iterations": CATBOOST_TREES, **params},
        random_seed=seed,
        thread_count=threads,
        verbose=0,
        allow_writing_files=False,
    )


class Blend:
    """Weighted average of fitted models' scores (any of the families above)."""

    def __init__(self, parts: list, weights: list[float]):
        self.parts, self.weights = parts, weights


def fit(config: dict, problem: str, columns: list[Column], X, y, seed: int, threads: int, X_stop=None, y_stop=None):
    """Fits one config. LightGBM with (X_stop, y_stop) early-stops on them, up to LGB_MAX_TREES."""
    if config["model"] == "blend":
        return Blend(
            [fit(c, problem, columns, X, y, seed, threads) for c in config["parts"]], config["params"]["weights"]
        )
    if config["model"] == "linear":
        est = _linear_estimator(problem, config["params"], columns, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter goes nowhere useful
            est.fit(X, y)
        return est
    if config["model"] in FORESTS:
        est = _forest_estimator(config["model"], problem, config["params"], seed, threads)
        est.fit(forest_input(X), y)
        float32_forest(est)
        return est
    if config["model"] == "catboost":
        # Categorical columns as their integer codes, as for the forests: CatBoost's ONNX export cannot hold its
        # own categorical features.
        est = _catboost_estimator(problem, config["params"], seed, threads)
        est.fit(np.asarray(X, dtype=np.float32), y)
        return est
    cat_idx = [i for i, c in enumerate(columns) if c.type == "categorical"]
    n_trees = LGB_MAX_TREES if X_stop is not None else config.get("n_estimators", 100)
    est = _lgb_estimator(problem, config["params"], n_trees, seed, threads)
    kwargs = {"categorical_feature": cat_idx or "auto"}
    if X_stop is not None:
        kwargs.update(eval_set=[(X_stop, y_stop)], callbacks=[lgb.early_stopping(LGB_PATIENCE, verbose=False)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LightGBM 4.7 deprecates eval_set; 4.5 lacks its replacement
        est.fit(X, y, **kwargs)
    return est


def float32_exact(est) -> None:
    """Moves every LightGBM split threshold down to the largest float32 at or below it.

    Serving sends float32 and the ONNX tree ensemble stores float32 thresholds. LightGBM's double
    threshold can sit just below a float32 data value; rounding it to nearest then flips ``x <= t`` for
    that value. Rounded down, ``x <= t32`` equals ``x <= t`` for every float32 x, so the Python model
    and the graph agree exactly on what serving can send.
    """
    lines = est.booster_.model_to_string().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("threshold="):
            t = np.array([float(v) for v in line[len("threshold=") :].split()], dtype=np.float64)
            t32 = t.astype(np.float32)
            t32 = np.where(t32.astype(np.float64) > t, np.nextafter(t32, np.float32(-np.inf)), t32)
            lines[i] = "threshold=" + " ".join(repr(float(v)) for v in t32)
    # tree_sizes holds each tree's byte length; the edited text changes them, and without it LightGBM parses sequentially.
    lines = [ln for ln in lines if not ln.startswith("tree_sizes=")]
    est._Booster = lgb.Booster(model_str="\n".join(lines))


def predict(est, problem: str, X, n_iter: int | None = None) -> np.ndarray:
    """Scores [N, K] (probabilities) or [N, 1] (regression values)."""
    if isinstance(est, Blend):
        return sum(w * predict(e, problem, X) for w, e in zip(est.weights, est.parts))
    kwargs = {}
    if type(est).__module__.startswith("catboost"):
        X = np.asarray(X, dtype=np.float32)  # as it was fitted, and as the graph sees it
    if isinstance(est, (lgb.LGBMClassifier, lgb.LGBMRegressor)):
        kwargs["num_iteration"] = n_iter if n_iter else None
    if isinstance(est, FOREST_TYPES):
        X = forest_input(X)
    if problem == "regression":
        return np.asarray(est.predict(X, **kwargs), dtype=np.float64).reshape(-1, 1)
    return np.asarray(est.predict_proba(X, **kwargs), dtype=np.float64)


def trees_used(est) -> int:
    best = getattr(est, "best_iteration_", None)
    return int(best) if best else int(est.booster_.current_iteration())


def importance(est, config: dict, columns: list[Column], X_test) -> dict:
    """Feature importance by column name.

    LightGBM: total split gain, and SHAP-style contributions (pred_contrib) as mean |contribution| over
    the test rows (and classes). Linear: |coefficient| on standardised numeric features; a categorical
    column sums |coefficient| of its one-hot indicators. Both averaged over classes for multiclass.
    """
    names = [c.name for c in columns]
    if config["model"] == "blend":
        # Each measure (LightGBM gain and contributions, linear coefficients) averaged over the parts that
        # have it, weighted by their blend weights.
        sums: dict[str, dict[str, float]] = {}
        weight: dict[str, float] = {}
        for part, cfg, w in zip(est.parts, config["parts"], est.weights):
            for key, values in importance(part, cfg, columns, X_test).items():
                acc = sums.setdefault(key, dict.fromkeys(names, 0.0))
                for n in names:
                    acc[n] += w * values[n]
                weight[key] = weight.get(key, 0.0) + w
        return {key: {n: round(v / weight[key], 6) for n, v in acc.items()} for key, acc in sums.items()}
    if config["model"] in FORESTS:
        # Mean decrease in impurity, on the training data (the trees' own measure; sums to 1).
        return {"impurity_decrease": {n: round(float(v), 6) for n, v in zip(names, est.feature_importances_)}}
    if config["model"] == "catboost":
        # CatBoost's default measure (PredictionValuesChange): how much the prediction moves, on average, when the
        # feature's value changes; computed from the trees, sums to 100.
        return {
            "prediction_values_change": {n: round(float(v), 6) for n, v in zip(names, est.get_feature_importance())}
        }
    if config["model"] == "lightgbm":
        booster = est.booster_
        gain = booster.feature_importance(importance_type="gain")
        contrib = np.asarray(booster.predict(X_test, pred_contrib=True))
        f = len(names)
        k = contrib.shape[1] // (f + 1)
        per = np.abs(contrib.reshape(len(X_test), k, f + 1)[:, :, :f]).mean(axis=(0, 1))
        return {
            "gain": {n: round(float(g), 6) for n, g in zip(names, gain)},
            "mean_abs_contribution": {n: round(float(v), 6) for n, v in zip(names, per)},
        }
    coef = np.atleast_2d(est.named_steps["model"].coef_)
    coef = np.abs(coef).mean(axis=0)
    pre = est.named_steps["pre"]
    out, pos = {}, 0
    # ColumnTransformer output order: the numeric block, the one-hot block, then the missing-value flags.
    num = [c for c in columns if c.type == "numeric"]
    cat = [c for c in columns if c.type == "categorical"]
    for c in num:
        out[c.name] = float(coef[pos])
        pos += 1
    for c in cat:
        out[c.name] = float(coef[pos : pos + len(c.codes)].sum())
        pos += len(c.codes)
    for c in num:
        if c.missing:  # a column's gap flag counts towards that column
            out[c.name] += float(coef[pos])
            pos += 1
    assert pos == coef.shape[0], (pos, coef.shape, pre)
    return {"abs_coefficient_standardised": {n: round(out[n], 6) for n in names}}
