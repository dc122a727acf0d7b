"""The sample table Builder offers a new team (issue 38 item 4), written from scikit-learn's bundled copy."""

import csv

from builder_pipelines.samples import main


def test_breast_cancer_wisconsin_in_the_data_task_layout(tmp_path, capsys):
    out = tmp_path / "wdbc.csv"
    assert main(["breast-cancer-wisconsin", str(out)]) == 0
    assert capsys.readouterr().out.strip() == "569"
    rows = list(csv.reader(out.open(encoding="utf-8")))
    header, body = rows[0], rows[1:]
    assert header[:3] == ["patient_id", "diagnosis", "mean_radius"] and len(header) == 32
    assert all(" " not in name for name in header)
    assert len(body) == 569 and len({r[0] for r in body}) == 569
    assert sum(r[1] == "M" for r in body) == 212 and sum(r[1] == "B" for r in body) == 357
    assert all(float(v) >= 0 for r in body for v in r[2:])


def test_an_unknown_sample_is_a_usage_error(tmp_path, capsys):
    assert main(["no-such-sample", str(tmp_path / "x.csv")]) == 2
    assert "usage" in capsys.readouterr().err
