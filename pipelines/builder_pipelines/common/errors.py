"""The pipeline's two refusals. A DataError is what a person reads: a key of pipelines/contract/data-problems.json
and the values its message names, never a sentence; the TypeScript side says it in the reader's language from the
one catalog (locales/<lng>/problems.json, ``pipeline.<key>``). Its English text is kept for the job log and for
readers of old reports, worded from the same English catalog."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from .contract import CONTRACT_DIR

# pipelines/builder_pipelines/common -> the repository root, which holds locales/ (the image copies the whole tree).
LOCALES_DIR = Path(__file__).resolve().parents[3] / "locales"


# A part of the split with no rows: one key per part, so each reads as a whole sentence in every language.
PART_EMPTY = {"train": "train_part_empty", "val": "val_part_empty", "test": "test_part_empty"}


class SpecError(ValueError):
    """The job spec does not satisfy pipelines/contract/job-spec.schema.json."""


@cache
def problem_keys() -> dict[str, list[str]]:
    """Every data problem's key -> the names of the values its message takes (the contract's list)."""
    return json.loads((CONTRACT_DIR / "data-problems.json").read_text(encoding="utf-8"))["problems"]


@cache
def _pipeline_words(namespace: str) -> dict[str, str]:
    """The English catalog's ``pipeline`` section of locales/en/<namespace>.json (problems, progress)."""
    try:
        return json.loads((LOCALES_DIR / "en" / f"{namespace}.json").read_text(encoding="utf-8"))["pipeline"]
    except (OSError, ValueError, KeyError):  # a pipeline run outside the repository still says something
        return {}


def english_words(namespace: str, key: str, params: dict[str, str | int | float]) -> str:
    """The English words of a pipeline ``key`` in ``namespace`` with its values, for logs and English readers (the
    reader's own language is chosen elsewhere, from the key)."""
    message = _pipeline_words(namespace).get(key)
    if message is None:
        return f"{key}: " + ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    for name, value in params.items():
        message = message.replace("{{" + name + "}}", str(value))
    return message


def english(key: str, params: dict[str, str | int | float]) -> str:
    """The English message of a data problem ``key`` with its values."""
    return english_words("problems", key, params)


class DataError(ValueError):
    """The data cannot be trained on: ``key`` names the problem, ``params`` what and where (row, column, value...).

    ``detail`` is a library's own words (a decoder's error), kept for the job log only."""

    def __init__(self, key: str, detail: str | None = None, **params: str | int | float) -> None:
        names = problem_keys().get(key)
        if names is None:
            raise KeyError(f"DataError {key!r} is not in pipelines/contract/data-problems.json")
        if sorted(params) != sorted(names):
            raise TypeError(f"DataError {key!r} takes {names}, was given {sorted(params)}")
        self.key = key
        self.params = params
        self.detail = detail
        super().__init__(english(key, params))
