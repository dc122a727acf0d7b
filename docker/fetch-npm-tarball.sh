#!/bin/sh
# fetch-npm-tarball.sh NAME VERSION INTEGRITY DEST: downloads a package tarball from the npm registry,
# checks it against the registry's sha512 integrity (pinned in the Dockerfile) and unpacks it into DEST.
set -eu
name="$1"; version="$2"; integrity="$3"; dest="$4"
registry="${NPM_REGISTRY:-https://registry.npmjs.org}"
tmp="$(mktemp)"
curl -fsSL --retry 3 -o "$tmp" "$registry/$name/-/$name-$version.tgz"
got="sha512-$(openssl dgst -sha512 -binary "$tmp" | base64 -w0)"
if [ "$got" != "$integrity" ]; then
  echo "$name@$version: integrity mismatch (expected $integrity, got $got)" >&2
  exit 1
fi
mkdir -p "$dest"
tar -xzf "$tmp" -C "$dest" --strip-components=1
rm -f "$tmp"
