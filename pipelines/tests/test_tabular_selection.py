"""Best-mode model selection: patient-grouped folds, the one-standard-error rule, the ensemble's acceptance,
forest families and their export parity. Generated data only; each test takes a few seconds."""

import numpy as np
import pytest

from builder_pipelines.tabular import calibration, export, models, search
from builder_pipelines.tabular import selection as S
from builder_pipelines.tabular.table import Column


def _cand(trial, model, score, folds, params=None):
    folds = np.asarray(folds, dtype=float)
    return S.Candidate(
        trial, {"model": model, "params": params if params is not None else {"x": 1}}, score, folds, [np.zeros((4, 2))]
    )


def test_folds_keep_every_patient_on_one_side_and_both_classes_in_each():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(120), rng.integers(1, 4, 120))  # 1-3 rows per patient
    y = (rng.random(120) < 0.3).astype(int)[groups]  # the label is the patient's
    folds = search.make_folds("binary", y, groups, n_folds=5, repeats=3, seed=1)
    assert len(folds) == 3 and all(len(rep) == 5 for rep in folds)
    for rep in folds:
        seen = np.concatenate([te for _, te in rep])
        assert np.array_equal(np.sort(seen), np.arange(len(y)))  # every row held out exactly once per repeat
        for tr, te in rep:
            assert not set(groups[tr]) & set(groups[te])
            assert set(y[te]) == {0, 1}
    assert not all(np.array_equal(a[0][1], b[0][1]) for a, b in zip(folds, folds[1:]))  # repeats differ


def test_one_se_rule_prefers_the_simpler_model_within_the_noise():
    noisy = [0.80, 0.95, 0.85, 0.97, 0.88]  # standard error about 0.03
    tuned = _cand(20, "lightgbm", 0.890, noisy)
    linear = _cand(0, "linear", 0.875, [0.85, 0.90, 0.86, 0.90, 0.87])
    default = _cand(12, "lightgbm", 0.880, noisy, params={})
    chosen, best, reason = S.one_se_choice([linear, default, tuned])
    assert best is tuned and chosen is linear
    assert "within one standard error" in reason and "trial 0" in reason
    assert default.family == "lightgbm_default" and tuned.family == "lightgbm"


def test_one_se_rule_keeps_the_best_when_it_is_clearly_better():
    steady = [0.90, 0.91, 0.89, 0.90, 0.90]  # standard error about 0.003
    tuned = _cand(20, "lightgbm", 0.900, steady)
    linear = _cand(0, "linear", 0.880, [0.88] * 5)
    forest = _cand(13, "random_forest", 0.899, steady)
    chosen, best, _ = S.one_se_choice([linear, forest, tuned])
    assert best is tuned and chosen is forest  # the forest is within the band and simpler than tuned LightGBM
    chosen, _, reason = S.one_se_choice([linear, tuned])
    assert chosen is tuned and "no simpler model" in reason


def test_ensemble_kept_only_when_its_fold_gain_exceeds_one_standard_error():
    base = _cand(0, "linear", 0.850, [0.80, 0.85, 0.90, 0.85, 0.85])
    steady_gain = _cand(30, "blend", 0.860, [0.81, 0.86, 0.91, 0.86, 0.86])
    steady_gain.config["members"] = [0, 12]
    keep, why = S.accept_blend(steady_gain, base)
    assert keep and "exceeds one standard error" in why
    erratic = _cand(30, "blend", 0.856, [0.90, 0.80, 0.95, 0.80, 0.88])  # better on average, not fold by fold
    erratic.config["members"] = [0, 12]
    keep, why = S.accept_blend(erratic, base)
    assert not keep and "not kept" in why


def test_best_mode_keeps_the_ensemble_unless_it_is_clearly_worse():
    base = _cand(0, "linear", 0.850, [0.80, 0.85, 0.90, 0.85, 0.85])
    erratic = _cand(30, "blend", 0.849, [0.90, 0.80, 0.95, 0.80, 0.80])  # no better on average: still within the noise
    erratic.config["members"] = [0, 12]
    keep, why = S.accept_blend(erratic, base, "unless_worse")
    assert keep and "not clearly worse" in why
    worse = _cand(30, "blend", 0.830, [0.78, 0.83, 0.88, 0.83, 0.84])  # behind on every fold
    worse.config["members"] = [0, 12]
    keep, why = S.accept_blend(worse, base, "unless_worse")
    assert not keep and "below minus two standard errors" in why
    assert search.PLANS["best"].ensemble_rule == "unless_worse" and search.PLANS["fast"].ensemble_rule == "gain"


def test_greedy_weights_mix_complementary_models():
    """Two models each right on a different half: their average beats both, so both get weight."""
    y = np.array([0, 1] * 20)
    rng = np.random.default_rng(0)
    noise = rng.random(40) * 0.1
    a = np.where(np.arange(40) < 20, y * 0.8 + noise, 0.5 + noise)  # informative on the first half only
    b = np.where(np.arange(40) >= 20, y * 0.8 + noise, 0.5 - noise)
    pool = [
        S.Candidate(i, {"model": "linear", "params": {}}, 0.0, np.zeros(1), [np.c_[1 - p, p]])
        for i, p in enumerate((a, b))
    ]
    counts, score = S.greedy_weights(pool, lambda oofs, rows: search.selection_score("binary", "auc", y, oofs[0]))
    assert set(counts) == {0, 1}
    assert score > max(search.selection_score("binary", "auc", y, c.oof[0]) for c in pool)


def test_cross_fitted_ensemble_score_shows_no_gain_on_noise():
    """Greedy weights fitted and scored on the same rows make pure noise look predictive; cross-fitted they do not."""
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.5).astype(int)
    pool = []
    for i in range(8):
        p = rng.random(200)
        pool.append(S.Candidate(i, {"model": "lightgbm", "params": {"i": i}}, 0.0, np.zeros(1), [np.c_[1 - p, p]]))

    def score(oofs, rows):
        yy = y if rows is None else y[rows]
        return float(np.mean([search.selection_score("binary", "auc", yy, o) for o in oofs]))

    _, in_sample = S.greedy_weights(pool, score)
    halves = (np.arange(0, 200, 2), np.arange(1, 200, 2))
    honest = score(S.crossfit_oof(pool, score, halves), None)
    assert in_sample > 0.55 and honest < in_sample - 0.04 and abs(honest - 0.5) < 0.06


def test_default_linear_model_is_the_simplest_family():
    default = _cand(0, "linear", 0.86, [0.84, 0.88, 0.86], params={"C": 1.0})
    tuned = _cand(1, "linear", 0.87, [0.85, 0.89, 0.87], params={"C": 0.1})
    assert default.family == "linear_default" and tuned.family == "linear"
    chosen, best, _ = S.one_se_choice([default, tuned])
    assert best is tuned and chosen is default


def test_best_mode_candidates_include_the_strong_defaults():
    cands = search.candidates("binary", "best", seed=0, n_rows=4000)
    n_linear = sum(c["model"] == "linear" for c in cands)
    n_essential = search._n_essential("binary", search.PLANS["best"])
    essential = cands[:n_essential]
    assert len(essential) == n_linear + 4
    assert {"model": "linear", "params": {"C": 1.0}} in essential  # scikit-learn's default logistic regression
    assert {"model": "lightgbm", "params": {}} in essential  # LightGBM's defaults, early-stopped
    assert {
        "model": "lightgbm",
        "params": {},
        "n_estimators": 100,
    } in essential  # and exactly as the baseline fits them
    assert {c["model"] for c in essential} == {"linear", "lightgbm", "random_forest", "extra_trees"}
    assert cands[n_essential : n_essential + 2] == search.CATBOOST  # first when the budget allows
    assert all(
        c["params"]["min_samples_leaf"] >= 5 for c in cands if c["model"] in models.FORESTS
    )  # 4,000 rows: floor 5
    fast = search.candidates("binary", "fast", seed=0, n_rows=400)
    assert not any(c["model"] in models.FORESTS or c["model"] == "catboost" for c in fast)  # fast stays fast


def test_baseline_lightgbm_is_cross_validated_as_the_baseline_fits_it():
    """The baseline's LightGBM (100 trees, every training row, no early stopping) scores each fold exactly like
    LGBMClassifier() fitted on that fold's training rows; the early-stopped defaults keep fewer trees here."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(scale=2.0, size=300) > 0).astype(int)  # noisy: early stopping stops early
    groups = np.arange(300)
    cols = [Column(f"x{j}", "numeric") for j in range(4)]
    folds = search.make_folds("binary", y, groups, 3, 1, seed=0)[0]
    oof, n_iter = search._cv_predict(dict(search.BASELINE_LGB), "binary", cols, X, y, groups, folds, 2, 0, 1)
    assert n_iter is None
    for tr, te in folds:
        ref = models.lgb.LGBMClassifier(n_estimators=100, random_state=0, verbose=-1).fit(X[tr], y[tr])
        np.testing.assert_allclose(oof[te], ref.predict_proba(X[te]), atol=1e-9)
    _, stopped = search._cv_predict({"model": "lightgbm", "params": {}}, "binary", cols, X, y, groups, folds, 2, 0, 1)
    assert stopped < 100
    assert search.BASELINE_LGB not in search.candidates("binary", "fast", seed=0, n_rows=300)  # fast mode: unchanged


@pytest.mark.parametrize("problem", ["binary", "regression"])
def test_forest_blend_export_parity(problem):
    """Random forest, extra trees, LightGBM and the linear model averaged in one graph match Python."""
    rng = np.random.default_rng(5)
    X = np.c_[np.round(rng.normal(size=(400, 2)), 2), rng.integers(0, 3, 400)].astype(np.float32).astype(np.float64)
    z = X[:, 0] * X[:, 1] + (X[:, 2] == 1) + 0.3 * rng.normal(size=400)
    y = (z > 0.3).astype(int) if problem == "binary" else z
    cols = [Column("a", "numeric"), Column("b", "numeric"), Column("c", "categorical", codes={"p": 0, "q": 1, "r": 2})]
    lin = {"model": "linear", "params": {"C": 1.0} if problem == "binary" else {"alpha": 1.0}}
    parts = [
        lin,
        {"model": "random_forest", "params": {"min_samples_leaf": 1, "max_features": "sqrt"}},
        {"model": "extra_trees", "params": {"min_samples_leaf": 2, "max_features": "sqrt"}},
        {"model": "lightgbm", "params": {}, "n_estimators": 40},
    ]
    cfg = {"model": "blend", "params": {"weights": [0.25, 0.25, 0.25, 0.25]}, "parts": parts}
    est = models.fit(cfg, problem, cols, X[:300], y[:300], 0, 1)
    models.float32_exact(est.parts[3])
    for forest in est.parts[1:3]:  # fit() already moved the forests' thresholds to float32
        t = np.concatenate([tr.tree_.threshold[tr.tree_.children_left >= 0] for tr in forest.estimators_])
        assert np.array_equal(t, t.astype(np.float32).astype(np.float64))
    k = 2 if problem == "binary" else 1
    cal = {"method": "platt", "a": 1.3, "b": -0.2} if problem == "binary" else None
    g = export.build_onnx(est, cfg, problem, 3, k, cal)
    ref = calibration.apply(cal, models.predict(est, problem, X[300:]))
    got, diff = export.check_parity(g, X[300:], ref, problem)
    assert got.shape == (100, k) and diff <= export.PARITY_TOL * (1 if problem == "binary" else 10)
    imp = models.importance(est, cfg, cols, X[300:])
    assert "impurity_decrease" in imp and set(imp["impurity_decrease"]) == {"a", "b", "c"}


def test_confident_logistic_model_keeps_parity_once_calibrated():
    """Probabilities of 1e-6 to 1e-5: onnxruntime's Sigmoid kernel is about 6e-8 off in absolute terms there
    (percents relative), and Platt scaling with a < 1 magnified that past the tolerance (found by the
    reproducibility test on a logistic model with C=100)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2)).astype(np.float32).astype(np.float64)
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    cols = [Column("a", "numeric"), Column("b", "numeric")]
    cfg = {"model": "linear", "params": {"C": 100.0}}
    est = models.fit(cfg, "binary", cols, X, y, 0, 1)
    scaler, lr = est.named_steps["pre"].named_transformers_["num"], est.named_steps["model"]
    # Rows whose logit z runs over [-13.8, -10] and [10, 13.8] (both tails), through feature a alone.
    z = np.r_[np.linspace(-13.8, -10, 40), np.linspace(10, 13.8, 40)]
    a = (z - lr.intercept_[0]) / lr.coef_[0, 0] * scaler.scale_[0] + scaler.mean_[0]
    Xt = np.c_[a, np.full(len(a), scaler.mean_[1])].astype(np.float32).astype(np.float64)
    p = models.predict(est, "binary", Xt)
    assert p[:40, 1].max() < 5e-5 and p[40:, 0].max() < 5e-5
    cal = {"method": "platt", "a": 0.5, "b": 0.5}  # a < 1 lifts tiny probabilities: their error grows ~400-fold
    g = export.build_onnx(est, cfg, "binary", 2, 2, cal)
    export.check_parity(g, Xt, calibration.apply(cal, p), "binary")


@pytest.mark.parametrize("problem", ["binary", "multiclass", "regression"])
def test_catboost_and_its_blend_export_parity(problem, tmp_path, monkeypatch):
    """CatBoost's own ONNX export (ZipMap dropped, input renamed), alone and averaged with the linear model in one
    graph, matches Python; with thresholds at float32 data values (CatBoost's borders are float32, compared with >)."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(6)
    X = np.c_[np.round(rng.normal(size=(400, 2)), 2), rng.integers(0, 3, 400)].astype(np.float32).astype(np.float64)
    z = X[:, 0] * X[:, 1] + (X[:, 2] == 1) + 0.3 * rng.normal(size=400)
    y = {"binary": (z > 0.3).astype(int), "multiclass": np.digitize(z, [0.0, 1.0]), "regression": z}[problem]
    k = {"binary": 2, "multiclass": 3, "regression": 1}[problem]
    cols = [Column("a", "numeric"), Column("b", "numeric"), Column("c", "categorical", codes={"p": 0, "q": 1, "r": 2})]
    cb = {"model": "catboost", "params": {"iterations": 150}}
    lin = {"model": "linear", "params": {"alpha": 1.0} if problem == "regression" else {"C": 1.0}}
    blend = {"model": "blend", "params": {"weights": [0.4, 0.6]}, "parts": [lin, cb]}
    cal = {
        "binary": {"method": "platt", "a": 1.3, "b": -0.2},
        "multiclass": {"method": "temperature", "temperature": 0.8},
        "regression": None,
    }[problem]
    tol = export.PARITY_TOL * (10 if problem == "regression" else 1)
    for cfg in (cb, blend):
        est = models.fit(cfg, problem, cols, X[:300], y[:300], 0, 1)
        g = export.build_onnx(est, cfg, problem, 3, k, cal)
        ref = calibration.apply(cal, models.predict(est, problem, X[300:]))
        got, diff = export.check_parity(g, X[300:], ref, problem)
        assert got.shape == (100, k) and diff <= tol
    imp = models.importance(est, blend, cols, X[300:])
    assert set(imp["prediction_values_change"]) == {"a", "b", "c"} and "abs_coefficient_standardised" in imp
    assert list(tmp_path.iterdir()) == []  # no catboost_info/ left in the working directory


def test_catboost_is_a_default_boosting_family():
    """As simple as LightGBM's defaults for the one-SE rule: its settings were not searched on the data."""
    cand = S.Candidate(0, {"model": "catboost", "params": {}}, 0.8, np.array([0.8, 0.8]), [])
    assert S.COMPLEXITY[cand.family] == S.COMPLEXITY["lightgbm_default"]


@pytest.mark.train
def test_a_candidate_that_cannot_finish_in_the_budget_is_dropped_and_the_search_goes_on(monkeypatch):
    """Past the essential candidates, one whose first cross-validation repeat shows the rest would end past the
    budget is dropped (the report says why), and cheaper candidates still run. A fake clock: every repeat costs
    0.01 s, CatBoost's defaults 10 s, against a 20 s budget; the machine's speed does not matter."""
    import dataclasses
    import types

    clock = [0.0]
    real = search._cv_predict

    def timed(cfg, *args):
        clock[0] += 10.0 if cfg["model"] == "catboost" and not cfg["params"] else 0.01
        if cfg["model"] == "catboost":  # scored as a linear model here: only its time matters
            return real({"model": "linear", "params": {"C": 1.0}}, *args)
        return real(cfg, *args)

    monkeypatch.setattr(search, "_cv_predict", timed)
    monkeypatch.setattr(search, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setitem(
        search.PLANS, "best", dataclasses.replace(search.PLANS["best"], linear_grid=3, max_lgb_trials=3)
    )
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    cols = [Column(f"x{j}", "numeric") for j in range(3)]
    res = search.run_search("binary", "auc", cols, X, y, np.arange(120), 2, 0, "best", 20.0, 1, lambda *a: None)
    assert [(d["model"], d["params"]) for d in res.selection["dropped"]] == [("catboost", {})]
    assert "first of 3 cross-validation repeats took 10.0 s" in res.selection["dropped"][0]["reason"]
    assert [t["params"] for t in res.trials if t["model"] == "catboost"] == [{"depth": 4}]
    assert sum(t["model"] == "lightgbm" and bool(t["params"]) for t in res.trials) == 3  # the random settings ran after
    assert not res.stopped_by_time
