"""The torch device a job trains on: the spec's ``device`` (the runner sets it from the job's slot: "cuda" on a GPU
slot, whose process sees only its own GPU as cuda:0; "cpu" on a CPU slot), or "auto" for a run by hand."""

from __future__ import annotations

import torch

from .errors import DataError
from .spec import JobSpec


def pick_device(spec: JobSpec | dict) -> torch.device:
    spec = JobSpec.of(spec)
    want = spec.device
    if want == "cuda" and not torch.cuda.is_available():
        raise DataError("no_cuda_device")
    return torch.device("cuda" if want in ("auto", "cuda") and torch.cuda.is_available() else "cpu")
