#!/usr/bin/env bash
# One-shot setup: pnpm, a WebGPU (Vulkan) adapter, dependencies, build. Safe to run again.
#   SYNCOPATE_SKIP_WEBGPU=1  carry on (with a warning) if scripts/setup-webgpu.sh fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

if ! command -v pnpm >/dev/null 2>&1; then
  echo "quickstart: installing pnpm@10 with npm"
  npm install -g --silent pnpm@10
fi

if ! bash scripts/setup-webgpu.sh; then
  if [ "${SYNCOPATE_SKIP_WEBGPU:-}" = 1 ]; then
    echo "quickstart: WARNING: WebGPU setup failed; continuing (SYNCOPATE_SKIP_WEBGPU=1). GPU tests and the demo may fail." >&2
  else
    echo "quickstart: WebGPU setup failed (set SYNCOPATE_SKIP_WEBGPU=1 to continue without it)." >&2
    exit 1
  fi
fi

if [ -f pnpm-lock.yaml ]; then
  pnpm install --frozen-lockfile --reporter=silent
else
  pnpm install --reporter=silent
fi
pnpm --silent build
echo "quickstart: ready"
