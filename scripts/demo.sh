#!/usr/bin/env bash
# Sets up and builds the workspace, then compiles and runs the two fused kernels (AllGather + GEMM and
# GEMM + ReduceScatter, 4 ranks on one device), each checked against the CPU reference.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
bash scripts/quickstart.sh
pnpm --silent syncopate run ag-gemm
echo
pnpm --silent syncopate run gemm-rs
