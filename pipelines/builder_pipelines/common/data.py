"""Reads the normalised table the datasets stage wrote and applies the patient split."""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass

from .errors import DataError


@dataclass
class Table:
    header: list[str]
    rows: list[dict[str, str]]

    def column(self, name: str) -> list[str]:
        return [r[name] for r in self.rows]


def read_table(path: str) -> Table:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        rows = [dict(r) for r in reader]
    if not rows:
        raise DataError("table_no_rows", path=os.path.basename(path))
    return Table(header, rows)


def require_columns(table: Table, names: list[str]) -> None:
    missing = [n for n in names if n not in table.header]
    if missing:
        raise DataError("columns_missing", columns=", ".join(missing), header=", ".join(table.header))


def split_indices(table: Table, id_col: str, split: dict) -> dict[str, list[int]]:
    """Row indices for train/val/test from the patient lists; rows of unknown patients go nowhere."""
    where = {}
    for part in ("train", "val", "test"):
        for pid in split[part]:
            if pid in where:
                raise DataError("patient_in_two_parts", patient=pid)
            where[pid] = part
    out: dict[str, list[int]] = {"train": [], "val": [], "test": []}
    for i, row in enumerate(table.rows):
        part = where.get(row[id_col])
        if part:
            out[part].append(i)
    return out
