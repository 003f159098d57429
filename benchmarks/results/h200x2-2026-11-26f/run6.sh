#!/usr/bin/env bash
# Device call 6: the committed copier with anchored host copies (0def4c9), on what call 5 left out,
# and the copier's flows again now that no collection lands in the runs (the sweeps that set the 4 x 4
# default were measured with them), with the peers in the same call.
#   1. f16 ag-gemm and gemm-rs, default copier (20 rounds);
#   2. the peers (cuBLAS, pinned host copies, NCCL; 90 s budget);
#   3. f32 ag-gemm, gemm-rs, a2a-gemm (20 rounds): default; --beside-compute 4,8 (a plan cut for
#      overlap reads all of a 32 MiB transfer back before the first phase); --beside-compute 2,8;
#   4. f16 ag-gemm and gemm-rs with --beside-compute 4,8.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
suite() { local arm=$1; shift; rm -rf /tmp/s; step 85 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite default --dtype f16 --only ag-gemm,gemm-rs
step 100 env PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=30 bash benchmarks/peers/run_all.sh "$OUT"
gemms="--dtype f32 --only ag-gemm,gemm-rs,a2a-gemm"
suite default $gemms
suite beside-4x8 $gemms --beside-compute 4,8
suite beside-2x8 $gemms --beside-compute 2,8
suite beside-4x8 --dtype f16 --only ag-gemm,gemm-rs --beside-compute 4,8
