"""Clinical tables with real missing values, written as clinical exports write them ("NA", "?"), for the pipeline's
missing-value path (pipelines/builder_pipelines/tabular/table.py). Asked for by name in run.py.

- ``pima_na``: Pima (768 women) with the zeros that stand for "not measured" (``../shared/datasets/README.md``) in
  glucose, blood pressure, skin thickness, insulin and BMI written as NA: 652 missing entries, insulin alone 374.
- ``flchain_na``: ``flchain`` (tables_sksurv.py, the same 4,000 people) with creatinine kept, "?" where the ARFF
  file has no value (1,350 of the 7,874; about 17% of the sample).
- ``lung``: the NCCTG lung cancer trial (228 patients, lifelines' ``lung.csv``), outcome death during follow-up
  (``status``); follow-up time is left out (it decides the outcome). Sparse gaps, written NA: one in ``inst``,
  ``ph_ecog`` and ``ph_karno``, three in ``pat_karno``, 14 in ``wt_loss``, 47 in ``meal_cal``. With so few, an
  80/20 split often puts a column's only NA in the held-out part: see retrospective.py.

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


LUNG_COLS = ["inst", "age", "sex", "ph_ecog", "ph_karno", "pat_karno", "meal_cal", "wt_loss"]


def load_lung(tmp: Path, lifelines_file):
    src = lifelines_file("lung.csv")
    if src is None:
        return None
    rows = list(csv.DictReader(open(src, newline="")))
    out = tmp / "lung.csv"
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "status"] + LUNG_COLS)
        for i, r in enumerate(rows):
            values = [r[c.replace("_", ".")] for c in LUNG_COLS]
            w.writerow([f"L{i:03d}", r["status"]] + [v if v != "" else "NA" for v in values])
    return out, LUNG_COLS, "status"
