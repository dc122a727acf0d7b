"""Tabular pipeline: LightGBM and a regularised linear model, tuned with patient-grouped CV, exported to ONNX.

``run(spec, out_dir)`` handles ``train`` and ``evaluate`` and returns "manifest.json".
The server always sets ``spec.budget.time_budget_s``: the request's own ``time_budget_s``, else its defaults
FAST_BUDGET_S / BEST_BUDGET_S, which come from pipelines/contract/budgets.json (fast 150 s, best 720 s), the one set
of defaults that the server, this package and bench/tabular share. The search plans (search.py) usually end well
inside them on tabular data; the budget is the ceiling.
"""

from __future__ import annotations

from ..common import events
from ..common.contract import default_budgets

DEFAULT_BUDGET_S = default_budgets()
FAST_BUDGET_S = DEFAULT_BUDGET_S["fast"]
BEST_BUDGET_S = DEFAULT_BUDGET_S["best"]


def run(spec: dict, out_dir: str) -> str:
    events.install_stdout_guard()
    if spec["command"] == "evaluate":
        from .evaluate import evaluate

        return evaluate(spec, out_dir)
    from threadpoolctl import threadpool_limits

    from .train import threads_for, train

    # BLAS threads spin-wait like OpenMP ones: bound them to the job's thread count.
    with threadpool_limits(limits=threads_for(spec)):
        return train(spec, out_dir)
