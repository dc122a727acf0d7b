"""Replays best mode's selection rule with and without CatBoost candidates on dev_collect.py's pickles (collected
with --catboost, development seeds only); every rule chooses from cross-validated scores, the test AUC of its
choice is read off.

  pipelines/.venv/bin/python bench/tabular/notebook/dev_collect.py --random 10 --catboost --out /tmp/tables-dev-cb
  pipelines/.venv/bin/python bench/tabular/notebook/dev_catboost.py /tmp/tables-dev-cb
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent  # bench/tabular/notebook
sys.path.insert(0, str(HERE.parent))  # bench/tabular: run.py and the table loaders
sys.path.insert(0, str(HERE))
from dev_rules import AUC, print_table, replay_dir, replay_pools  # noqa: E402


def rules(r, cands, tests, score_fn, fs) -> dict[str, float]:
    yte = r["yte"]
    base = [c for c in cands if c.config["model"] != "catboost"]
    cb = [c for c in cands if c.config["model"] == "catboost"]
    cb_default = next(c for c in cb if not c.config["params"])
    lr_def = next(c for c in base if c.family == "linear_default")
    out = {
        "LR default": AUC(yte, tests[lr_def.trial]),
        "CatBoost default": AUC(yte, tests[cb_default.trial]),
        "CatBoost depth 4": AUC(yte, tests[next(c for c in cb if c.config["params"]).trial]),
        "0.5 LR + 0.5 CatBoost": AUC(yte, 0.5 * tests[lr_def.trial] + 0.5 * tests[cb_default.trial]),
    }
    pools = (
        ("current", base),
        ("current + CatBoost default", base + [cb_default]),
        ("current + both CatBoost", base + cb),
    )
    return out | replay_pools(pools, r, tests, score_fn, fs)


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tables-dev-cb")
    table, records = replay_dir(root, rules)
    cb_time: dict[str, list] = {}
    for r in records:
        cb_time.setdefault(r["dataset"], []).extend(
            c["time_s"] for c in r["cands"] if c["config"]["model"] == "catboost"
        )
    print("splits:", {d: len(v) for d, v in table["baseline LR"].items()})
    print(
        "CatBoost candidate time (15 CV fits + refit), median s:",
        {d: round(float(np.median(t)), 1) for d, t in cb_time.items()},
    )
    print_table(table, "current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
