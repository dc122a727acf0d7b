#!/usr/bin/env bash
# /predict before and after monitoring (issue 49 item 8), alternated in one sitting: BEFORE is main just before the
# monitoring merge (cf7d29e^1 = 306d765), AFTER main with it (default 0952657), both exported from git into /tmp and
# run with this checkout's node_modules and pipelines/.venv. Each round runs predict-http.ts once in each, the order
# swapped every round, and appends its JSON line to OUT; summarise with monitoring-ab-summary.ts.
#
#   flock /tmp/builder-heavy.lock bench/serve/monitoring-ab.sh [ROUNDS=4] [OUT=/tmp/monitoring-ab.jsonl] [BEFORE=306d765] [AFTER=0952657] [-- predict-http options]
set -euo pipefail
ROUNDS=${1:-4}
OUT=${2:-/tmp/monitoring-ab.jsonl}
BEFORE_REV=${3:-306d765}
AFTER_REV=${4:-0952657}
shift $(($# < 4 ? $# : 4)); [[ "${1:-}" == "--" ]] && shift
HERE=$(cd "$(dirname "$0")/../.." && pwd)
BEFORE=$(mktemp -d /tmp/builder-before-XXXX)
AFTER=$(mktemp -d /tmp/builder-after-XXXX)
trap 'rm -rf "$BEFORE" "$AFTER"' EXIT
# Each tree from git itself (no worktree is registered); their dependencies are this checkout's.
for pair in "$BEFORE:$BEFORE_REV" "$AFTER:$AFTER_REV"; do
  dir=${pair%%:*}
  git -C "$HERE" archive "${pair#*:}" | tar -x -C "$dir"
  ln -s "$(readlink -f "$HERE/node_modules")" "$dir/node_modules"
  ln -s "$(readlink -f "$HERE/pipelines/.venv")" "$dir/pipelines/.venv"
  cp "$HERE/bench/serve/predict-http.ts" "$HERE/bench/serve/bench-server.ts" "$dir/bench/serve/"
done
run() { (cd "$1" && npx tsx bench/serve/predict-http.ts --label "$2" "${@:3}" | tee /dev/stderr | tail -1 >>"$OUT"); }
for r in $(seq 1 "$ROUNDS"); do
  if ((r % 2)); then
    run "$BEFORE" before "$@"; run "$AFTER" after "$@"
  else
    run "$AFTER" after "$@"; run "$BEFORE" before "$@"
  fi
done
