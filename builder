#!/usr/bin/env bash
# The Builder CLI: ./builder serve | migrate | users | keys | upload | worker ...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -d "$here/node_modules/tsx" ]; then
  echo "Builder's npm packages are not installed: run 'make install' (or 'make start') first." >&2
  exit 1
fi
# glibc gives each thread that allocates its own malloc arena and rarely returns their memory: sharp/libvips,
# onnxruntime and worker threads then leave ~150 MB resident after a dataset check (bench/memory: 832 MB after the
# mixed load with glibc's default, 672 MB with 2 arenas). Two arenas suit this server; set it to override.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
exec node --import tsx "$here/src/main.ts" "$@"
