#!/usr/bin/env bash
# Installs toxiproxy-server (Shopify, pinned) into .tools/bin (gitignored): the user-space TCP
# proxy the local cluster puts between regions of a geo topology (deploy/topologies/geo-*.json)
# to add each region pair's round-trip time, since this kernel has no netem.
# Idempotent: a binary already at the pinned version is left alone, so a second run is instant.
# Needs Go and the Go module proxy the first time (~30 s to compile). The geo tests and
# `npm run bench -- geo` run it before they start a cluster. MONSOON_TOOLS_DIR overrides the folder.
# Prints the binary's path on stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${MONSOON_TOOLS_DIR:-$root/.tools}"
version="v2.5.0"
module="github.com/Shopify/toxiproxy/v2"
binary="$tools/bin/toxiproxy-server"

say() { printf 'toxiproxy: %s\n' "$*" >&2; }

mkdir -p "$tools/bin"
# One installer at a time (two test runs may start together); a lock of its own, so it never
# waits for scripts/deploy-tools.sh.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$tools/.toxiproxy.lock"
  flock 9
fi

# Built with its version stamped in, so `-version` says which one it is.
if [[ "$("$binary" -version 2>/dev/null || true)" == "toxiproxy-server version $version" ]]; then
  say "toxiproxy-server $version: present"
else
  command -v go >/dev/null 2>&1 || { say "go not found: needed to install toxiproxy-server $version"; exit 1; }
  say "toxiproxy-server $version: go install (compiles; half a minute the first time)…"
  # The module's server command is the package cmd/server: installed as `server`, renamed.
  build="$(mktemp -d "$tools/.toxiproxy-build.XXXXXX")"
  trap 'rm -rf "$build"' EXIT
  GOBIN="$build" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
    go install -ldflags "-X $module.Version=$version" "$module/cmd/server@$version"
  mv -f "$build/server" "$binary"
  say "toxiproxy-server $version: installed"
fi
echo "$binary"
