"""Multi-class and regression tasks on real clinical tables, for run_problems.py (the binary benchmark's tables are
in run.py, tables_sksurv.py, tables_missing.py and tables_r.py).

Each loader writes the data-task layout (id, label, features) and returns (path, feature columns, label column,
problem), or None when the bench-only package that ships the data is absent (bench/tabular/requirements.txt).
Added on 2026-11-26; no rule of the pipeline was chosen on them.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from tables_r import PBC_COLS, r_table


def _with(problem: str, loaded):
    return None if loaded is None else (*loaded, problem)


def load_pbc_stage(tmp: Path):
    """Mayo PBC (survival::pbc): histologic stage 1-4 from the baseline labs and signs (412 patients with a stage;
    4 classes, 21 / 92 / 155 / 144), the biopsy's answer from blood tests. Outcome and follow-up dropped."""
    return _with(
        "multiclass",
        r_table(tmp, "pbc_stage", "survival/pbc.csv", "stage", PBC_COLS, keep=lambda r: r["stage"] != "NA"),
    )


def load_pbc_status(tmp: Path):
    """Mayo PBC: status at the end of follow-up, 3 classes (censored 232, transplant 25, dead 161), from the same
    columns and the stage. Follow-up time dropped."""
    return _with("multiclass", r_table(tmp, "pbc_status", "survival/pbc.csv", "status", PBC_COLS + ["stage"]))


def load_melanoma_status(tmp: Path):
    """Malignant melanoma after surgery (MASS::Melanoma, 205 patients): died of melanoma / alive / died of other
    causes (57 / 134 / 14) from sex, age, year of operation, tumour thickness and ulceration. Time dropped."""
    return _with(
        "multiclass",
        r_table(tmp, "melanoma_status", "MASS/Melanoma.csv", "status", ["sex", "age", "year", "thickness", "ulcer"]),
    )


def load_birthwt_grams(tmp: Path):
    """MASS::birthwt (189 births): birth weight in grams from the mother's age, weight, race, smoking and history
    (the binary `low` is derived from it and dropped)."""
    return _with(
        "regression",
        r_table(
            tmp, "birthwt_grams", "MASS/birthwt.csv", "bwt", ["age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv"]
        ),
    )


def load_liver_alt(tmp: Path):
    """Drug-induced liver injury trial (texmex::liver, 606 patients, 4 doses): log ALT after treatment from the
    four baseline liver tests and the dose. ALT is skewed, so its log is the target, as an analyst would fit it."""
    return _with(
        "regression",
        r_table(
            tmp,
            "liver_alt",
            "texmex/liver.csv",
            lambda r: f"{math.log(float(r['ALT.M'])):.6f}",
            ["ALP.B", "ALT.B", "AST.B", "TBL.B", "dose"],
        ),
    )


def load_diabetes_progression(tmp: Path):
    """scikit-learn's diabetes table (Efron et al. 2004; 442 patients, shipped inside scikit-learn): disease
    progression one year after baseline from age, sex, BMI, blood pressure and six serum measurements (unscaled)."""
    from sklearn.datasets import load_diabetes

    d = load_diabetes(scaled=False)
    cols = ["age", "sex", "bmi", "bp", "tc", "ldl", "hdl", "tch", "ltg", "glu"]
    out = tmp / "diabetes_progression.csv"
    with open(out, "w", newline="") as w:
        wr = csv.writer(w)
        wr.writerow(["id", "outcome"] + cols)
        for i, (x, y) in enumerate(zip(d.data, d.target)):
            wr.writerow([f"d{i + 1}", f"{y:g}"] + [f"{v:g}" for v in x])
    return out, cols, "outcome", "regression"


LOADERS = {
    "pbc_stage": load_pbc_stage,
    "pbc_status": load_pbc_status,
    "melanoma_status": load_melanoma_status,
    "birthwt_grams": load_birthwt_grams,
    "liver_alt": load_liver_alt,
    "diabetes_progression": load_diabetes_progression,
}
