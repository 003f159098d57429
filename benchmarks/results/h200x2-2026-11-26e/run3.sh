#!/usr/bin/env bash
# Device call 3: the per-transfer flow (a plan cut for overlap moves its transfers with 2 pieces in
# flight and 8 read back ahead; a sequential plan's with the ring of 4 as before), against b44cb44's
# copier, alternating, each twice: the eight two-device rows, f32 (30 rounds) then f16 ag-gemm and
# gemm-rs (30 rounds); then the peers (cuBLAS, NCCL, pinned copies) in the same call.
#   before   suite-before.mjs: b44cb44's peer-copy.ts and staging-pool.ts
#   flow     suite.mjs (this commit's defaults)
# Pack: build suite-before.mjs (b44cb44's two files), then
#       pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/suite-before.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
suite() { local arm=$1 limit=$2 bundle=$3; shift 3; rm -rf /tmp/s; step "$limit" node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for i in 1 2; do
  suite before 110 suite-before.mjs --dtype f32
  suite before 60 suite-before.mjs --dtype f16 --only ag-gemm,gemm-rs
  suite flow 110 suite.mjs --dtype f32
  suite flow 60 suite.mjs --dtype f16 --only ag-gemm,gemm-rs
done
step 100 env PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=40 bash benchmarks/peers/run_all.sh "$OUT"
