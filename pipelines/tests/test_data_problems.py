"""A data problem leaves the pipeline as a key and its values, never as a sentence (issue 53): every DataError in the
sources names a key of pipelines/contract/data-problems.json with exactly the values that key declares, every key
is raised somewhere, and the process writes the key, the values and the English on one event the contract accepts.
(test/unit/pipeline-problem-keys.test.ts checks the same list against both catalogs.)"""

import ast
import io
import json
from pathlib import Path

import pytest

from builder_pipelines import __main__ as cli
from builder_pipelines.common import contract, events
from builder_pipelines.common.data import Table
from builder_pipelines.common.errors import PART_EMPTY, DataError, english, problem_keys
from builder_pipelines.tabular.table import infer_columns

PACKAGE = Path(__file__).resolve().parents[1] / "builder_pipelines"


def _raised_keys(call: ast.Call, path: Path) -> list[str]:
    """The keys a DataError(...) call can raise: string literals, or PART_EMPTY[part] (one key per part)."""
    assert call.args, f"{path}:{call.lineno}: DataError without a key"
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [first.value]
    if isinstance(first, ast.Subscript) and isinstance(first.value, ast.Name) and first.value.id == "PART_EMPTY":
        return list(PART_EMPTY.values())
    raise AssertionError(f"{path}:{call.lineno}: a DataError's key must be written out (a literal), not computed")


def _data_error_calls():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "DataError":
                yield path.relative_to(PACKAGE), node


def test_every_data_error_names_a_contract_key_with_its_values():
    keys = problem_keys()
    used = set()
    calls = list(_data_error_calls())
    assert len(calls) > 40  # the scan sees the sources (it can fail)
    for path, call in calls:
        given = sorted(k.arg for k in call.keywords if k.arg != "detail")
        assert all(k.arg for k in call.keywords), f"{path}:{call.lineno}: no **values, each one by name"
        for key in _raised_keys(call, path):
            assert key in keys, f"{path}:{call.lineno}: {key!r} is not in data-problems.json"
            assert given == sorted(keys[key]), f"{path}:{call.lineno}: {key!r} takes {keys[key]}, given {given}"
            used.add(key)
    assert sorted(set(keys) - used) == [], "keys in data-problems.json that no DataError raises"


def test_a_data_error_refuses_an_unknown_key_or_wrong_values():
    with pytest.raises(KeyError):
        DataError("not_a_key")
    with pytest.raises(TypeError):
        DataError("empty_value", row=3)  # column missing
    with pytest.raises(TypeError):
        DataError("empty_value", row=3, column="age", value="x")


def test_the_english_is_the_catalog_sentence_with_every_value_filled():
    catalog = json.loads((PACKAGE.parents[1] / "locales" / "en" / "problems.json").read_text(encoding="utf-8"))
    for key, names in problem_keys().items():
        text = english(key, {n: f"<{n}>" for n in names})
        assert text.startswith(catalog["pipeline"][key].split("{{")[0]) and "{{" not in text, key
    err = DataError("empty_value", row=3, column="edad")
    assert str(err) == (
        "data row 3, column 'edad': empty value (every used column needs a value; write NA where a number is missing)"
    )


def test_a_real_check_raises_its_key_with_row_and_column():
    table = Table(header=["age", "sex"], rows=[{"age": "71", "sex": "F"}, {"age": "", "sex": "M"}])
    with pytest.raises(DataError) as err:
        infer_columns(table, ["age", "sex"])
    assert (err.value.key, err.value.params) == ("empty_value", {"row": 2, "column": "age"})


def test_the_process_emits_key_values_and_english_on_one_contract_event(monkeypatch, tmp_path, capsys):
    out = io.StringIO()
    monkeypatch.setattr(events, "_out", out)

    class Spec:
        command = "train"

    monkeypatch.setattr(cli, "load_spec", lambda path: {})
    monkeypatch.setattr(cli.JobSpec, "from_dict", staticmethod(lambda d: Spec()))

    def refuse(spec, out_dir):
        raise DataError("image_unreadable", path="p7.png", detail="cannot identify image file")

    monkeypatch.setattr(cli, "_dispatch", refuse)
    assert cli.main(["train", "--spec", str(tmp_path / "spec.json"), "--out", str(tmp_path)]) == 3
    (line,) = out.getvalue().splitlines()
    event = json.loads(line)
    assert contract.errors("event", event) == []
    assert event == {
        "type": "log",
        "level": "error",
        "message": "cannot read the image 'p7.png': the file is damaged or is not an image",
        "key": "image_unreadable",
        "params": {"path": "p7.png"},
    }
    # The library's own words go to the job log (stderr) only.
    assert "cannot identify image file" in capsys.readouterr().err
