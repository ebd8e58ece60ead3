#!/usr/bin/env bash
# System packages the native addons build against, installed where this is possible and skipped
# (with a line saying why) where it is not: the build works either way, with less in it.
#   libibverbs-dev librdmacm-dev   RDMA verbs for native/rdma (without them its verbs part is
#                                  compiled out; shared-memory reads are always built)
# Needs apt-get and root (or passwordless sudo); anything else is a skip, never a failure.
# MONSOON_SKIP_SYSTEM_SETUP=1 skips it outright.
set -uo pipefail

packages=(libibverbs-dev librdmacm-dev)
say() { printf 'setup-system: %s\n' "$*" >&2; }

if [[ "${MONSOON_SKIP_SYSTEM_SETUP:-}" == "1" ]]; then
  say "skipped (MONSOON_SKIP_SYSTEM_SETUP=1)"
  exit 0
fi
if [[ -f /usr/include/infiniband/verbs.h && -f /usr/include/rdma/rdma_cma.h ]]; then
  say "verbs headers present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get: ${packages[*]} not installed (native/rdma builds without verbs)"
  exit 0
fi
sudo=()
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    say "not root and no passwordless sudo: ${packages[*]} not installed (native/rdma builds without verbs)"
    exit 0
  fi
fi
say "installing ${packages[*]}…"
if "${sudo[@]}" apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1 ||
  { "${sudo[@]}" apt-get update >/dev/null 2>&1 &&
    "${sudo[@]}" apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1; }; then
  say "installed ${packages[*]}"
else
  say "apt-get could not install ${packages[*]} (native/rdma builds without verbs)"
fi
exit 0
