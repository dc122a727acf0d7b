"""The device the pipeline tests train on: "cpu" (CI and development machines have no GPU) unless
BUILDER_TEST_DEVICE says "cuda", so that the same tests check the CUDA paths (mixed precision, non-blocking
device copies) when they are run by hand on a GPU host: ``BUILDER_TEST_DEVICE=cuda python -m pytest tests``."""

from __future__ import annotations

import os

import torch

DEVICE = os.environ.get("BUILDER_TEST_DEVICE", "cpu")
TORCH_DEVICE = torch.device(DEVICE)
