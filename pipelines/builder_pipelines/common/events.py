"""JSON-lines events on stdout (see pipelines/contract/event.schema.json).

stdout carries only events; anything else a library prints must go to stderr,
so ``install_stdout_guard`` redirects ``sys.stdout`` and events write to the saved stream.
"""

from __future__ import annotations

import json
import math
import sys
import time

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


def progress(stage: str, fraction: float, **extra) -> None:
    emit({"type": "progress", "stage": stage, "progress": max(0.0, min(1.0, float(fraction))), **extra})


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
