#!/usr/bin/env bash
# Makes the Docker base image on a machine that cannot reach Docker Hub, so the one Dockerfile serves both
# a real host (which pulls debian:bookworm-slim) and an offline one (which builds the same name here).
#
#   sudo docker/local-base.sh            # installs docker.io + debootstrap if missing, starts dockerd, builds the base
#   BASE_TAG=debian:bookworm-slim        # the tag to make (must match the Dockerfile's BASE_IMAGE)
#   DEBIAN_MIRROR=http://deb.debian.org/debian   # default: the mirror apt on this machine uses
#
# Idempotent: an existing image with the tag is kept (FORCE=1 rebuilds it).
set -euo pipefail

BASE_TAG="${BASE_TAG:-debian:bookworm-slim}"
SUITE=bookworm

if [ "$(id -u)" -ne 0 ]; then
  echo "local-base.sh needs root (it installs packages, starts dockerd and runs debootstrap)" >&2
  exit 1
fi

# The mirror apt already uses: the first URIs line of the deb822 sources file, else the first deb line.
mirror_from_apt() {
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -f "$f" ]; then
    awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' "$f"
  elif [ -f /etc/apt/sources.list ]; then
    awk '/^deb / && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list
  fi
}
DEBIAN_MIRROR="${DEBIAN_MIRROR:-$(mirror_from_apt)}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "== installing docker.io and debootstrap (Debian packages)"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io debootstrap
fi

# The docker client: Debian's, not whatever else is first on PATH.
DOCKER="${DOCKER:-/usr/bin/docker}"
[ -x "$DOCKER" ] || DOCKER=docker

if ! "$DOCKER" info >/dev/null 2>&1; then
  echo "== starting dockerd in the background (log: /var/log/dockerd.log)"
  # The daemon outlives this script: it must not inherit our other open files. Under `flock LOCK make docker-test`
  # it kept the lock's descriptor, and so the lock, until it was stopped.
  (
    for fd in /proc/self/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
    exec nohup dockerd >/var/log/dockerd.log 2>&1 </dev/null
  ) &
  for _ in $(seq 1 60); do
    "$DOCKER" info >/dev/null 2>&1 && break
    sleep 1
  done
  "$DOCKER" info >/dev/null 2>&1 || { echo "dockerd did not come up; see /var/log/dockerd.log" >&2; exit 1; }
fi

if [ -z "${FORCE:-}" ] && "$DOCKER" image inspect "$BASE_TAG" >/dev/null 2>&1; then
  echo "== $BASE_TAG already present (FORCE=1 to rebuild)"
  exit 0
fi

root="$(mktemp -d /tmp/builder-base.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "== debootstrap --variant=minbase $SUITE from $DEBIAN_MIRROR"
debootstrap --variant=minbase "$SUITE" "$root" "$DEBIAN_MIRROR" >/tmp/builder-debootstrap.log 2>&1 \
  || { tail -20 /tmp/builder-debootstrap.log >&2; exit 1; }
# Like the official slim image: no apt lists or caches, and the same apt sources as this machine.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
cat >"$root/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR $SUITE main
deb $DEBIAN_MIRROR $SUITE-updates main
deb ${DEBIAN_MIRROR%/debian}/debian-security $SUITE-security main
EOF
tar -C "$root" -c . | "$DOCKER" import --change 'CMD ["bash"]' - "$BASE_TAG" >/dev/null
echo "== made $BASE_TAG: $("$DOCKER" image inspect -f '{{.Size}}' "$BASE_TAG" | awk '{printf "%.0f MB", $1/1e6}')"
