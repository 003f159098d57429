#!/usr/bin/env bash
# Sets up and builds the workspace, then runs the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
bash scripts/quickstart.sh
pnpm demo
