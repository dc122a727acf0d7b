"""Replays best mode's selection rule with and without the smooth additive candidates (dev_collect.ADDITIVE:
logistic regression on Yeo-Johnson-transformed columns, boosted stumps) on dev_collect.py's pickles, collected
with --catboost --additive on development seeds only; every rule chooses from cross-validated scores, the test AUC
of its choice is read off.

  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --random 10 --catboost --additive --out /tmp/tables-dev-add
  pipelines/.venv/bin/python bench/tabular/notebook/dev_additive.py /tmp/tables-dev-add
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE))
from dev_collect import ADDITIVE  # noqa: E402
from dev_rules import AUC, print_table, replay_dir, replay_pools  # noqa: E402


def _is(cand, cfg: dict) -> bool:
    return cand.config["model"] == cfg["model"] and cand.config["params"] == cfg["params"]


def rules(r, cands, tests, score_fn, fs) -> dict[str, float]:
    yte = r["yte"]
    power = next(c for c in cands if _is(c, ADDITIVE[0]))
    stumps = next(c for c in cands if _is(c, ADDITIVE[1]))
    current = [c for c in cands if c is not power and c is not stumps]
    out = {
        "LR on Yeo-Johnson columns alone": AUC(yte, tests[power.trial]),
        "boosted stumps alone": AUC(yte, tests[stumps.trial]),
    }
    pools = (
        ("current", current),
        ("current + LR Yeo-Johnson", current + [power]),
        ("current + stumps", current + [stumps]),
        ("current + both", current + [power, stumps]),
    )
    return out | replay_pools(pools, r, tests, score_fn, fs)


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tables-dev-add")
    table, records = replay_dir(root, rules)
    times: dict[str, list] = {}
    for r in records:
        for c in r["cands"]:
            for cfg, label in zip(ADDITIVE, ("power LR", "stumps")):
                if c["config"]["model"] == cfg["model"] and c["config"]["params"] == cfg["params"]:
                    times.setdefault(label, []).append(c["time_s"])
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()})
    print(
        "candidate time (15 CV fits + refit), median s:", {k: round(float(np.median(t)), 1) for k, t in times.items()}
    )
    print_table(table, "current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
