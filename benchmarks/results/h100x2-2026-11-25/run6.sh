#!/usr/bin/env bash
# Device call 6 (2026-11-25, late night, nvidia-h100-x2): the suite's rows with ranks on two devices
# (one per GPU) on the final code: the chunks a device sends at one moment as one transfer per
# destination, and the three variants' sessions open at once, sharing one host copier, timed in turn
# with the communication alone as a fourth (20 rounds); every variant checked at the timed shape.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 150 --dtype f16 --only ag-gemm,gemm-rs
suite 280 --dtype f32
kill %1 2>/dev/null
