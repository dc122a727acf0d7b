"""Object detection: an FCOS-style detector trained from the normalised box table, exported to ONNX.

``run(spec, out_dir)`` handles spec.command "train" and "evaluate"; ``postprocess`` is the
serving post-processing (numpy) that the TypeScript serving mirrors.
"""

from __future__ import annotations

from ..common import events
from ..common.spec import JobSpec
from .decode import postprocess

__all__ = ["run", "postprocess"]


def run(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    events.install_stdout_guard()
    from . import pipeline  # torch is imported only when a job runs

    if spec.command == "evaluate":
        return pipeline.evaluate(spec, out_dir)
    return pipeline.train(spec, out_dir)
