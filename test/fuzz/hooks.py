"""Schemathesis hooks for Builder's fuzz run (test/integration/api-fuzz.test.ts loads this through SCHEMATHESIS_HOOKS).

PUT /v1/files/... takes a raw application/zip body, which Schemathesis cannot generate from a JSON Schema: this
registers bytes for it, half arbitrary bytes (not a zip at all) and half real small zips with arbitrary names and
contents, so the upload route and its checks see both.
"""

import io
import zipfile

import schemathesis
from hypothesis import strategies as st


def _zip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name or "x", data)
    return out.getvalue()


_names = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=24)
_zips = st.dictionaries(_names, st.binary(max_size=256), max_size=4).map(_zip)

schemathesis.openapi.media_type("application/zip", st.one_of(st.binary(max_size=1024), _zips))


# Path parameters that name real things half of the time, so the fuzzer reaches past 404 into the handlers:
# FUZZ_EXPERIMENT_ID (an experiment with a published model) and FUZZ_USER_ID (the caller's own folder).
import os  # noqa: E402

_EXPERIMENT = os.environ.get("FUZZ_EXPERIMENT_ID")
_USER = os.environ.get("FUZZ_USER_ID")


@schemathesis.hook
def flatmap_path_parameters(ctx, params):
    if not params:
        return st.just(params)
    real = dict(params)
    if _EXPERIMENT and "experiment_id" in real:
        real["experiment_id"] = int(_EXPERIMENT)
    if _USER and "user_dir" in real:
        real["user_dir"] = _USER
    return st.sampled_from([params, real])
