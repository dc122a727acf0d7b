"""The torch device a job trains on: the spec's ``device`` (the runner sets it from the job's slot: "cuda" on a GPU
slot, whose process sees only its own GPU as cuda:0; "cpu" on a CPU slot), or "auto" for a run by hand."""

from __future__ import annotations

import torch

from .errors import DataError


def pick_device(spec: dict) -> torch.device:
    want = spec.get("device", "auto")
    if want == "cuda" and not torch.cuda.is_available():
        raise DataError("device 'cuda' was asked for but no CUDA device is available")
    return torch.device("cuda" if want in ("auto", "cuda") and torch.cuda.is_available() else "cpu")
