"""The pipeline's own rendering of DICOM test files, for the TypeScript parity tests (issue 41).

    python test/helpers/dicom_reference.py FIXTURE_DIR OUT_DIR

For every file make_dicoms.py marked "ok" (and pydicom's bundled JPEG Lossless SV1 file, which no installed encoder
writes), under each rendering in RENDERINGS: OUT_DIR/<file>__<rendering>.render.u8 (builder_pipelines.common.dicom
.render, HxW or HxWx3) and OUT_DIR/<file>__<rendering>__<spec>.u8 (vision.preprocess.load_uint8, CxHxW), and
OUT_DIR/index.json listing them with shapes.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pipelines"))

from make_dicoms import pydicom_sv1_file  # noqa: E402

from builder_pipelines.common import dicom  # noqa: E402
from builder_pipelines.vision import preprocess  # noqa: E402

RENDERINGS = {
    "file": dicom.rendering(None),
    "preset_lung": dicom.rendering({"window": {"source": "preset", "name": "lung"}}),
    "explicit": dicom.rendering({"window": {"source": "explicit", "center": 120, "width": 300}}),
}
SPECS = {"grey32": (32, 32, 1), "rgb24x20": (24, 20, 3)}


def main() -> None:
    fixtures, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    files = [
        f["file"] for f in json.load(open(os.path.join(fixtures, "manifest.json")))["files"] if f["expect"] == "ok"
    ]
    sv1 = pydicom_sv1_file()
    if sv1:
        shutil.copy(sv1, os.path.join(fixtures, "sv1_rgb.dcm"))
        files.append("sv1_rgb.dcm")
    index = []
    for name in files:
        path = os.path.join(fixtures, name)
        for rname, record in RENDERINGS.items():
            arr = dicom.render(path, record)
            arr.tofile(os.path.join(out, f"{name}__{rname}.render.u8"))
            entry = {"file": name, "rendering": rname, "record": record, "shape": list(arr.shape), "specs": {}}
            for sname, (w, h, c) in SPECS.items():
                u8 = preprocess.load_uint8(path, w, h, c, "bilinear", record)
                u8.tofile(os.path.join(out, f"{name}__{rname}__{sname}.u8"))
                entry["specs"][sname] = {"width": w, "height": h, "channels": c}
            index.append(entry)
    json.dump(index, open(os.path.join(out, "index.json"), "w"))


if __name__ == "__main__":
    main()
