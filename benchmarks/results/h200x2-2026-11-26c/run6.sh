#!/usr/bin/env bash
# Device call 6 (the budget's last minutes): the f32 two-device GEMM rows (32 MiB transfers: 8 pieces of
# 4 MiB, 4 read back ahead) with the committed copier (suite.mjs) against one whose largest piece is
# 8 MiB (suite-pieces8.mjs: 4 pieces, all read back before the next phase's compute), base first and last.
# Pack: pnpm build && pnpm bench:build (suite-pieces8.mjs: the same with maxPieceBytes' default 8 << 20) &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/suite-pieces8.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local bundle=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 40 --out /tmp/s "$@"; sed "s/^{/{\"bundle\":\"$bundle\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$bundle-$(date +%H%M%S).md" 2>/dev/null; }
suite suite.mjs 55 --dtype f32 --only ag-gemm,gemm-rs
suite suite-pieces8.mjs 55 --dtype f32 --only ag-gemm,gemm-rs
suite suite.mjs 55 --dtype f32 --only ag-gemm,gemm-rs
