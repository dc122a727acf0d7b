"""common/spec.py: the typed job spec follows contract/job-spec.schema.json field for field."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from builder_pipelines.common.errors import SpecError
from builder_pipelines.common.spec import (
    BudgetSpec,
    DataSpec,
    JobSpec,
    OptionsSpec,
    SourceModelSpec,
    SplitSpec,
    load_spec,
)

SCHEMA = json.loads((Path(__file__).parents[1] / "contract" / "job-spec.schema.json").read_text())


def _names(cls) -> set[str]:
    return {f.name for f in fields(cls)}


@pytest.mark.parametrize(
    "cls,props",
    [
        (JobSpec, SCHEMA["properties"]),
        (DataSpec, SCHEMA["properties"]["data"]["properties"]),
        (SplitSpec, SCHEMA["properties"]["split"]["properties"]),
        (BudgetSpec, SCHEMA["properties"]["budget"]["properties"]),
        (SourceModelSpec, SCHEMA["properties"]["source_model"]["properties"]),
        (OptionsSpec, SCHEMA["properties"]["options"]["properties"]),
    ],
)
def test_dataclass_fields_are_the_schema_properties(cls, props):
    assert _names(cls) == set(props), f"{cls.__name__} and the schema disagree"


def test_required_fields_have_no_default():
    required = set(SCHEMA["required"])
    no_default = {f.name for f in fields(JobSpec) if f.default is f.default_factory}  # both MISSING
    assert no_default == required


def _full() -> dict:
    return {
        "schema_version": 1,
        "job_id": "j1",
        "command": "evaluate",
        "kind": "tabular",
        "problem": "binary",
        "data": {
            "root": "/d",
            "table": "/d/t.csv",
            "id_col": "pid",
            "images_col": None,
            "label_cols": ["y"],
            "data_cols": ["a", "b"],
            "subgroup_cols": ["sex"],
            "subgroup_bins": {"age": [30, 50]},
            "class_name_col": None,
            "sha256": "ab",
        },
        "split": {"seed": 3, "train": ["1"], "val": ["2"], "test": ["3", "4"]},
        "metric": "auc",
        "threshold_metric": "auc",
        "budget": {"mode": "fast", "time_budget_s": 60},
        "seed": 7,
        "device": "cpu",
        "out_dir": "/o",
        "positive_class": "yes",
        "source_model": {"dir": "/m"},
        "options": {"allow_flips": True, "pretrained_weights": None, "max_image_side": 256, "threads": 2},
    }


def test_load_spec_reads_every_field(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_full()))
    spec = JobSpec.from_dict(load_spec(str(path)))
    assert spec.data.subgroup_bins["age"] == (30, 50)
    assert spec.split.parts() == {"train": ("1",), "val": ("2",), "test": ("3", "4")}
    assert (spec.budget.mode, spec.budget.time_budget_s, spec.seed) == ("fast", 60.0, 7)
    assert spec.source_model == SourceModelSpec("/m")
    assert spec.options == OptionsSpec(True, None, 256, 2)
    assert spec.positive_class == "yes"
    assert JobSpec.of(spec) is spec
    with pytest.raises(AttributeError):
        spec.seed = 1  # frozen: a pipeline cannot change the request under another module


def test_optional_fields_default_when_absent(tmp_path):
    d = _full()
    for k in ("positive_class", "source_model", "options"):
        del d[k]
    for k in ("images_col", "data_cols", "subgroup_cols", "subgroup_bins", "class_name_col", "sha256"):
        del d["data"][k]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(d))
    spec = JobSpec.from_dict(load_spec(str(path)))
    assert spec.source_model is None and spec.positive_class is None
    assert spec.options == OptionsSpec()
    assert spec.data.subgroup_cols == () and dict(spec.data.subgroup_bins) == {} and spec.data.sha256 is None


def test_load_spec_still_rejects_what_the_schema_rejects(tmp_path):
    d = _full()
    d["options"]["colour"] = "red"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(d))
    with pytest.raises(SpecError, match="colour"):
        load_spec(str(path))
