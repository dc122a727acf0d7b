"""Writes manifest.json (and report.json) only after they validate against the contract."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from pathlib import Path

from .. import __version__
from .contract import errors
from .spec import JobSpec


def _write_json_atomic(path: Path, document: object) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(document, indent=2, allow_nan=False))
    os.replace(tmp, path)


def provenance(spec: JobSpec | dict, time_taken_s: float, device: str, framework: dict[str, str]) -> dict:
    spec = JobSpec.of(spec)
    split = spec.split.parts()
    return {
        "dataset_sha256": spec.data.sha256,
        "seed": spec.seed,
        "split_counts": {k: len(split[k]) for k in ("train", "val", "test")},
        "code_version": f"builder_pipelines {__version__}",
        "time_taken_s": round(float(time_taken_s), 3),
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(),
        "device": device,
        "framework": {"python": platform.python_version(), **framework},
    }


def write_manifest(out_dir: str, manifest: dict) -> str:
    """Validates, then writes ``manifest.json``; returns its path relative to out_dir."""
    problems = errors("manifest", manifest)
    if problems:
        raise ValueError("manifest does not satisfy the contract: " + "; ".join(problems))
    model = Path(out_dir) / manifest["model_file"]
    if not model.is_file():
        raise ValueError(f"manifest names {manifest['model_file']} but it was not written")
    _write_json_atomic(Path(out_dir) / "manifest.json", manifest)
    return "manifest.json"


def write_report(out_dir: str, report: dict) -> str:
    _write_json_atomic(Path(out_dir) / "report.json", report)
    return "report.json"
