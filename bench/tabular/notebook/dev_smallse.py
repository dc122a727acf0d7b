"""Round 7 (development seeds only): how wide the one-standard-error window should be on small tables.

The one-SE rule takes the simplest model within one standard error of the best cross-validated score, the
standard error being the best candidate's own, from its fold scores. On 100-odd rows that estimate is itself
noisy: fast mode has three fold scores, so a candidate whose three folds happen to agree gets a tiny SE and
shuts the simpler models out (stagec, benchmark seed 3: C=0.01 over C=1 on an SE of 0.017, -0.098 on test).
Best mode's 15 fold scores come from 3 repeats of the same rows, which are not independent, so std/sqrt(15)
is too small as well. Variants replayed here, each choosing from cross-validated scores only:

- "median SE": the window is the larger of the best's SE and the median SE over all candidates (the fold noise
  is mostly the data's, shared by the candidates, and the median of many estimates is steadier than one);
- "Hanley-McNeil floor": at least the analytic SE of an AUC on the training part's positives and negatives
  (Hanley & McNeil 1982), what the pooled out-of-fold AUC cannot be more precise than;
- "repeat-aware SE" (best mode): std over the 15 fold scores / sqrt(5 folds), for the window and the ensemble's guard.

  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --mode fast --datasets ... --out /tmp/dev/fast
  pipelines/.venv/bin/python bench/tabular/notebook/dev_smallse.py /tmp/dev/fast
  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --random 10 --catboost --datasets ... --out /tmp/dev/best
  pipelines/.venv/bin/python bench/tabular/notebook/dev_smallse.py /tmp/dev/best
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE))
from dev_rules import AUC, greedy, plan_of, print_table, replay_dir  # noqa: E402

from builder_pipelines.tabular import selection as S  # noqa: E402


def hanley_mcneil(auc: float, n_pos: int, n_neg: int) -> float:
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    return float(np.sqrt(max(var, 0.0)))


def one_se_with(cands: list[S.Candidate], se: float) -> S.Candidate:
    """selection.one_se_choice with the window ``se`` instead of the best candidate's own SE."""
    best = max(cands, key=lambda c: (c.score, -c.trial))
    eligible = [c for c in cands if c.score >= best.score - se]
    simplest = min(S.COMPLEXITY[c.family] for c in eligible)
    return max((c for c in eligible if S.COMPLEXITY[c.family] == simplest), key=lambda c: (c.score, -c.trial))


def windows(r, cands) -> dict[str, float]:
    """The one-SE window under each variant (the best candidate's SE scaled or floored)."""
    best = max(cands, key=lambda c: (c.score, -c.trial))
    y = r["ytr"]
    n_folds = len(r["folds"][0])
    f = best.fold_scores[np.isfinite(best.fold_scores)]
    median = float(np.median([c.se for c in cands]))
    hm = hanley_mcneil(best.score, int((y == 1).sum()), int((y == 0).sum()))
    out = {"current": best.se, "median SE": max(best.se, median), "Hanley-McNeil floor": max(best.se, hm)}
    if len(r["folds"]) > 1:
        out["repeat-aware SE"] = float(np.std(f, ddof=1) / np.sqrt(n_folds))
    return out


def rules(r, cands, tests, score_fn, fs) -> dict[str, float]:
    yte, folds = r["yte"], r["folds"]
    size, rule = plan_of(r)
    out = {"LR default": AUC(yte, tests[next(c for c in cands if c.family == "linear_default").trial])}
    for name, se in windows(r, cands).items():
        chosen = one_se_with(cands, se)
        out[f"{name}: one-SE single"] = AUC(yte, tests[chosen.trial])
        t, _, _ = greedy(cands, chosen, size, score_fn, fs, folds, tests, rule)
        out[name] = AUC(yte, t)
        out[f"_{name} window"] = se
    return out


def main() -> int:
    root = Path(sys.argv[1])
    table, _ = replay_dir(root, rules)
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()})
    print(
        "mean window per table:",
        {k: {d: round(float(np.mean(v)), 4) for d, v in per.items()} for k, per in table.items() if k.startswith("_")},
    )
    print_table({k: v for k, v in table.items() if not k.startswith("_")}, "current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
