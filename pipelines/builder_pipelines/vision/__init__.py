"""Image classification (binary, multiclass, multi-label) and regression with exact class activation maps.

``run(spec, out_dir)`` handles spec.command ``train`` (pipeline.train) and ``evaluate`` (evaluate.evaluate)
and returns the manifest path relative to out_dir. Heavy imports (torch) happen only when called.
"""

from __future__ import annotations

from ..common import events
from ..common.spec import JobSpec


def run(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    events.install_stdout_guard()
    if spec.command == "train":
        from .pipeline import train

        return train(spec, out_dir)
    if spec.command == "evaluate":
        from .evaluate import evaluate

        return evaluate(spec, out_dir)
    raise ValueError(f"unknown command {spec.command!r}")
