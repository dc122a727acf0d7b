"""Tabular pipeline: LightGBM and a regularised linear model, tuned with patient-grouped CV, exported to ONNX.

``run(spec, out_dir)`` handles ``train`` and ``evaluate`` and returns "manifest.json".
The server always sets ``spec.budget.time_budget_s``; the defaults below are what it should send
for each mode (and what bench/tabular uses).
"""

from __future__ import annotations

from ..common import events

FAST_BUDGET_S = 20.0
BEST_BUDGET_S = 240.0
DEFAULT_BUDGET_S = {"fast": FAST_BUDGET_S, "best": BEST_BUDGET_S}


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
