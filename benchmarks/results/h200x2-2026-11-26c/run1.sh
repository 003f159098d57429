#!/usr/bin/env bash
# Device call 1: the eight two-device rows timed in rounds (every part once a round, shuffled; speedups
# the medians of the rounds' ratios), native host copy, libuv's default pool; nvidia-smi samples the
# clocks every 50 ms beside it; then the peers (cuBLAS, NCCL, pinned copies) in the same call.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/peercopy.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 50 >/tmp/clocks.csv 2>/dev/null &
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 40 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$(date +%H%M%S).md" 2>/dev/null; }
suite 130 --dtype f16 --only ag-gemm,gemm-rs
suite 250 --dtype f32
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
step 100 env PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=40 bash benchmarks/peers/run_all.sh "$OUT"
