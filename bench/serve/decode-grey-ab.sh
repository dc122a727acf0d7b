#!/usr/bin/env bash
# decode-grey.ts in two trees exported from git (default: before the grey-file fix, c7b7264 = 94bec32^1, and after,
# 94bec32), alternated, the order swapped every round; JSON lines appended to OUT.
#
#   flock /tmp/builder-heavy.lock bench/serve/decode-grey-ab.sh [ROUNDS=4] [OUT=/tmp/decode-grey.jsonl] [BEFORE=c7b7264] [AFTER=94bec32]
set -euo pipefail
ROUNDS=${1:-4}; OUT=${2:-/tmp/decode-grey.jsonl}; BEFORE_REV=${3:-c7b7264}; AFTER_REV=${4:-94bec32}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
B=$(mktemp -d /tmp/builder-grey-before-XXXX); A=$(mktemp -d /tmp/builder-grey-after-XXXX)
trap 'rm -rf "$B" "$A"' EXIT
for pair in "$B:$BEFORE_REV" "$A:$AFTER_REV"; do
  d=${pair%%:*}; git -C "$HERE" archive "${pair#*:}" | tar -x -C "$d"
  ln -s "$(readlink -f "$HERE/node_modules")" "$d/node_modules"
  cp "$HERE/bench/serve/decode-grey.ts" "$d/bench/serve/"
done
run() { echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2; (cd "$1" && npx tsx bench/serve/decode-grey.ts --label "$2" >>"$OUT"); }
for r in $(seq 1 "$ROUNDS"); do
  if ((r % 2)); then run "$B" before; run "$A" after; else run "$A" after; run "$B" before; fi
done
