"""Command line: ``python -m builder_pipelines {train,evaluate} --spec SPEC --out DIR``.

Exit codes: 0 = a ``result`` event was written; 2 = the spec is invalid;
3 = the data cannot be used (message on stderr and as a log event); 1 = any other failure.
"""

from __future__ import annotations

import argparse
import sys
import traceback

from .common import events
from .common.errors import DataError, SpecError
from .common.spec import JobSpec, load_spec


def _dispatch(spec: JobSpec | dict, out_dir: str) -> str:
    spec = JobSpec.of(spec)
    kind = spec.kind
    if kind == "tabular":
        from .tabular import run
    elif kind == "vision_classification":
        from .vision import run
    elif kind == "detection":
        from .detection import run
    else:  # the schema forbids this; kept so a new kind fails loudly
        raise SpecError(f"unknown kind {kind!r}")
    return run(spec, out_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="builder_pipelines")
    parser.add_argument("command", choices=["train", "evaluate"])
    parser.add_argument("--spec", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        spec = JobSpec.from_dict(load_spec(args.spec))
        if spec.command != args.command:
            raise SpecError(f"spec.command is {spec.command!r} but the command line says {args.command!r}")
        manifest_path = _dispatch(spec, args.out)
        events.result(manifest_path)
        return 0
    except SpecError as exc:
        events.log("error", f"invalid job spec: {exc}")
        print(f"invalid job spec: {exc}", file=sys.stderr)
        return 2
    except DataError as exc:
        # The key and its values are what a reader gets, in their language; the English is the job log's.
        events.log("error", str(exc), key=exc.key, params=exc.params)
        print(str(exc) + (f" ({exc.detail})" if exc.detail else ""), file=sys.stderr)
        return 3
    except Exception as exc:  # noqa: BLE001 - the process boundary reports every failure
        traceback.print_exc(file=sys.stderr)
        events.log("error", f"{type(exc).__name__}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
