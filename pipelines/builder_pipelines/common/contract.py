"""Loads the JSON Schemas in pipelines/contract: the single source of truth shared with TypeScript."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator

CONTRACT_DIR = Path(__file__).resolve().parents[2] / "contract"


@cache
def validator(name: str) -> Draft202012Validator:
    """``name`` is job-spec, manifest or event."""
    schema = json.loads((CONTRACT_DIR / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(name: str, document: object) -> list[str]:
    """Every violation as ``path: message``; empty when valid."""
    out = []
    for err in sorted(validator(name).iter_errors(document), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{where}: {err.message}")
    return out


@cache
def default_budgets() -> dict[str, float]:
    """{"fast": s, "best": s}: the training budgets the server sends when a request names none (contract/budgets.json)."""
    raw = json.loads((CONTRACT_DIR / "budgets.json").read_text())
    return {"fast": float(raw["fast"]), "best": float(raw["best"])}
