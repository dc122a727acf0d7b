#!/usr/bin/env bash
# The Builder CLI: ./builder serve | migrate | users | keys | upload | worker ...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -d "$here/node_modules/tsx" ]; then
  echo "Builder's npm packages are not installed: run 'make install' (or 'make start') first." >&2
  exit 1
fi
exec node --import tsx "$here/src/main.ts" "$@"
