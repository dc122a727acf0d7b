"""A pretrained backbone an administrator installed (issue 52): ``./builder backbones install`` pins each weights file
by SHA-256 and records its licence, and the job spec names the one to use (``options.backbone`` with
``options.pretrained_weights``, its file). Nothing is downloaded here.

The pipeline checks the file against its pin again before loading it (a file changed or swapped after installation
is refused in plain words, not trained on), fine-tunes the backbone's own recipe (its family, width and depth, so every
tensor but the head loads) at no more than its native resolution, with the usual fine-tuning schedule: the same
warm-up and cosine decay, the backbone's layers at a tenth of the head's learning rate (train.BACKBONE_LR_SCALE).
With none installed, the from-scratch recipes are used as before. The weights must be a state dict of the pipeline's
own CamNet (models.py) with that family, width and depth; other layouts (timm, torchvision) are not converted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

import torch

from ..common import events
from ..common.errors import DataError
from ..common.spec import JobSpec
from .train import Candidate

FINE_TUNE_LR = 1e-3  # the head's; the backbone's is BACKBONE_LR_SCALE of it (train.py)


class BackboneError(RuntimeError):
    """The installed backbone cannot be used as installed: a problem for the administrator, not for the data."""


@dataclasses.dataclass(frozen=True)
class Backbone:
    name: str
    file: str
    sha256: str
    licence: str
    source: str
    family: str
    width: int
    depth: int
    native_side: int

    @property
    def recipe(self) -> Candidate:
        return Candidate(self.family, self.width, self.depth, FINE_TUNE_LR)

    def summary(self) -> dict:
        """What the manifest and the model card say about the weights used."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "licence": self.licence,
            "source": self.source,
            "architecture": self.recipe.name,
            "native_side": self.native_side,
            "schedule": "fine-tuned: backbone at a tenth of the head's learning rate, warm-up then cosine decay",
        }


NONE_INSTALLED = {"name": None, "why": "no pretrained backbone installed: trained from scratch"}


def from_spec(spec: JobSpec | dict) -> Backbone | None:
    """The backbone the job spec names, or None (then a bare ``pretrained_weights`` path, if any, is used as before)."""
    spec = JobSpec.of(spec)
    b = spec.options.backbone
    if not b:
        return None
    if not spec.options.pretrained_weights:
        raise BackboneError(f"the job spec names backbone {b.get('name')!r} but no weights file (pretrained_weights)")
    return Backbone(
        name=str(b["name"]),
        file=spec.options.pretrained_weights,
        sha256=str(b["sha256"]).lower(),
        licence=str(b.get("licence") or "not stated"),
        source=str(b.get("source") or "not stated"),
        family=str(b["family"]),
        width=int(b["width"]),
        depth=int(b["depth"]),
        native_side=int(b["native_side"]),
    )


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_checked(backbone: Backbone) -> dict:
    """The weights as a state dict, after the file's SHA-256 matched the pin recorded when it was installed."""
    if not os.path.isfile(backbone.file):
        raise BackboneError(
            f"backbone {backbone.name!r}: its weights file {backbone.file} is missing; install it again with "
            "./builder backbones install"
        )
    found = sha256_of(backbone.file)
    if found != backbone.sha256:
        raise BackboneError(
            f"backbone {backbone.name!r} refused: its weights file's SHA-256 is {found}, but it was installed pinned to "
            f"{backbone.sha256}. The file changed after installation (or is not the one that was pinned); nothing was "
            "trained on it. Install the right file again with ./builder backbones install."
        )
    state = torch.load(backbone.file, map_location="cpu", weights_only=True)
    state = state.get("state_dict", state) if isinstance(state, dict) else state
    events.log(
        "info",
        f"pretrained backbone {backbone.name} ({backbone.recipe.name}, licence: {backbone.licence}): {len(state)} "
        f"tensors, SHA-256 {backbone.sha256[:12]}... checked",
    )
    return state


def load_unpinned(path: str | None) -> dict | None:
    """A bare ``pretrained_weights`` path without a backbone record (before issue 52): loaded as it is."""
    if not path:
        return None
    if not os.path.isfile(path):
        raise DataError("pretrained_weights_missing", path=path)
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = state.get("state_dict", state) if isinstance(state, dict) else state
    events.log(
        "info",
        f"pretrained weights: {len(state)} tensors from {os.path.basename(path)} (matching names/shapes are used)",
    )
    return state
