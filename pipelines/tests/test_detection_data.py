"""Reading the normalised box table: classes, empty images, bad boxes, split by patient, unknown classes."""

import csv

import pytest
from PIL import Image

from builder_pipelines.common.errors import DataError
from builder_pipelines.detection.data import open_image, read_detection_table


def _spec(tmp_path, rows):
    for name in {r[1] for r in rows}:
        Image.new("RGB", (40, 30)).save(tmp_path / name)
    with open(tmp_path / "t.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["pid", "img", "cls", "x1", "y1", "x2", "y2"])
        w.writerows(rows)
    return {
        "data": {
            "root": str(tmp_path),
            "table": str(tmp_path / "t.csv"),
            "id_col": "pid",
            "images_col": "img",
            "label_cols": ["cls"],
        },
        "split": {"seed": 0, "train": ["a", "b"], "val": [], "test": ["c"]},
    }


def test_table_to_records(tmp_path):
    spec = _spec(
        tmp_path,
        [
            ["a", "1.png", "wbc", 1, 2, 10, 12],
            ["a", "1.png", "rbc", 5, 5, 50, 9],  # the second spills past x=40
            ["b", "2.png", "", "", "", "", ""],  # no objects
            ["c", "3.png", "rbc", 3, 3, 3, 8],  # no area: dropped
        ],
    )
    splits, classes = read_detection_table(spec)
    assert classes == ["rbc", "wbc"]
    one, two = splits["train"]
    assert one.labels.tolist() == [1, 0] and two.boxes.shape == (0, 4)
    open_image(one)
    assert (one.width, one.height) == (40, 30) and one.boxes[1].tolist() == [5, 5, 40, 9]
    assert splits["test"][0].boxes.shape == (0, 4)


def test_unknown_class_for_a_fixed_model(tmp_path):
    spec = _spec(tmp_path, [["a", "1.png", "platelet", 1, 2, 10, 12]])
    with pytest.raises(DataError, match="platelet"):
        read_detection_table(spec, classes=["rbc", "wbc"])
