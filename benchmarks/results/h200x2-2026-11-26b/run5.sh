#!/usr/bin/env bash
# Device call 5 (the budget's last minutes): the f16 two-device rows with the native host copy again
# (call 4 cut gemm-rs off), with nvidia-smi sampling the clocks every 50 ms beside it.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 50 >/tmp/clocks.csv 2>/dev/null &
rm -rf /tmp/s; step 130 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s --dtype f16 --only ag-gemm,gemm-rs; cp /tmp/s/suite.jsonl "$OUT/suite.jsonl"
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
