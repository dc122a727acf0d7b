"""The job spec (contract/job-spec.schema.json) as a typed, read-only view.

``load_spec`` validates spec.json against the schema and ``JobSpec.from_dict`` reads it once; modules read attributes
(``spec.data.id_col``, ``spec.budget.mode``) instead of indexing a dict, so a misspelt field is an error at the
line that reads it and the fields a pipeline may rely on are listed here once. Functions that take a spec call
``JobSpec.of(spec)``, which also accepts the plain dict the tests build. tests/test_spec.py checks that every
dataclass below has exactly the fields its part of the schema allows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from .contract import errors
from .errors import SpecError


@dataclass(frozen=True)
class DataSpec:
    root: str
    table: str
    id_col: str
    label_cols: tuple[str, ...]
    images_col: str | None = None
    data_cols: tuple[str, ...] = ()
    subgroup_cols: tuple[str, ...] = ()
    subgroup_bins: Mapping[str, tuple[float, ...]] = field(default_factory=lambda: MappingProxyType({}))
    class_name_col: str | None = None
    sha256: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DataSpec:
        return cls(
            root=d["root"],
            table=d["table"],
            id_col=d["id_col"],
            label_cols=tuple(d["label_cols"]),
            images_col=d.get("images_col"),
            data_cols=tuple(d.get("data_cols") or ()),
            subgroup_cols=tuple(d.get("subgroup_cols") or ()),
            subgroup_bins=MappingProxyType({k: tuple(v) for k, v in (d.get("subgroup_bins") or {}).items()}),
            class_name_col=d.get("class_name_col"),
            sha256=d.get("sha256"),
        )


@dataclass(frozen=True)
class SplitSpec:
    """Patient ids (values of id_col, as strings) per split."""

    seed: int
    train: tuple[str, ...]
    val: tuple[str, ...]
    test: tuple[str, ...]

    @classmethod
    def from_dict(cls, s: Mapping[str, Any]) -> SplitSpec:
        return cls(int(s.get("seed", 0)), *(tuple(s[k]) for k in ("train", "val", "test")))

    def parts(self) -> dict[str, tuple[str, ...]]:
        return {"train": self.train, "val": self.val, "test": self.test}


@dataclass(frozen=True)
class BudgetSpec:
    mode: str  # "best" | "fast"
    time_budget_s: float


@dataclass(frozen=True)
class SourceModelSpec:
    dir: str


@dataclass(frozen=True)
class OptionsSpec:
    allow_flips: bool | None = None
    pretrained_weights: str | None = None
    max_image_side: int | None = None
    threads: int | None = None
    dicom: dict | None = None  # {window: {source, name?, center?, width?}, frames: first|all}; see common/dicom.py
    # an installed pretrained backbone (./builder backbones install): name, sha256, licence, source, family, width,
    # depth, native_side; its file is pretrained_weights (vision/backbone.py)
    backbone: dict | None = None


@dataclass(frozen=True)
class JobSpec:
    schema_version: int
    job_id: str
    command: str  # "train" | "evaluate"
    kind: str  # "vision_classification" | "detection" | "tabular"
    problem: str  # "binary" | "multiclass" | "multilabel" | "regression" | "detection"
    data: DataSpec
    split: SplitSpec
    metric: str
    threshold_metric: str | None
    budget: BudgetSpec
    seed: int
    device: str  # "auto" | "cpu" | "cuda"
    out_dir: str
    positive_class: str | None = None
    source_model: SourceModelSpec | None = None
    options: OptionsSpec = field(default_factory=OptionsSpec)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> JobSpec:
        """Trusts the shape (``load_spec`` checked it against the schema); fills the optional fields' defaults."""
        source = spec.get("source_model")
        return cls(
            schema_version=int(spec.get("schema_version", 1)),
            job_id=str(spec.get("job_id", "")),
            command=spec["command"],
            kind=spec["kind"],
            problem=spec["problem"],
            data=DataSpec.from_dict(spec["data"]),
            split=SplitSpec.from_dict(spec["split"]),
            metric=spec["metric"],
            threshold_metric=spec.get("threshold_metric"),
            budget=BudgetSpec(spec["budget"]["mode"], float(spec["budget"]["time_budget_s"])),
            seed=int(spec["seed"]),
            device=spec.get("device", "auto"),
            out_dir=str(spec.get("out_dir", "")),
            positive_class=spec.get("positive_class"),
            source_model=SourceModelSpec(source["dir"]) if source else None,
            options=OptionsSpec(**_known(OptionsSpec, spec.get("options") or {})),
        )

    @classmethod
    def of(cls, spec: JobSpec | Mapping[str, Any]) -> JobSpec:
        return spec if isinstance(spec, JobSpec) else cls.from_dict(spec)


def data_and_split(spec: JobSpec | Mapping[str, Any]) -> tuple[DataSpec, SplitSpec]:
    """For the readers that need only these two parts (unit tests give them a spec with nothing else)."""
    if isinstance(spec, JobSpec):
        return spec.data, spec.split
    return DataSpec.from_dict(spec["data"]), SplitSpec.from_dict(spec["split"])


def _known(cls, d: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def load_spec(path: str) -> dict:
    """spec.json, checked against the schema (``JobSpec.from_dict`` then gives the typed view)."""
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise SpecError(f"cannot read {path}: {exc}") from exc
    problems = errors("job-spec", spec)
    if problems:
        raise SpecError("; ".join(problems))
    return spec
