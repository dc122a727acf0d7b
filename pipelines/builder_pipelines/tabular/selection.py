"""Choosing the published model from cross-validated candidates, with the noise of small tables in mind.

Every candidate carries its pooled out-of-fold score (``score``, the optimisation metric, averaged over
repeats) and one score per fold (``fold_scores``, folds x repeats), all on the same folds.

1. One-standard-error rule (Breiman et al. 1984; Hastie et al., ESL 7.10): among the single models whose
   score is within one standard error of the best one, take the simplest family (linear < bagged trees <
   LightGBM defaults < tuned LightGBM), and within it the best score. On a few hundred rows the top of a
   random search is mostly luck; the strong simple models win there unless the data say otherwise.
2. Ensemble: a greedy weighted average (Caruana et al. 2004) of the best candidates and the best of every
   family, on their out-of-fold scores. It replaces the chosen single model only when it is better on the
   pooled score and its fold-by-fold gain over that model exceeds one standard error of the paired gains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# The lower, the simpler: fewer choices were fitted to the data that chose it.
COMPLEXITY = {"linear": 0, "random_forest": 1, "extra_trees": 1, "lightgbm_default": 2, "lightgbm": 3, "blend": 4}
ENSEMBLE_ROUNDS = 25  # greedy additions; weights are multiples of 1/ENSEMBLE_ROUNDS at most


@dataclass
class Candidate:
    trial: int
    config: dict
    score: float  # pooled out-of-fold score, mean over repeats (higher is better)
    fold_scores: np.ndarray  # one per fold and repeat, same fold order for every candidate
    oof: list[np.ndarray] = field(repr=False)  # out-of-fold scores, one array per repeat

    @property
    def se(self) -> float:
        f = self.fold_scores[np.isfinite(self.fold_scores)]
        return float(np.std(f, ddof=1) / np.sqrt(len(f))) if len(f) > 1 else 0.0

    @property
    def family(self) -> str:
        if self.config["model"] == "lightgbm" and not self.config["params"]:
            return "lightgbm_default"
        return self.config["model"]


def paired_gain(a: Candidate, b: Candidate) -> tuple[float, float]:
    """Mean and standard error of a's fold-by-fold gain over b (folds where both are finite)."""
    d = a.fold_scores - b.fold_scores
    d = d[np.isfinite(d)]
    if len(d) < 2:
        return (float(d.mean()) if len(d) else 0.0), float("inf")
    return float(d.mean()), float(np.std(d, ddof=1) / np.sqrt(len(d)))


def one_se_choice(cands: list[Candidate]) -> tuple[Candidate, Candidate, str]:
    """(chosen, best by score, the reason in words)."""
    best = max(cands, key=lambda c: (c.score, -c.trial))
    floor = best.score - best.se
    eligible = [c for c in cands if c.score >= floor]
    simplest = min(COMPLEXITY[c.family] for c in eligible)
    chosen = max((c for c in eligible if COMPLEXITY[c.family] == simplest), key=lambda c: (c.score, -c.trial))
    if chosen is best:
        reason = (f"trial {best.trial} ({best.family}) has the best cross-validated score {best.score:.4f} "
                  f"(standard error {best.se:.4f}) and no simpler model is within one standard error of it")
    else:
        reason = (f"trial {chosen.trial} ({chosen.family}, {chosen.score:.4f}) is the simplest model within one standard "
                  f"error of the best score (trial {best.trial}, {best.family}, {best.score:.4f} - {best.se:.4f} = "
                  f"{floor:.4f}); the difference is within the noise of the folds")
    return chosen, best, reason


def ensemble_pool(cands: list[Candidate], chosen: Candidate, size: int) -> list[Candidate]:
    """The best ``size`` candidates, the best of every family, and the chosen one."""
    ranked = sorted(cands, key=lambda c: (-c.score, c.trial))
    pool = ranked[:size]
    for fam in sorted({c.family for c in cands}):
        top = next(c for c in ranked if c.family == fam)
        if top not in pool:
            pool.append(top)
    if chosen not in pool:
        pool.append(chosen)
    return pool


def greedy_weights(pool: list[Candidate], score_fn) -> tuple[dict[int, int], float]:
    """Greedy ensemble selection with replacement over the pool's out-of-fold scores.

    ``score_fn(list of oof arrays per repeat) -> float``. Returns ({pool index: times picked}, best score)."""
    n_rep = len(pool[0].oof)
    total = [np.zeros_like(pool[0].oof[r]) for r in range(n_rep)]
    counts: dict[int, int] = {}
    best_score, best_counts = -np.inf, {}
    for step in range(1, ENSEMBLE_ROUNDS + 1):
        scored = [(score_fn([(total[r] + c.oof[r]) / step for r in range(n_rep)]), i) for i, c in enumerate(pool)]
        score, pick = max(scored, key=lambda t: (t[0], -t[1]))
        total = [total[r] + pool[pick].oof[r] for r in range(n_rep)]
        counts[pick] = counts.get(pick, 0) + 1
        if score > best_score:
            best_score, best_counts = score, dict(counts)
    return best_counts, float(best_score)


def blend_candidate(pool: list[Candidate], counts: dict[int, int], trial: int, score: float, fold_score_fn) -> Candidate:
    picked = sorted(counts)
    n = sum(counts.values())
    weights = [counts[i] / n for i in picked]
    cfg = {"model": "blend", "params": {"weights": [round(w, 6) for w in weights]},
           "parts": [pool[i].config for i in picked], "members": [pool[i].trial for i in picked]}
    n_rep = len(pool[0].oof)
    oof = [sum(w * pool[i].oof[r] for w, i in zip(weights, picked)) for r in range(n_rep)]
    return Candidate(trial, cfg, score, fold_score_fn(oof), oof)


def accept_blend(blend: Candidate, chosen: Candidate) -> tuple[bool, str]:
    gain, se = paired_gain(blend, chosen)
    if blend.score > chosen.score and gain > se:
        return True, (f"the ensemble of trials {blend.config['members']} scores {blend.score:.4f} against {chosen.score:.4f}; "
                      f"its fold-by-fold gain {gain:.4f} exceeds one standard error ({se:.4f})")
    return False, (f"the ensemble of trials {blend.config['members']} ({blend.score:.4f}) was not kept: fold-by-fold gain "
                   f"{gain:.4f} over the chosen model, standard error {se:.4f}")
