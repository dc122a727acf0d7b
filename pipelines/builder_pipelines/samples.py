"""Sample datasets a new team can build from at once, written from the copies scikit-learn ships inside itself
(nothing is downloaded, and nothing is copied into Builder's repository).

``python -m builder_pipelines.samples NAME OUT.csv`` writes the table in Builder's data-task layout: column 1 a
patient id, column 2 the label, then the features. The server zips it into the user's folder (issue 38 item 4).
"""

from __future__ import annotations

import csv
import sys

from sklearn.datasets import load_breast_cancer


def breast_cancer_wisconsin(out_path: str) -> int:
    """569 fine-needle aspirates of breast masses: diagnosis M (malignant) or B (benign), 30 nucleus measurements.

    scikit-learn codes the target 0 = malignant, 1 = benign; the CSV writes the letters of the original data.
    """
    data = load_breast_cancer()
    names = [n.replace(" ", "_") for n in data.feature_names]
    with open(out_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["patient_id", "diagnosis", *names])
        for i, (x, y) in enumerate(zip(data.data, data.target)):
            w.writerow([f"WDBC-{i + 1:04d}", "M" if y == 0 else "B", *(repr(float(v)) for v in x)])
    return len(data.target)


SAMPLES = {"breast-cancer-wisconsin": breast_cancer_wisconsin}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in SAMPLES:
        print(f"usage: python -m builder_pipelines.samples {{{','.join(SAMPLES)}}} OUT.csv", file=sys.stderr)
        return 2
    rows = SAMPLES[argv[0]](argv[1])
    print(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
