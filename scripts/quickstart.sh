#!/usr/bin/env bash
# One-shot setup: pnpm, a WebGPU (Vulkan) adapter, the host-copy addon's toolchain, dependencies, build.
# Safe to run again.
#   SYNCOPATE_SKIP_WEBGPU=1              carry on (with a warning) if scripts/setup-webgpu.sh fails.
#   SYNCOPATE_REQUIRE_HOST_COPY_ADDON=1  stop if the addon cannot be built (scripts/test.sh sets it);
#                                        otherwise the build goes on without it.
#   SYNCOPATE_WITH_MPI=1                 also install Open MPI (scripts/setup-mpi.sh), so that the build
#                                        makes the MPI transport addon (scripts/test.sh sets it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

# The setup scripts below share one apt-get update: the first that runs it writes this file.
SYNCOPATE_APT_UPDATED=$(mktemp)
export SYNCOPATE_APT_UPDATED
trap 'rm -f "$SYNCOPATE_APT_UPDATED"' EXIT
# Where setup-toolchain.sh puts Node-API's headers when Node's own are not beside node.
source scripts/node-headers.sh

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

if [ "${SYNCOPATE_WITH_MPI:-}" = 1 ]; then bash scripts/setup-mpi.sh; fi

if ! bash scripts/setup-toolchain.sh; then
  if [ "${SYNCOPATE_REQUIRE_HOST_COPY_ADDON:-}" = 1 ]; then
    echo "quickstart: the host-copy addon cannot be built here, and SYNCOPATE_REQUIRE_HOST_COPY_ADDON=1 requires it." >&2
    exit 1
  fi
  echo "quickstart: WARNING: building without the host-copy addon; peer copies will copy on the JS thread." >&2
fi
# The headers setup-toolchain.sh fetched, for node-gyp (npm_config_nodedir).
source scripts/node-headers.sh

if [ -f pnpm-lock.yaml ]; then
  pnpm install --frozen-lockfile --reporter=silent
else
  pnpm install --reporter=silent
fi
pnpm --silent build
echo "quickstart: ready"
