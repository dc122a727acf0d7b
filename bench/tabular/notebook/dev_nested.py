"""Round 8 (development seeds only): choose between best mode's rule and plain logistic regression on an estimate
that includes the rule's own selection optimism.

Every earlier round compared the rule's published model with logistic regression (scikit-learn's defaults, no
tuning) on cross-validated scores, but the rule's score is the score of a model it *chose* among 30-odd candidates
(and an ensemble whose weights it fitted), so it is optimistic by the choice, and most so on small tables, where
the benchmark finds logistic regression hard to beat. Here the whole rule is cross-validated on its own
out-of-fold predictions (nested, no refits): the training rows are cut into 5 outer folds (2 repeats); the rule
(one-SE choice, greedy ensemble, its -2 SE guard) runs on the out-of-fold predictions of 4 folds, and its recipe
(which candidates, which weights) is applied to the out-of-fold predictions of the fifth. Pooled over the outer
folds that gives the rule's out-of-fold score with the selection inside, to set beside logistic regression's,
which chose nothing. Variants, each choosing from training data only:

- "nested: rule or LR": logistic regression's defaults when their out-of-fold score is above the rule's nested one;
- "nested: rule, one-SE or LR": the best nested score among the rule, the one-SE single model alone, and LR;
- "nested: rule or LR, 1 SE": LR unless the rule's nested score beats it by more than one standard error of the
  paired difference over the outer folds.

  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --random 10 --catboost --out /tmp/dev/best
  pipelines/.venv/bin/python bench/tabular/notebook/dev_nested.py /tmp/dev/best
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE))
from dev_rules import AUC, plan_of, print_table, replay_dir, scorers  # noqa: E402

from builder_pipelines.tabular import search  # noqa: E402
from builder_pipelines.tabular import selection as S  # noqa: E402

OUTER_FOLDS, OUTER_REPEATS = 5, 2


def recipes(cands: list[S.Candidate], y: np.ndarray, folds, size: int, rule: str) -> dict[str, dict[int, float]]:
    """What the rule publishes, as {trial: weight}: the whole rule, and its one-SE single model alone (the same
    steps as dev_rules.greedy, which returns test scores where this needs the members and weights)."""
    score_fn, fs = scorers(y, folds)
    chosen, _, _ = S.one_se_choice(cands)
    single = {chosen.trial: 1.0}
    members = S.ensemble_pool(cands, chosen, size)
    counts, _ = S.greedy_weights(members, score_fn)
    if len(counts) < 2:
        return {"rule": {members[next(iter(counts))].trial: 1.0}, "one-SE": single}
    honest = S.crossfit_oof(members, score_fn, search._halves(folds))
    blend = S.blend_candidate(members, counts, 999, honest, score_fn, fs)
    keep, _ = S.accept_blend(blend, chosen, rule)
    n = sum(counts.values())
    return {"rule": {members[i].trial: c / n for i, c in counts.items()} if keep else single, "one-SE": single}


def restrict(r, cands: list[S.Candidate], rows: np.ndarray) -> tuple[list[S.Candidate], np.ndarray, list]:
    """The candidates, labels and CV folds as if the training part held only ``rows`` (sorted)."""
    y = r["ytr"][rows]
    pos = np.full(len(r["ytr"]), -1)
    pos[rows] = np.arange(len(rows))
    folds = [[(pos[tr][pos[tr] >= 0], pos[te][pos[te] >= 0]) for tr, te in rep] for rep in r["folds"]]
    score_fn, fs = scorers(y, folds)
    out = []
    for c in cands:
        oof = [o[rows] for o in c.oof]
        out.append(S.Candidate(c.trial, c.config, score_fn(oof), fs(oof), oof))
    return out, y, folds


def nested(r, cands: list[S.Candidate]) -> dict[str, tuple[float, np.ndarray]]:
    """Each procedure's nested out-of-fold AUC (mean over CV repeats of the pooled AUC), and its AUC per outer fold."""
    y = r["ytr"]
    size, rule = plan_of(r)
    by_trial = {c.trial: c for c in cands}
    lr = next(c for c in cands if c.family == "linear_default")
    pred: dict[str, list[np.ndarray]] = {}
    per_fold: dict[str, list[float]] = {}
    for o in range(OUTER_REPEATS):
        for inner, held in StratifiedKFold(OUTER_FOLDS, shuffle=True, random_state=100 + o).split(np.zeros(len(y)), y):
            sub, ysub, fsub = restrict(r, cands, np.sort(inner))
            got = recipes(sub, ysub, fsub, size, rule)
            got["LR"] = {lr.trial: 1.0}
            for name, recipe in got.items():
                arrs = pred.setdefault(name, [np.zeros_like(a) for _ in range(OUTER_REPEATS) for a in lr.oof])
                mixes = [sum(w * by_trial[t].oof[k] for t, w in recipe.items()) for k in range(len(lr.oof))]
                for k, mix in enumerate(mixes):
                    arrs[o * len(mixes) + k][held] = mix[held]
                per_fold.setdefault(name, []).append(float(np.mean([AUC(y[held], mix[held]) for mix in mixes])))
    return {name: (float(np.mean([AUC(y, a) for a in arrs])), np.array(per_fold[name])) for name, arrs in pred.items()}


def rules(r, cands, tests, score_fn, fs) -> dict[str, float]:
    yte = r["yte"]
    size, rule = plan_of(r)
    full = recipes(cands, r["ytr"], r["folds"], size, rule)
    lr = next(c for c in cands if c.family == "linear_default")
    test_of = lambda recipe: AUC(yte, sum(w * tests[t] for t, w in recipe.items()))  # noqa: E731
    est = nested(r, cands)
    out = {
        "current": test_of(full["rule"]),
        "one-SE single": test_of(full["one-SE"]),
        "LR default": AUC(yte, tests[lr.trial]),
    }
    out["nested: rule or LR"] = out["current"] if est["rule"][0] >= est["LR"][0] else out["LR default"]
    best3 = max(("rule", "one-SE", "LR"), key=lambda k: est[k][0])
    out["nested: rule, one-SE or LR"] = {
        "rule": out["current"],
        "one-SE": out["one-SE single"],
        "LR": out["LR default"],
    }[best3]
    d = est["rule"][1] - est["LR"][1]
    out["nested: rule or LR, 1 SE"] = (
        out["current"] if d.mean() > np.std(d, ddof=1) / np.sqrt(len(d)) else out["LR default"]
    )
    out["_nested rule - LR"] = est["rule"][0] - est["LR"][0]
    out["_best CV score - nested rule"] = max(c.score for c in cands) - est["rule"][0]
    return out


def main() -> int:
    table, _ = replay_dir(Path(sys.argv[1]), rules)
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()})
    for k in [k for k in table if k.startswith("_")]:
        print(f"mean {k[1:]} per table:", {d: round(float(np.mean(v)), 4) for d, v in table[k].items()})
    print_table({k: v for k, v in table.items() if not k.startswith("_")}, "current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
