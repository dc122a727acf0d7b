"""Turns the normalised CSV into float feature matrices, labels and patient groups.

Categorical columns (any value that is not a number) get stable integer codes: the sorted distinct
values of the whole table -> 0..n-1. Serving receives those codes as floats, so the codes, not the
strings, are what the ONNX model sees; the manifest lists them (input.columns[i].codes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..common.data import Table, require_columns
from ..common.errors import DataError


@dataclass
class Column:
    name: str
    type: str  # "numeric" | "categorical"
    codes: dict[str, int] = field(default_factory=dict)
    min: float | None = None
    max: float | None = None

    def manifest(self) -> dict:
        if self.type == "categorical":
            return {"name": self.name, "type": "categorical", "codes": dict(self.codes)}
        return {"name": self.name, "type": "numeric", "min": self.min, "max": self.max}

    @staticmethod
    def from_manifest(entry: dict) -> "Column":
        return Column(entry["name"], entry["type"], dict(entry.get("codes") or {}), entry.get("min"), entry.get("max"))


def _as_float(value: str) -> float | None:
    try:
        f = float(value)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def _check_not_empty(table: Table, names: list[str]) -> None:
    for i, row in enumerate(table.rows):
        for name in names:
            if (row.get(name) or "").strip() == "":
                raise DataError(f"data row {i + 1}, column {name!r}: empty value (every used column needs a value)")


def infer_columns(table: Table, data_cols: list[str]) -> list[Column]:
    """Numeric when every value parses as a finite number, otherwise categorical."""
    if not data_cols:
        raise DataError("no feature columns (data_cols is empty)")
    require_columns(table, data_cols)
    _check_not_empty(table, data_cols)
    out = []
    for name in data_cols:
        values = [r[name].strip() for r in table.rows]
        nums = [_as_float(v) for v in values]
        if all(n is not None for n in nums):
            out.append(Column(name, "numeric", min=float(min(nums)), max=float(max(nums))))
        else:
            distinct = sorted(set(values))
            out.append(Column(name, "categorical", codes={v: i for i, v in enumerate(distinct)}))
    return out


def encode_features(table: Table, columns: list[Column], rows: list[int] | None = None) -> np.ndarray:
    """Float matrix [N, F] in column order; an unknown category or a non-number is a DataError."""
    rows = list(range(len(table.rows))) if rows is None else rows
    _check_not_empty(table, [c.name for c in columns])
    X = np.empty((len(rows), len(columns)), dtype=np.float64)
    for j, col in enumerate(columns):
        for i, r in enumerate(rows):
            raw = table.rows[r][col.name].strip()
            if col.type == "categorical":
                if raw not in col.codes:
                    # The known values are the training table's (possibly identifiers): their count, never which.
                    raise DataError(
                        f"data row {r + 1}, column {col.name!r}: unknown category {raw!r}; "
                        f"the model knows {len(col.codes)} values of this column from its training data"
                    )
                X[i, j] = col.codes[raw]
            else:
                v = _as_float(raw)
                if v is None:
                    raise DataError(f"data row {r + 1}, column {col.name!r}: {raw!r} is not a number")
                X[i, j] = v
    # The ONNX graph takes float32: train and compare on the same float32 values so tree splits agree.
    return X.astype(np.float32).astype(np.float64)


def class_list(table: Table, label_col: str, class_name_col: str | None, problem: str) -> list[dict]:
    """Manifest ``classes``: sorted distinct label codes (numerically when all are numbers)."""
    require_columns(table, [label_col] + ([class_name_col] if class_name_col else []))
    _check_not_empty(table, [label_col])
    if problem == "regression":
        return [{"index": 0, "code": label_col, "name": label_col}]
    codes = sorted({r[label_col].strip() for r in table.rows})
    if all(_as_float(c) is not None for c in codes):
        codes.sort(key=float)
    if problem == "binary" and len(codes) != 2:
        raise DataError(f"binary problem needs exactly 2 classes in {label_col!r}, found {len(codes)}: {', '.join(codes[:10])}")
    if problem == "multiclass" and len(codes) < 2:
        raise DataError(f"multiclass problem needs at least 2 classes in {label_col!r}, found {len(codes)}")
    names = {}
    if class_name_col:
        for r in table.rows:
            names.setdefault(r[label_col].strip(), r[class_name_col].strip())
    return [{"index": i, "code": c, "name": names.get(c) or c} for i, c in enumerate(codes)]


def encode_labels(table: Table, label_col: str, classes: list[dict], problem: str, rows: list[int]) -> np.ndarray:
    """Class indices (int) for classification, float values for regression."""
    if problem == "regression":
        out = []
        for r in rows:
            v = _as_float(table.rows[r][label_col].strip())
            if v is None:
                raise DataError(f"data row {r + 1}, column {label_col!r}: regression target {table.rows[r][label_col]!r} is not a number")
            out.append(v)
        return np.asarray(out, dtype=np.float64)
    index = {c["code"]: c["index"] for c in classes}
    out = []
    for r in rows:
        code = table.rows[r][label_col].strip()
        if code not in index:
            raise DataError(f"data row {r + 1}, column {label_col!r}: label {code!r} is not one of the model's classes ({', '.join(index)})")
        out.append(index[code])
    return np.asarray(out, dtype=np.int64)


def one_hot(y: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(y), k), dtype=int)
    out[np.arange(len(y)), y] = 1
    return out
