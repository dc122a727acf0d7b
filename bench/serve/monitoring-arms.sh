#!/usr/bin/env bash
# /predict in several trees exported from git (label=rev each), in one sitting: each round runs predict-http.ts once
# per tree, the order rotated every round (A B C, B C A, C A B, ...), each run's JSON line appended to OUT with its
# label, the load average before each run written to stderr and OUT.load. Summarise with monitoring-ab-summary.ts (the
# first label is the base of the ratios). Issue 49 item 8: no monitoring, main, a change.
#
#   flock /tmp/builder-heavy.lock bench/serve/monitoring-arms.sh ROUNDS OUT none=306d765 main=HEAD~1 change=HEAD [-- predict-http options]
set -euo pipefail
ROUNDS=${1:?rounds}; OUT=${2:?out}; shift 2
ARMS=()
while (($#)) && [[ "$1" != "--" ]]; do ARMS+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
HERE=$(cd "$(dirname "$0")/../.." && pwd)
DIRS=()
trap 'rm -rf "${DIRS[@]}"' EXIT
for arm in "${ARMS[@]}"; do
  dir=$(mktemp -d "/tmp/builder-arm-${arm%%=*}-XXXX"); DIRS+=("$dir")
  git -C "$HERE" archive "${arm#*=}" | tar -x -C "$dir"
  ln -s "$(readlink -f "$HERE/node_modules")" "$dir/node_modules"
  ln -s "$(readlink -f "$HERE/pipelines/.venv")" "$dir/pipelines/.venv"
  cp "$HERE/bench/serve/predict-http.ts" "$HERE/bench/serve/bench-server.ts" "$dir/bench/serve/"
  # A tree from before API key scopes (306d765, before monitoring) makes its bench key without them.
  [[ -f "$dir/src/auth/key-scopes.ts" ]] || sed -i '/key-scopes.js/d; s/{ scopes: ALL_KEY_SCOPES, name: "bench" }/{ name: "bench" }/' "$dir/bench/serve/bench-server.ts"
done
n=${#ARMS[@]}
for r in $(seq 0 $((ROUNDS - 1))); do
  for k in $(seq 0 $((n - 1))); do
    i=$(((r + k) % n)); label=${ARMS[$i]%%=*}
    echo "round $((r + 1)) $label $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT.load" >&2
    (cd "${DIRS[$i]}" && npx tsx bench/serve/predict-http.ts --label "$label" "$@" | tee -a /dev/stderr | tail -1 >>"$OUT")
  done
done
