"""Means over seeds with 95 % t-intervals, per arm, and the paired (same seed) difference of each arm from change-28.

pipelines/.venv/bin/python bench/vision-native-size/summarise.py bench/vision-native-size/notebook/results-*.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import numpy as np
from scipy import stats


def interval(values: list[float]) -> str:
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return f"{v.mean():.4f} (one seed)"
    half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return f"{v.mean():.4f} [{v.mean() - half:.4f}, {v.mean() + half:.4f}]"


def main() -> None:
    for path in sys.argv[1:]:
        rows = [json.loads(x) for x in open(path) if x.strip()]
        by_arm: dict[str, dict[int, dict]] = defaultdict(dict)
        for r in rows:
            by_arm[r["arm"]][r["seed"]] = r
        print(f"## {path}")
        for arm, runs in by_arm.items():
            seeds = sorted(runs)
            aucs = [runs[s]["test_auc"] for s in seeds]
            walls = [runs[s]["wall_s"] for s in seeds]
            sides = [runs[s]["side"] for s in seeds]
            print(
                f"{arm}: test AUC {interval(aucs)} over seeds {seeds}; per seed {aucs}; sides {sides}; "
                f"wall s median {np.median(walls):.1f}"
            )
            base = by_arm.get("change-28")
            if base and arm != "change-28":
                common = [s for s in seeds if s in base]
                if common:
                    diffs = [runs[s]["test_auc"] - base[s]["test_auc"] for s in common]
                    print(
                        f"  {arm} - change-28 (paired by seed): {interval(diffs)}; per seed {np.round(diffs, 4).tolist()}"
                    )


if __name__ == "__main__":
    main()
