#!/usr/bin/env bash
# Builds the release the Ansible playbook installs on VMs (deploy/README.md):
#   data/release/monsoon-<version>-linux-x64.tar.gz = app/ (the container image's /app: built
#   JavaScript, the native addon, production dependencies) + bin/node (the image's Node).
# One recipe for both deployments: the Dockerfile. The VMs need neither Node nor a compiler,
# only x86-64 Linux with glibc 2.36 or newer (Debian 12+, Ubuntu 22.10+), like the image's.
# Needs docker (or MONSOON_DOCKER=podman). MONSOON_IMAGE names an image already built instead.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
docker="${MONSOON_DOCKER:-docker}"
version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")"
out="$root/data/release/monsoon-$version-linux-x64.tar.gz"

if [[ -z "${MONSOON_IMAGE:-}" ]]; then
  image="monsoon:$version"
  echo "build-release: building $image" >&2
  "$docker" build --platform linux/amd64 -t "$image" "$root"
else
  image="$MONSOON_IMAGE"
fi

stage="$(mktemp -d)"
container="$("$docker" create --platform linux/amd64 "$image")"
cleanup() {
  "$docker" rm -f "$container" >/dev/null || true
  rm -rf "$stage"
}
trap cleanup EXIT

mkdir -p "$stage/bin" "$(dirname "$out")"
"$docker" cp "$container:/app" "$stage/app"
"$docker" cp "$container:/usr/local/bin/node" "$stage/bin/node"
tar -C "$stage" --owner=0 --group=0 -czf "$out" app bin
echo "build-release: $out ($(du -h "$out" | cut -f1))" >&2
