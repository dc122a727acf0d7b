"""Replays best mode's selection rule and variants on dev_collect.py's pickles (development seeds, not the
benchmark's): every rule chooses from cross-validated scores only; the test AUC of its choice is read off.

  pipelines/.venv/bin/python bench/tabular/notebook/dev_rules.py /tmp/tables-dev
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE.parents[2] / "pipelines"))

from builder_pipelines.tabular import search  # noqa: E402
from builder_pipelines.tabular import selection as S  # noqa: E402

AUC = lambda y, p: search._auc(y == 1, p[:, 1])  # noqa: E731


def scorers(y: np.ndarray, folds):
    """The search's two scores on these labels and CV folds: pooled AUC (mean over repeats) and AUC per fold."""

    def score_fn(oofs, rows=None):
        yy = y if rows is None else y[rows]
        return float(np.mean([search.selection_score("binary", "auc", yy, o) for o in oofs]))

    def fs(oofs):
        return search.fold_scores("binary", "auc", y, oofs, folds)

    return score_fn, fs


def plan_of(r) -> tuple[int, str]:
    """(ensemble pool size, blend acceptance rule) of the mode the pickle was collected for."""
    return (
        (search.PLANS["fast"].ensemble_pool, "gain")
        if r.get("mode") == "fast"
        else (search.PLANS["best"].ensemble_pool, "unless_worse")
    )


def load(path: Path):
    r = pickle.loads(path.read_bytes())
    score_fn, fs = scorers(r["ytr"], r["folds"])
    cands, tests = [], {}
    for c in r["cands"]:
        cand = S.Candidate(c["trial"], c["config"], score_fn(c["oof"]), fs(c["oof"]), c["oof"])
        cands.append(cand)
        tests[c["trial"]] = c["test"]
    return r, cands, tests, score_fn, fs


def greedy_init(pool, score_fn, init: dict[int, int], rows=None, rounds=S.ENSEMBLE_ROUNDS):
    """Greedy selection with replacement that starts from ``init`` counts (Caruana's initialisation)."""
    oofs = [[o if rows is None else o[rows] for o in c.oof] for c in pool]
    n_rep = len(oofs[0])
    counts = dict(init)
    step0 = sum(counts.values())
    total = [sum(counts[i] * oofs[i][r] for i in counts) for r in range(n_rep)]
    best_score, best_counts = score_fn([t / step0 for t in total], rows), dict(counts)
    for step in range(step0 + 1, step0 + rounds + 1):
        scored = [(score_fn([(total[r] + o[r]) / step for r in range(n_rep)], rows), i) for i, o in enumerate(oofs)]
        score, pick = max(scored, key=lambda t: (t[0], -t[1]))
        total = [total[r] + oofs[pick][r] for r in range(n_rep)]
        counts[pick] = counts.get(pick, 0) + 1
        if score > best_score:
            best_score, best_counts = score, dict(counts)
    return best_counts


def crossfit_init(pool, score_fn, halves, init):
    out = [np.zeros_like(o) for o in pool[0].oof]
    for fit_rows, score_rows in (halves, halves[::-1]):
        counts = greedy_init(pool, score_fn, init, fit_rows)
        n = sum(counts.values())
        for r in range(len(out)):
            out[r][score_rows] = sum(counts[i] / n * pool[i].oof[r] for i in counts)[score_rows]
    return out


def logloss_weights(pool, y, rows=None):
    """Convex weights minimising the log-loss of the averaged probabilities on the out-of-fold rows."""
    from scipy.optimize import minimize

    P = np.stack([np.concatenate([(o if rows is None else o[rows])[:, 1] for o in c.oof]) for c in pool], axis=1)
    yy = np.tile(y if rows is None else y[rows], len(pool[0].oof))
    k = P.shape[1]

    def f(w):
        p = np.clip(P @ w, 1e-6, 1 - 1e-6)
        return -np.mean(yy * np.log(p) + (1 - yy) * np.log(1 - p))

    res = minimize(
        f,
        np.full(k, 1 / k),
        method="SLSQP",
        bounds=[(0, 1)] * k,
        constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1}],
    )
    w = np.clip(res.x, 0, None)
    return w / w.sum()


def blend_of(members, counts, tests):
    n = sum(counts.values())
    return sum(counts[i] / n * tests[members[i].trial] for i in counts)


def greedy(pool, chosen, size, score_fn, fs, folds, tests, rule="unless_worse"):
    """Best mode's ensemble step: (test scores of the published model, blend candidate or None, kept)."""
    members = S.ensemble_pool(pool, chosen, size)
    counts, _ = S.greedy_weights(members, score_fn)
    if len(counts) < 2:
        return tests[members[next(iter(counts))].trial], None, False
    honest = S.crossfit_oof(members, score_fn, search._halves(folds))
    blend = S.blend_candidate(members, counts, 999, honest, score_fn, fs)
    keep, _ = S.accept_blend(blend, chosen, rule)
    return (blend_of(members, counts, tests) if keep else tests[chosen.trial]), (blend, members, counts, honest), keep


def replay_pools(named_pools, r, tests, score_fn, fs) -> dict[str, float]:
    """Best mode's rule (one-SE single model, then the greedy ensemble unless clearly worse) on each named candidate
    pool: the test AUC of the published model, and of the one-SE single model alone."""
    out = {}
    for name, pool in named_pools:
        chosen, _, _ = S.one_se_choice(pool)
        t, _, _ = greedy(pool, chosen, 8, score_fn, fs, r["folds"], tests)
        out[name] = AUC(r["yte"], t)
        out[name + ": one-SE single"] = AUC(r["yte"], tests[chosen.trial])
    return out


def replay_added(
    r, cands, tests, score_fn, fs, model: str, alone_name, with_first: str, with_all: str
) -> dict[str, float]:
    """For candidates of a dev-only ``model`` (appended by dev_collect.py): the test AUC of each alone (named by
    ``alone_name(candidate)``), and best mode's rule without them ("current"), with the first, and with all."""
    added = [c for c in cands if c.config["model"] == model]
    current = [c for c in cands if c.config["model"] != model]
    out = {alone_name(c): AUC(r["yte"], tests[c.trial]) for c in added}
    pools = [("current", current), (with_first, current + added[:1]), (with_all, current + added)]
    return out | replay_pools(pools, r, tests, score_fn, fs)


def replay_dir(root: Path, rules_fn) -> tuple[dict[str, dict[str, list]], list]:
    """{rule: {dataset: [test AUC per split]}} over every pickle in ``root``, and the pickles' records."""
    table: dict[str, dict[str, list]] = {}
    records = []
    for path in sorted(root.glob("*.pkl")):
        r, cands, tests, score_fn, fs = load(path)
        for k, v in with_baselines(r, rules_fn(r, cands, tests, score_fn, fs)).items():
            table.setdefault(k, {}).setdefault(r["dataset"], []).append(v)
        records.append(r)
    return table, records


def rules(r, cands, tests, score_fn, fs):
    folds = r["folds"]
    yte = r["yte"]
    cands = [c for c in cands if c.config["model"] != "catboost"]  # dev_catboost.py replays those
    extra = cands[-1]  # LightGBM defaults with 100 trees (the baseline's fit)
    base = cands[:-1]
    n_ess = 13 + 1 + 4
    out = {}
    lr_def = next(c for c in base if c.family == "linear_default")
    linear = [c for c in base if c.config["model"] == "linear"]
    for name, pool in (
        ("current (10 random)", base[: n_ess + 10]),
        ("current (60 random)", base),
        ("current + LGBM-100 (60)", base + [extra]),
    ):
        chosen, best, _ = S.one_se_choice(pool)
        t, info, keep = greedy(pool, chosen, 8, score_fn, fs, folds, tests)
        out[name] = AUC(yte, t)
        if name == "current (60 random)":
            out["one-SE single"] = AUC(yte, tests[chosen.trial])
            out["best single by CV"] = AUC(yte, tests[best.trial])
            out["LR default"] = AUC(yte, tests[lr_def.trial])
            lr_best = max(linear, key=lambda c: c.score)
            out["LR best C by CV"] = AUC(yte, tests[lr_best.trial])
            blend_t = blend_of(info[1], info[2], tests) if info else t
            out["greedy always"] = AUC(yte, blend_t)
            for lam in (0.25, 0.5):
                out[f"always: (1-{lam}) greedy + {lam} LR default"] = AUC(
                    yte, (1 - lam) * blend_t + lam * tests[lr_def.trial]
                )
            if info:
                blend, members, counts, honest = info
                # lambda chosen by the cross-fitted (honest) out-of-fold score of the mix
                lams = (0.0, 0.25, 0.5, 0.75, 1.0)
                sc = [score_fn([(1 - lam) * h + lam * o for h, o in zip(honest, lr_def.oof)]) for lam in lams]
                lam = lams[int(np.argmax(sc))]
                out["CV-chosen shrink to LR default"] = AUC(yte, (1 - lam) * blend_t + lam * tests[lr_def.trial])
                out["_lam"] = lam
                # choose by honest score among blend, one-SE single, LR default
                opts = [
                    (blend.score, blend_t),
                    (chosen.score, tests[chosen.trial]),
                    (lr_def.score, tests[lr_def.trial]),
                ]
                out["max honest score of {blend, one-SE, LR}"] = AUC(yte, max(opts, key=lambda o: o[0])[1])
                # published unless LR default beats it fold by fold by 1 / 2 SE... (guard against LR, not one-SE)
                for k in (1, 2):
                    g, se = S.paired_gain(blend, lr_def)
                    out[f"blend unless < -{k} SE vs LR default"] = AUC(
                        yte, blend_t if g >= -k * se else tests[lr_def.trial]
                    )
                # blend unless its honest score is below LR default's score
                out["blend unless honest < LR default"] = AUC(
                    yte, blend_t if blend.score >= lr_def.score else tests[lr_def.trial]
                )
            else:
                for k in (
                    "CV-chosen shrink to LR default",
                    "max honest score of {blend, one-SE, LR}",
                    "blend unless < -1 SE vs LR default",
                    "blend unless < -2 SE vs LR default",
                    "blend unless honest < LR default",
                ):
                    out[k] = out["current (60 random)"]
            members = S.ensemble_pool(pool, chosen, 8)
            y = r["ytr"]
            w = logloss_weights(members, y)
            halves = search._halves(folds)
            honest = [np.zeros_like(o) for o in members[0].oof]
            for fit_rows, score_rows in (halves, halves[::-1]):
                wh = logloss_weights(members, y, fit_rows)
                for rr in range(len(honest)):
                    honest[rr][score_rows] = sum(wh[i] * members[i].oof[rr] for i in range(len(members)))[score_rows]
            t_ll = sum(w[i] * tests[members[i].trial] for i in range(len(members)))
            out["log-loss convex blend always"] = AUC(yte, t_ll)
            cand = S.Candidate(
                999, {"model": "blend", "params": {}, "members": []}, score_fn(honest), fs(honest), honest
            )
            keep, _ = S.accept_blend(cand, chosen, "unless_worse")
            out["log-loss convex blend, -2SE guard"] = AUC(yte, t_ll if keep else tests[chosen.trial])
            out["mean(greedy, log-loss blend)"] = AUC(yte, 0.5 * t_ll + 0.5 * blend_t)
            # pool without candidates clearly worse than the best (score below best - k SE of the best)
            for kk in (1, 2, 3):
                floor = best.score - kk * best.se
                near = [c for c in S.ensemble_pool(pool, chosen, 8) if c.score >= floor or c is chosen]
                if len(near) >= 2:
                    counts, _ = S.greedy_weights(near, score_fn)
                    if len(counts) >= 2:
                        honest = S.crossfit_oof(near, score_fn, search._halves(folds))
                        cand = S.blend_candidate(near, counts, 999, honest, score_fn, fs)
                        keep, _ = S.accept_blend(cand, chosen, "unless_worse")
                        t3 = blend_of(near, counts, tests) if keep else tests[chosen.trial]
                    else:
                        t3 = tests[near[next(iter(counts))].trial]
                else:
                    t3 = tests[chosen.trial]
                out[f"pool within {kk} SE of best, -2SE guard"] = AUC(yte, t3)
            # combination: the baseline's exact LightGBM in the library and the greedy started from the one-SE choice
            pool2 = pool + [extra]
            chosen2, _, _ = S.one_se_choice(pool2)
            members2 = S.ensemble_pool(pool2, chosen2, 8)
            if extra not in members2:
                members2.append(extra)
            for n0 in (3, 5):
                init = {members2.index(chosen2): n0}
                counts = greedy_init(members2, score_fn, init)
                honest = crossfit_init(members2, score_fn, search._halves(folds), init)
                cand = S.blend_candidate(members2, counts, 999, honest, score_fn, fs)
                keep, _ = S.accept_blend(cand, chosen2, "unless_worse")
                out[f"LGBM-100 + greedy init one-SE x{n0}"] = AUC(
                    yte, blend_of(members2, counts, tests) if keep else tests[chosen2.trial]
                )
            out["always: 0.5 greedy + 0.5 one-SE single"] = AUC(yte, 0.5 * blend_t + 0.5 * tests[chosen.trial])
            # greedy weights seeded with the one-SE choice / LR default (Caruana's initialisation), then the -2 SE guard
            members = S.ensemble_pool(pool, chosen, 8)
            for label, seed_c in (("one-SE", chosen), ("LR default", lr_def)):
                for n0 in (5, 10):
                    init = {members.index(seed_c): n0}
                    counts = greedy_init(members, score_fn, init)
                    honest = crossfit_init(members, score_fn, search._halves(folds), init)
                    cand = S.blend_candidate(members, counts, 999, honest, score_fn, fs)
                    keep, _ = S.accept_blend(cand, chosen, "unless_worse")
                    t2 = blend_of(members, counts, tests) if keep else tests[chosen.trial]
                    out[f"greedy init {label} x{n0}, -2SE guard"] = AUC(yte, t2)
    return out


def print_table(table: dict[str, dict[str, list]], reference: str) -> None:
    """Mean test AUC per rule and table, the smallest per-table gap to the better baseline, and the paired
    difference from the ``reference`` rule over all splits."""
    datasets = sorted({d for v in table.values() for d in v})
    print(f"{'rule':48s} " + " ".join(f"{d:>9s}" for d in datasets) + f" {'mean':>8s} {'min gap':>8s}  vs {reference}")
    better = {d: np.array(table["better baseline"][d]) for d in datasets}
    ref = np.concatenate([table[reference][d] for d in datasets])
    for k, per in table.items():
        means = [np.mean(per[d]) for d in datasets]
        gaps = [np.mean(np.array(per[d]) - better[d]) for d in datasets]
        diff = np.concatenate([per[d] for d in datasets]) - ref
        print(
            f"{k:48s} "
            + " ".join(f"{m:9.4f}" for m in means)
            + f" {np.mean(means):8.4f} {min(gaps):+8.4f}"
            + f"  {np.mean(diff):+.4f} (SE {np.std(diff, ddof=1) / np.sqrt(len(diff)):.4f}, "
            f"{int((diff > 0).sum())}+/{int((diff < 0).sum())}-)"
        )


def with_baselines(r: dict, res: dict[str, float]) -> dict[str, float]:
    b = r["baselines"]
    return {
        "baseline LR": b["logistic_regression"],
        "baseline LGBM": b["lightgbm_default"],
        "better baseline": max(b.values()),
        **res,
    }


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tables-dev")
    table: dict[str, dict[str, list]] = {}
    lams = []
    for path in sorted(root.glob("*.pkl")):
        r, cands, tests, score_fn, fs = load(path)
        res = rules(r, cands, tests, score_fn, fs)
        lams.append((path.stem, res.pop("_lam", None)))
        for k, v in with_baselines(r, res).items():
            table.setdefault(k, {}).setdefault(r["dataset"], []).append(v)
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()}, "\nshrink chosen:", lams)
    print_table(table, "current (60 random)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
