"""JSON-lines events on stdout (see pipelines/contract/event.schema.json).

stdout carries only events; anything else a library prints must go to stderr,
so ``install_stdout_guard`` redirects ``sys.stdout`` and events write to the saved stream.
"""

from __future__ import annotations

import json
import math
import sys
import time
from functools import cache

from .contract import CONTRACT_DIR
from .errors import english_words

_out = sys.stdout


def install_stdout_guard() -> None:
    """Send stray prints (libraries, warnings) to stderr so stdout stays parseable."""
    global _out
    _out = sys.__stdout__
    sys.stdout = sys.stderr


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def emit(event: dict) -> None:
    # Optional fields left None are dropped; a metric's value is required and stays, as null (an undefined
    # figure such as PPV when no patient was called positive).
    line = json.dumps({k: _clean(v) for k, v in event.items() if v is not None or k == "value"}, allow_nan=False)
    _out.write(line + "\n")
    _out.flush()


@cache
def progress_keys() -> dict[str, list[str]]:
    """Every progress message's key -> the names of the values its words take (contract/progress-messages.json)."""
    return json.loads((CONTRACT_DIR / "progress-messages.json").read_text(encoding="utf-8"))["messages"]


def progress_english(key: str, params: dict[str, str | int | float]) -> str:
    """The English words of a progress key with its values, for the job log and for API readers of English."""
    return english_words("progress", key, params)


def progress(
    stage: str, fraction: float, key: str | None = None, params: dict[str, str | int | float] | None = None, **extra
) -> None:
    """``key``: what is being done, a key of contract/progress-messages.json with exactly the values it names; the
    reader's words come from the catalog (locales/<lng>/progress.json), the English rides along as ``message``."""
    event = {"type": "progress", "stage": stage, "progress": max(0.0, min(1.0, float(fraction))), **extra}
    if "message" in extra:
        raise TypeError("a progress event's words are a key and its values (key=, params=), never a sentence")
    if key is not None:
        names = progress_keys().get(key)
        if names is None:
            raise KeyError(f"progress key {key!r} is not in pipelines/contract/progress-messages.json")
        params = params or {}
        if sorted(params) != sorted(names):
            raise TypeError(f"progress key {key!r} takes {names}, was given {sorted(params)}")
        # A score that is not a number (a failed fold) is said as "—" in every language: JSON has no NaN.
        params = {k: "—" if isinstance(v, float) and not math.isfinite(v) else v for k, v in params.items()}
        event.update(key=key, params=params or None, message=progress_english(key, params))
    emit(event)


def metric(split: str, name: str, value: float | None, **extra) -> None:
    emit({"type": "metric", "split": split, "name": name, "value": None if value is None else float(value), **extra})


def log(level: str, message: str, key: str | None = None, params: dict | None = None) -> None:
    """``key`` and ``params``: a data problem's words (common/errors.py), said by the reader's language elsewhere."""
    emit({"type": "log", "level": level, "message": message, "key": key, "params": params})


def artifact(path: str, kind: str | None = None) -> None:
    emit({"type": "artifact", "path": path, "kind": kind})


def result(manifest_path: str) -> None:
    emit({"type": "result", "manifest": manifest_path})


class Eta:
    """Estimates the time left from the fraction done so far."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def eta(self, fraction: float) -> float | None:
        if fraction <= 0.01:
            return None
        return max(0.0, self.elapsed() * (1 - fraction) / fraction)
