#!/usr/bin/env bash
# Device call 4: in call 3 the sequential variant of the f32 GEMM rows ran 2-4 ms slower next to the
# new flow (one copier serves every variant of a row). Is it the new code or the beside-compute flow
# sharing the copier? Once each, f32 ag-gemm and gemm-rs on two devices, 20 rounds:
#   before     suite-before.mjs: b44cb44's peer-copy.ts and staging-pool.ts
#   flow       suite.mjs (beside compute: 2 in flight, 8 read back ahead)
#   flow-4x4   suite.mjs --beside-compute 4,4 (the new code, every transfer in the old flow)
# then the peers (cuBLAS, NCCL, pinned copies), as much as the budget leaves.
# Pack: as call 3.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
suite() { local arm=$1 bundle=$2; shift 2; rm -rf /tmp/s; step 60 node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --dtype f32 --only ag-gemm,gemm-rs --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite before suite-before.mjs
suite flow suite.mjs
suite flow-4x4 suite.mjs --beside-compute 4,4
step 80 env PEERS_BUDGET_S=70 PEERS_TIMEOUT_S=30 bash benchmarks/peers/run_all.sh "$OUT"
