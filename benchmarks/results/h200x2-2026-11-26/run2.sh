#!/usr/bin/env bash
# Device call 2 (nvidia-h100-x2): the suite's two-device rows with the bench timing its parts in
# settled blocks, in turn (each of sequential, decomposed, fused, communication alone and compute
# alone runs at least a second before each of its two timed blocks of 10), every variant checked at
# the timed shape; SM clocks sampled every 100 ms beside it.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >/tmp/clocks.csv 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 170 --dtype f16 --only ag-gemm,gemm-rs
suite 390 --dtype f32
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
