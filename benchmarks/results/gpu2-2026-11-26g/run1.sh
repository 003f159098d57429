#!/usr/bin/env bash
# Device call 1 (session of 11:20 UTC, 2026-11-26):
#   1. queue-overlap-probe on each GPU: does a copy submitted beside a compute submission run while
#      it computes, and what decides it (a buffer the compute binds, the order, a read-back's map)?
#   2. the eight two-device suite rows in one invocation each (f32 six, f16 two) with the committed
#      code (04686d3), 20 rounds: one clean geometric mean;
#   3. the peers (cuBLAS, pinned host copies, NCCL).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/queue-overlap-probe.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
for d in 0 1; do step 60 sh -c "node $app/queue-overlap-probe.mjs --device $d --runs 15 >>$OUT/queue-overlap.jsonl"; done
step 60 sh -c "node $app/queue-overlap-probe.mjs --device 0 --runs 15 --burn-ms 1 --mib 16 >>$OUT/queue-overlap.jsonl"
suite() { rm -rf /tmp/s; step "$1" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s "${@:2}"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 150 --dtype f32
suite 100 --dtype f16 --only ag-gemm,gemm-rs
step 100 env PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=30 bash benchmarks/peers/run_all.sh "$OUT"
