"""Subgroup performance (common/subgroups.py): quartiles, pooling, the worse flag and too_small."""

from __future__ import annotations

import numpy as np

from builder_pipelines.common import clinical
from builder_pipelines.common import subgroups as S
from builder_pipelines.common.contract import errors


def _binary(n: int, rng, noise):
    """n patients, one row each: truth, scores whose separation falls with ``noise`` (per row), 0.5 threshold."""
    y = (rng.random(n) < 0.4).astype(int)
    s1 = np.clip(0.5 + (y - 0.5) * 0.6 + rng.normal(0, 1, n) * noise, 0, 1)
    scores = np.stack([1 - s1, s1], 1)
    yo = np.stack([1 - y, y], 1)
    dec = np.stack([s1 < 0.5, s1 >= 0.5], 1).astype(int)
    return yo, scores, dec


def test_quartiles_are_four_groups_labelled_by_their_ranges():
    ages = [str(21 + i % 60) for i in range(400)]
    a = S.assign(ages, [f"p{i}" for i in range(400)])
    assert a["kind"] == "quartiles"
    assert len(a["order"]) == 4
    assert a["order"][0].startswith("21–") and a["order"][-1].endswith("–80")
    counts = [a["labels"].count(label) for label in a["order"]]
    assert min(counts) > 60 and sum(counts) == 400


def test_few_distinct_numbers_are_categories_and_bins_cut_where_asked():
    a = S.assign(["0", "1", "1", "2"] * 30, [f"p{i}" for i in range(120)])
    assert a["kind"] == "categorical" and a["order"] == ["0", "1", "2"]
    b = S.assign([str(v) for v in range(20, 80)], [f"p{i}" for i in range(60)], bins=[50, 30])
    assert b["kind"] == "bins" and b["order"] == ["<30", "30–<50", "≥50"]
    assert b["labels"][10] == "30–<50" and b["labels"][30] == "≥50"  # 30 and 50 belong to the upper group


def test_rare_values_are_pooled_as_other_and_groups_are_capped():
    values = ["A"] * 50 + ["B"] * 30 + ["C"] * 4 + ["D"] * 3 + [""] * 25
    a = S.assign(values, [f"p{i}" for i in range(len(values))])
    assert a["order"] == ["A", "B", "other", "missing"]
    # In a category column a marker is a value ("none" may be a real answer); in a numeric one it is missing.
    assert S.assign(["none", "some"] * 30, [f"p{i}" for i in range(60)])["order"] == ["none", "some"]
    ages = S.assign([str(20 + i % 40) for i in range(100)] + ["NA"] * 5, [f"p{i}" for i in range(105)])
    assert ages["kind"] == "quartiles" and ages["order"][-1] == "missing"
    many = [f"site{i % 20}" for i in range(20 * 25)]
    m = S.assign(many, [f"p{i}" for i in range(len(many))])
    assert len(m["order"]) == S.MAX_GROUPS and m["order"][-1] == "other"


def test_free_text_columns_are_skipped_without_printing_values():
    notes = [f"note about patient {i}" for i in range(100)]
    a = S.assign(notes, [f"p{i}" for i in range(100)])
    assert "skipped" in a and a["order"] == []
    assert "patient" not in a["skipped"]


def test_inputs_count_distinct_values_over_the_whole_table():
    from builder_pipelines.common.data import Table

    rows = [{"id": f"p{i}", "note": f"n{i}", "sex": "FM"[i % 2]} for i in range(100)]
    spec = {"data": {"subgroup_cols": ["note", "sex"]}}
    sub = S.inputs(spec, Table(["id", "note", "sex"], rows), list(range(10)))
    assert sub["distinct"] == {"note": 100, "sex": 2}
    # Only 10 test rows hold 10 notes, but the column has 100 values: skipped, as the dataset check warned.
    a = S.assign(sub["columns"][0][1], [f"p{i}" for i in range(10)], distinct_all=sub["distinct"]["note"])
    assert "skipped" in a
    assert S.inputs({"data": {}}, Table(["id"], rows), [0]) is None


def test_a_planted_worse_group_is_flagged_and_small_groups_are_too_small():
    rng = np.random.default_rng(0)
    n = 900
    site = np.array(["A"] * 400 + ["B"] * 400 + ["C"] * 100)
    site[:8] = "tiny"  # 8 patients: too small for any figure
    yo, scores, dec = _binary(n, rng, noise=0.05)
    # Site C: the model is close to guessing there.
    yc, sc, dc = _binary(100, np.random.default_rng(1), noise=2.0)
    yo[800:], scores[800:], dec[800:] = yc, sc, dc
    groups = np.array([f"p{i}" for i in range(n)])
    sub = {"columns": [("site", list(site))], "bins": {}}
    out = S.compute("binary", yo, scores, dec, groups, 1, sub, seed=0, n_boot=200)
    assert len(out) == 1 and out[0]["column"] == "site" and out[0]["kind"] == "categorical"
    by = {g["label"]: g for g in out[0]["groups"]}
    assert set(by) == {"A", "B", "C", "other"}  # "tiny" (8 patients) is pooled
    assert by["C"]["flag"] == "worse"
    assert by["C"]["auc"]["ci_high"] < by["C"]["rest_auc"]
    assert by["A"]["flag"] is None and by["B"]["flag"] is None
    assert by["other"]["flag"] == "too_small" and by["other"]["auc"] is None
    assert by["A"]["patients"] == 392 and by["A"]["positives"] == int(yo[8:400, 1].sum())
    assert 0 < by["A"]["prevalence"] < 1
    for key in ("auc", "sensitivity", "specificity"):
        e = by["B"][key]
        assert e["ci_low"] <= e["value"] <= e["ci_high"]


def test_section_carries_subgroups_that_satisfy_the_manifest_schema():
    rng = np.random.default_rng(2)
    yo, scores, dec = _binary(300, rng, noise=0.2)
    groups = [f"p{i}" for i in range(300)]
    sub = {"columns": [("sex", ["F", "M"] * 150), ("age", [str(20 + i % 50) for i in range(300)])], "bins": {}}
    classes = [{"index": 0, "code": "0", "name": "0"}, {"index": 1, "code": "1", "name": "1"}]
    sec = clinical.section("binary", classes, yo, dec, groups, (1, "requested"), scores, sub, 0)
    assert [c["column"] for c in sec["subgroups"]] == ["sex", "age"]
    assert len(sec["subgroups"][1]["groups"]) == 4
    doc = {
        "schema_version": 1,
        "kind": "tabular",
        "problem": "binary",
        "model_file": "model.onnx",
        "input": {"name": "x"},
        "outputs": {"scores": "s"},
        "classes": classes,
        "metric": "auc",
        "metrics": {"test": {}},
        "figures": [],
        "clinical": sec,
        "provenance": {
            "dataset_sha256": None,
            "seed": 0,
            "split_counts": {"train": 1, "val": 1, "test": 1},
            "code_version": "x",
            "time_taken_s": 1,
            "created_at": "2026-01-01T00:00:00Z",
        },
    }
    assert [e for e in errors("manifest", doc) if "clinical" in e] == []


def test_multiclass_reports_macro_auc_and_no_positives():
    rng = np.random.default_rng(3)
    n = 300
    y = rng.integers(0, 3, n)
    yo = np.eye(3)[y].astype(int)
    scores = np.clip(yo * 0.6 + rng.random((n, 3)) * 0.4, 0, 1)
    scores = scores / scores.sum(1, keepdims=True)
    dec = np.eye(3)[scores.argmax(1)].astype(int)
    sub = {"columns": [("sex", ["F", "M"] * (n // 2))], "bins": {}}
    out = S.compute("multiclass", yo, scores, dec, [f"p{i}" for i in range(n)], None, sub, n_boot=50)
    g = out[0]["groups"][0]
    assert g["positives"] is None and g["prevalence"] is None
    assert 0.5 < g["auc"]["value"] <= 1
