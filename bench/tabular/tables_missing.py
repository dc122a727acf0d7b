"""Clinical tables with real missing values, written as clinical exports write them ("NA", "?"), for the pipeline's
missing-value path (pipelines/builder_pipelines/tabular/table.py). Asked for by name in run.py.

- ``pima_na``: Pima (768 women) with the zeros that stand for "not measured" (``../shared/datasets/README.md``) in
  glucose, blood pressure, skin thickness, insulin and BMI written as NA: 652 missing entries, insulin alone 374.
- ``flchain_na``: ``flchain`` (tables_sksurv.py, the same 4,000 people) with creatinine kept, "?" where the ARFF
  file has no value (1,350 of the 7,874; about 17% of the sample).

Before missing-value markers were read as gaps, such a column was a categorical one (its numbers as unordered
codes), and these tables could only be used with the columns dropped or the zeros kept as numbers.
"""

from __future__ import annotations

import csv
from pathlib import Path

import tables_sksurv

PIMA_MISSING_AS_ZERO = ("glucose", "blood_pressure", "skin_thickness", "insulin", "bmi")


def load_pima_na(tmp: Path, pima_loader):
    got = pima_loader(tmp)
    src, cols, label = got
    rows = list(csv.DictReader(open(src, newline="")))
    out = tmp / "pima_na.csv"
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("NA" if k in PIMA_MISSING_AS_ZERO and float(v) == 0 else v) for k, v in r.items()})
    return out, cols, label


def load_flchain_na(tmp: Path):
    return tables_sksurv.load_flchain(tmp, extra_cols=("creatinine",), name="flchain_na")
