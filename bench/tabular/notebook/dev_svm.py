"""Support vector machines (RBF kernel) as best-mode candidates, measured on development seeds before any change to
the pipeline: dev_collect.py --svm appends SVM's candidates; this script replays best mode's rule with and without them.

A quick look (--quick: logistic regression against an RBF SVM, both with scikit-learn's defaults, refitted on
train+val, 30 development splits) put the SVM 0.0012 above LR on WDBC, where best mode stays 0.001-0.002 below LR,
and far below it on ACTG175: a candidate for the ensemble, not a replacement. Replayed as one, it changed the published
model's test AUC by -0.0002 to -0.0006 over 75 development splits and was not adopted (README.md, round 9).

  pipelines/.venv/bin/python bench/tabular/notebook/dev_svm.py --quick wdbc actg175 pima gbsg2
  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --random 10 --catboost --svm --out /tmp/tables-dev-svm
  pipelines/.venv/bin/python bench/tabular/notebook/dev_svm.py /tmp/tables-dev-svm
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.svm import SVC

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE.parents[2] / "pipelines"))
from builder_pipelines.tabular import models  # noqa: E402
from builder_pipelines.tabular import selection as S  # noqa: E402

# scikit-learn's default (C=1, gamma="scale") and a stiffer margin; probabilities by Platt scaling of the SVM's
# decision values on five internal folds (CalibratedClassifierCV, ensemble=False: one SVM on all rows), which
# skl2onnx exports.
SVM = [{"model": "svm", "params": {"C": 1.0}}, {"model": "svm", "params": {"C": 3.0}}]
S.COMPLEXITY.setdefault("svm", 2)  # one fitted choice (C), as the forests

_fit = models.fit


def fit_svm(params: dict, columns, X, y, seed: int):
    """The linear model's preprocessing (standardised numeric, one-hot categorical, median fill and gap flags), then
    the SVM."""
    est = models._linear_estimator("binary", {"C": 1.0}, columns, seed)
    svm = SVC(C=params["C"], kernel="rbf", gamma="scale", random_state=seed)
    est.steps[-1] = ("model", CalibratedClassifierCV(svm, method="sigmoid", ensemble=False))
    return est.fit(X, y)


def _fit_patched(config, problem, columns, X, y, seed, threads, X_stop=None, y_stop=None):
    if config["model"] == "svm":
        return fit_svm(config["params"], columns, X, y, seed)
    return _fit(config, problem, columns, X, y, seed, threads, X_stop, y_stop)


models.fit = _fit_patched  # models.predict needs no change: the Pipeline's predict_proba gives the [N, 2] scores


def rules(r, cands, tests, score_fn, fs) -> dict[str, float]:
    from dev_rules import replay_added

    return replay_added(
        r,
        cands,
        tests,
        score_fn,
        fs,
        "svm",
        lambda c: f"SVM C={c.config['params']['C']:g} alone",
        "current + SVM C=1",
        "current + both SVM",
    )


def quick_look(datasets: list[str]) -> None:
    """Test AUC of LR, the SVM (C=1, C=0.1) and the rank average of LR and the SVM, all with scikit-learn's own
    preprocessing and defaults, fitted on train+val of development seeds 10-19 and 40-59."""
    import csv
    import tempfile

    from scipy.stats import rankdata
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    sys.path.insert(0, str(HERE))
    import run as B

    tmpdir = tempfile.TemporaryDirectory()
    for ds in datasets:
        table, cols, label = B.ALL_LOADERS[ds](Path(tmpdir.name))
        rows = list(csv.DictReader(open(table, newline="")))
        X, cat = B._encode(rows, cols)
        codes = sorted({r[label] for r in rows})
        y = np.array([codes.index(r[label]) for r in rows])
        index = {r["id"]: i for i, r in enumerate(rows)}
        num = [j for j in range(len(cols)) if j not in cat]
        res = []
        for seed in list(range(10, 20)) + list(range(40, 60)):
            sp = B.split([r["id"] for r in rows], [r[label] for r in rows], seed)
            fit, te = [index[i] for i in sp["train"] + sp["val"]], [index[i] for i in sp["test"]]

            def scores(model):
                pre = ColumnTransformer(
                    [("num", StandardScaler(), num)]
                    + ([("cat", OneHotEncoder(handle_unknown="ignore"), cat)] if cat else [])
                )
                return make_pipeline(pre, model).fit(X[fit], y[fit]).decision_function(X[te])

            lr, svm, soft = scores(LogisticRegression(max_iter=5000)), scores(SVC(C=1.0)), scores(SVC(C=0.1))
            res.append([roc_auc_score(y[te], s) for s in (lr, svm, soft, rankdata(lr) + rankdata(svm))])
        res = np.array(res)
        d = res[:, 1:] - res[:, :1]
        print(
            f"{ds}: mean test AUC LR, SVM C=1, SVM C=0.1, rank average LR+SVM {res.mean(0).round(4).tolist()}; "
            f"minus LR {d.mean(0).round(4).tolist()} (SE {(d.std(0, ddof=1) / np.sqrt(len(d))).round(4).tolist()})"
        )


def main() -> int:
    if sys.argv[1:2] == ["--quick"]:
        quick_look(sys.argv[2:])
        return 0
    sys.path.insert(0, str(HERE))
    from dev_rules import print_table, replay_dir

    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tables-dev-svm")
    table, records = replay_dir(root, rules)
    times = [c["time_s"] for r in records for c in r["cands"] if c["config"]["model"] == "svm"]
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()})
    print(f"SVM candidate time (15 CV fits + refit), median {np.median(times):.1f} s, max {np.max(times):.1f} s")
    print_table(table, "current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
