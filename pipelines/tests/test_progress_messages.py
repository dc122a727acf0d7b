"""What a pipeline says while it runs leaves it as a key and its values, never as a sentence (issue 53): every
events.progress(...) in the sources names a key of pipelines/contract/progress-messages.json with exactly the values
that key declares, every key is used somewhere, and the event carries the key, the values and the English on one
event the contract accepts. (test/unit/pipeline-progress-keys.test.ts checks the same list against both catalogs.)"""

import ast
import io
import json
from pathlib import Path

import pytest

from builder_pipelines.common import contract, events

PACKAGE = Path(__file__).resolve().parents[1] / "builder_pipelines"


def _progress_calls():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "events.progress":
                yield path.relative_to(PACKAGE), node


def test_every_progress_names_a_contract_key_with_its_values():
    keys = events.progress_keys()
    used = set()
    calls = list(_progress_calls())
    assert len(calls) > 20  # the scan sees the sources (it can fail)
    for path, call in calls:
        where = f"{path}:{call.lineno}"
        named = {k.arg: k.value for k in call.keywords}
        assert "message" not in named, f"{where}: a sentence (message=) instead of key= and params="
        if None in named:  # **kw passed through (detection's training callback): only counts, no words
            continue
        key = named.get("key")
        if key is None:
            continue  # a bare fraction (epochs, trials): the dashboard says those from its own catalog
        assert isinstance(key, ast.Constant) and isinstance(key.value, str), f"{where}: key must be a literal"
        assert key.value in keys, f"{where}: {key.value!r} is not in progress-messages.json"
        params = named.get("params")
        given = []
        if params is not None:
            assert isinstance(params, ast.Dict), f"{where}: params must be written out as a dict"
            given = sorted(k.value for k in params.keys)
        assert given == sorted(keys[key.value]), f"{where}: {key.value!r} takes {keys[key.value]}, given {given}"
        used.add(key.value)
    assert sorted(set(keys) - used) == [], "keys in progress-messages.json that no events.progress uses"


def test_a_progress_refuses_a_sentence_an_unknown_key_or_wrong_values():
    with pytest.raises(TypeError):
        events.progress("preparing", 0.0, message="reading the table")
    with pytest.raises(KeyError):
        events.progress("preparing", 0.0, key="not_a_key")
    with pytest.raises(TypeError):
        events.progress("evaluating", 0.5, key="running_model_on_images")  # images missing
    with pytest.raises(TypeError):
        events.progress("evaluating", 0.5, key="done", params={"images": 3})


def test_the_event_carries_key_values_and_the_english_and_the_contract_accepts_it(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(events, "_out", out)
    events.progress("evaluating", 0.5, key="running_model_on_images", params={"images": 12})
    events.progress(
        "training",
        0.4,
        key="trial_result",
        params={"trial": 2, "model": "svm", "metric": "auc", "score": float("nan")},
        trial=2,
    )
    events.progress("training", 0.6, epoch=3, epochs=10)
    first, trial, bare = (json.loads(line) for line in out.getvalue().splitlines())
    assert first == {
        "type": "progress",
        "stage": "evaluating",
        "progress": 0.5,
        "key": "running_model_on_images",
        "params": {"images": 12},
        "message": "running the model on 12 images",
    }
    assert trial["params"]["score"] == "—" and trial["message"] == "trial 2: svm, cross-validated auc —"
    assert "key" not in bare and "message" not in bare
    for event in (first, trial, bare):
        assert contract.errors("event", event) == []
    assert contract.errors("event", {**first, "key": "Not A Key"}) != []


def test_the_english_is_the_catalog_sentence_with_every_value_filled():
    catalog = json.loads((PACKAGE.parents[1] / "locales" / "en" / "progress.json").read_text(encoding="utf-8"))
    for key, names in events.progress_keys().items():
        text = events.progress_english(key, {n: f"<{n}>" for n in names})
        assert text.startswith(catalog["pipeline"][key].split("{{")[0]) and "{{" not in text, key
