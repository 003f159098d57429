#!/usr/bin/env bash
# Device call 7: the committed code (a copy nobody on its device reads lands after the device's last
# tiles; launch sends apart per landing phase): the eight two-device rows, f32 then f16, 40 rounds, with
# nvidia-smi sampling the clocks and vmstat the host (steal time: are the host's vCPUs taken away?);
# then the peers (cuBLAS, NCCL, pinned copies) in the same call.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 50 >/tmp/clocks.csv 2>/dev/null &
vmstat -t 1 >"$OUT/vmstat.txt" 2>&1 &
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 40 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$(date +%H%M%S).md" 2>/dev/null; }
suite 160 --dtype f32
suite 90 --dtype f16 --only ag-gemm,gemm-rs
kill %1 %2 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
step 100 env PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=40 bash benchmarks/peers/run_all.sh "$OUT"
