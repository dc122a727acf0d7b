"""Tabular pipeline: a linear model, LightGBM and (best mode) random forest / extra trees and CatBoost, chosen with
repeated patient-grouped CV, optionally averaged into one ensemble, exported to ONNX.

``run(spec, out_dir)`` handles ``train`` and ``evaluate`` and returns "manifest.json".
The server always sets ``spec.budget.time_budget_s``: the request's own ``time_budget_s``, else its defaults
FAST_BUDGET_S / BEST_BUDGET_S, which come from pipelines/contract/budgets.json (fast 150 s, best 720 s), the one set
of defaults that the server, this package and bench/tabular share. The search gets 60% of it; fast mode's plan
(17 candidates on 3 folds) usually ends within seconds, best mode searches until min(60% of the budget, 200 s)
so that a whole best-mode job on up to 5,000 rows stays under 5 minutes. Selection: selection.py.
"""

from __future__ import annotations

from ..common import events
from ..common.contract import default_budgets
from ..common.spec import JobSpec

DEFAULT_BUDGET_S = default_budgets()
FAST_BUDGET_S = DEFAULT_BUDGET_S["fast"]
BEST_BUDGET_S = DEFAULT_BUDGET_S["best"]


def run(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    events.install_stdout_guard()
    if spec.command == "evaluate":
        from .evaluate import evaluate

        return evaluate(spec, out_dir)
    from threadpoolctl import threadpool_limits

    from .train import threads_for, train

    # BLAS threads spin-wait like OpenMP ones: bound them to the job's thread count.
    with threadpool_limits(limits=threads_for(spec)):
        return train(spec, out_dir)
