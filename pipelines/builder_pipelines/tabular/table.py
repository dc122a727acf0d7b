"""Turns the normalised CSV into float feature matrices, labels and patient groups.

Categorical columns (any value that is not a number) get stable integer codes: the sorted distinct
values of the whole table -> 0..n-1. Serving receives those codes as floats, so the codes, not the
strings, are what the ONNX model sees; the manifest lists them (input.columns[i].codes).

A column of numbers in which some entries are a missing-value marker ("NA", "?", ...; MISSING_MARKERS) is
numeric with missing values: the markers become NaN, which every model family and its ONNX graph take
(LightGBM and CatBoost natively, the linear model after median imputation with a gap flag, the forests as
a value below all others; models.py), and serving accepts null there (manifest input.columns[i].missing). Read as categorical, the
numbers would become unordered codes and the model would lose what the column says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..common.data import Table, require_columns
from ..common.errors import DataError

# Written for "no value" in clinical exports (R and pandas write NA / NaN, UCI files ?, SPSS-style exports .);
# compared case-insensitively. Kept in step with MISSING_MARKERS in src/datasets/csv.ts.
MISSING_MARKERS = frozenset({"na", "n/a", "nan", "?", "null", "none", "missing", ".", "-"})


def is_missing_marker(value: str) -> bool:
    return value.strip().lower() in MISSING_MARKERS


@dataclass
class Column:
    name: str
    type: str  # "numeric" | "categorical"
    codes: dict[str, int] = field(default_factory=dict)
    min: float | None = None
    max: float | None = None
    missing: bool = False  # numeric only: the training table had missing-value markers here (NaN to the model)
    # What a Retrospective study puts where new data holds a value the model never saw (an unknown category, a
    # marker in a column trained without gaps): the training rows' median, or their most frequent category.
    fill: float | str | None = None

    def manifest(self) -> dict:
        out = {"name": self.name, "type": self.type}
        if self.type == "categorical":
            out["codes"] = dict(self.codes)
        else:
            out.update({"min": self.min, "max": self.max})
            if self.missing:
                out["missing"] = True
        return out if self.fill is None else {**out, "fill": self.fill}

    @staticmethod
    def from_manifest(entry: dict) -> Column:
        return Column(
            entry["name"],
            entry["type"],
            dict(entry.get("codes") or {}),
            entry.get("min"),
            entry.get("max"),
            bool(entry.get("missing")),
            entry.get("fill"),
        )


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
                raise DataError("empty_value", row=i + 1, column=name)


def infer_columns(table: Table, data_cols: list[str]) -> list[Column]:
    """Numeric when every value parses as a finite number or is a missing-value marker (with at least one number),
    otherwise categorical."""
    if not data_cols:
        raise DataError("no_feature_columns")
    require_columns(table, data_cols)
    _check_not_empty(table, data_cols)
    out = []
    for name in data_cols:
        values = [r[name].strip() for r in table.rows]
        nums = [_as_float(v) for v in values]
        present = [n for n in nums if n is not None]
        n_missing = sum(1 for v, n in zip(values, nums) if n is None and is_missing_marker(v))
        if present and len(present) + n_missing == len(values):
            out.append(Column(name, "numeric", min=float(min(present)), max=float(max(present)), missing=n_missing > 0))
        else:
            distinct = sorted(set(values))
            out.append(Column(name, "categorical", codes={v: i for i, v in enumerate(distinct)}))
    return out


def set_fills(columns: list[Column], X: np.ndarray) -> None:
    """Sets each column's ``fill`` from the encoded training rows ``X``: the median of the numbers, or the most
    frequent category (the lowest code on a tie)."""
    by_code = [{v: k for k, v in c.codes.items()} for c in columns]
    for j, col in enumerate(columns):
        values = X[:, j][~np.isnan(X[:, j])]
        if not len(values):
            continue
        if col.type == "categorical":
            codes, counts = np.unique(values.astype(np.int64), return_counts=True)
            col.fill = by_code[j][int(codes[np.argmax(counts)])]
        else:
            # The shortest decimal that is the same float32 (2.611, not 2.6110000610351562): the graph takes float32.
            col.fill = float(np.format_float_positional(np.float32(np.median(values)), unique=True))


@dataclass
class Unseen:
    """Values a model never saw in its training data, per column: how many rows, a few examples."""

    rows: int = 0
    examples: list[str] = field(default_factory=list)


def _unseen_value(col: Column, raw: str, unseen: dict[str, Unseen] | None) -> float | None:
    """The fill for ``raw`` when unseen values may be filled (``unseen`` given, the column has a fill), counted."""
    if unseen is None or col.fill is None:
        return None
    seen = unseen.setdefault(col.name, Unseen())
    seen.rows += 1
    if raw not in seen.examples and len(seen.examples) < 5:
        seen.examples.append(raw)
    return float(col.codes[col.fill]) if col.type == "categorical" else float(col.fill)


def encode_features(
    table: Table, columns: list[Column], rows: list[int] | None = None, unseen: dict[str, Unseen] | None = None
) -> np.ndarray:
    """Float matrix [N, F] in column order (NaN where a column that allows it has a missing-value marker); an unknown
    category or a non-number is a DataError.

    With ``unseen`` (a Retrospective study), an unknown category, and a missing-value marker in a column trained
    without gaps, take the column's ``fill`` instead and are counted in ``unseen``; text that is neither a number
    nor a marker in a numeric column stays an error.
    """
    rows = list(range(len(table.rows))) if rows is None else rows
    _check_not_empty(table, [c.name for c in columns])
    X = np.empty((len(rows), len(columns)), dtype=np.float64)
    for j, col in enumerate(columns):
        for i, r in enumerate(rows):
            raw = table.rows[r][col.name].strip()
            if col.type == "categorical":
                if raw in col.codes:
                    X[i, j] = col.codes[raw]
                elif (filled := _unseen_value(col, raw, unseen)) is not None:
                    X[i, j] = filled
                else:
                    # Neither the known values (the training table's) nor this one (the new table's) is named: either
                    # may identify a patient, and this message becomes a failure reason the chat repeats (issue 42).
                    raise DataError("unknown_category", row=r + 1, column=col.name, known=len(col.codes))
            else:
                v = _as_float(raw)
                if v is None and col.missing and is_missing_marker(raw):
                    v = math.nan
                elif v is None and is_missing_marker(raw) and (filled := _unseen_value(col, raw, unseen)) is not None:
                    v = filled
                elif v is None and is_missing_marker(raw):
                    # A marker is one of a fixed few words (NA, ?), not data: naming it says what to fix.
                    raise DataError("missing_value_not_allowed", row=r + 1, column=col.name, value=raw)
                elif v is None:
                    # Other text is data (a name in a shifted column): the row and column find it, the failure
                    # reason (which the chat repeats, issue 42) does not carry it.
                    raise DataError("not_a_number", row=r + 1, column=col.name)
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
        raise DataError("binary_needs_two_classes", column=label_col, found=len(codes), values=", ".join(codes[:10]))
    if problem == "multiclass" and len(codes) < 2:
        raise DataError("needs_two_classes", column=label_col, found=len(codes))
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
                raise DataError(
                    "regression_target_not_number", row=r + 1, column=label_col, value=table.rows[r][label_col]
                )
            out.append(v)
        return np.asarray(out, dtype=np.float64)
    index = {c["code"]: c["index"] for c in classes}
    out = []
    for r in rows:
        code = table.rows[r][label_col].strip()
        if code not in index:
            raise DataError("label_not_a_class", row=r + 1, column=label_col, value=code, classes=", ".join(index))
        out.append(index[code])
    return np.asarray(out, dtype=np.int64)


def one_hot(y: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(y), k), dtype=int)
    out[np.arange(len(y)), y] = 1
    return out
