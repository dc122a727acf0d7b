#!/usr/bin/env bash
# One flush of 50,000 records (bench/serve/monitoring-flush.ts, 3 rounds each) on Postgres, two trees exported from
# git, alternated before, after, after, before. Usage: flock /tmp/builder-heavy.lock bench/serve/monitoring-flush-ab.sh BEFORE_REV AFTER_REV
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
BEFORE_REV=${1:?before rev}; AFTER_REV=${2:?after rev}
B=$(mktemp -d /tmp/mr-flush-before-XXXX); A=$(mktemp -d /tmp/mr-flush-after-XXXX)
trap 'rm -rf "$B" "$A"' EXIT
for pair in "$B:$BEFORE_REV" "$A:$AFTER_REV"; do
  d=${pair%%:*}; git -C "$HERE" archive "${pair#*:}" | tar -x -C "$d"
  ln -s "$(readlink -f "$HERE/node_modules")" "$d/node_modules"; ln -s "$(readlink -f "$HERE/pipelines/.venv")" "$d/pipelines/.venv"
done
for arm in "$B:before" "$A:after" "$A:after" "$B:before"; do
  echo "== ${arm#*:}"; (cd "${arm%%:*}" && npx tsx bench/serve/monitoring-flush.ts --n 50000 --pg postgres://postgres@127.0.0.1:5432/postgres 2>&1 | grep round)
done
