#!/usr/bin/env bash
# Device call 8 (2026-11-25 night, H100, nvidia-h100-x1): ag-gemm's f16 tile 128x256x32
# (.devpack/app/suite.mjs) against 128x128x64 (.devpack/app/before/, commit cde8729), the suite's f16
# ag-gemm rows at 2, 4 and 8 ranks on one device, every variant checked at the timed shape.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs /tmp/pk/before
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
# suite LIMIT BUNDLE RESULT-FILE ARGS...: one suite step; its rows appended to $OUT/RESULT-FILE.
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite 250 $app/suite.mjs suite.jsonl --dtype f16 --only ag-gemm --ranks 2,4,8
suite 250 $app/before/suite.mjs suite-before.jsonl --dtype f16 --only ag-gemm --ranks 2,4,8
kill %1 2>/dev/null
