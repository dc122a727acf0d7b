from __future__ import annotations

import json

from .contract import errors
from .errors import SpecError


def load_spec(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise SpecError(f"cannot read {path}: {exc}") from exc
    problems = errors("job-spec", spec)
    if problems:
        raise SpecError("; ".join(problems))
    return spec
