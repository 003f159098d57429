#!/usr/bin/env bash
# Device call 14 (2026-11-25 evening, H100, nvidia-h100-x1): the ag-gemm rows that ran slower in call
# 13 than in call 11, with the grouped waits (.devpack/app/suite.mjs) and without (.devpack/app/before/,
# commit bfaf9a0), alternating in one call: is it the change or the call?
# Pack: as run13.sh.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
# suite LIMIT BUNDLE RESULT-FILE ARGS...: one suite step; its rows appended to $OUT/RESULT-FILE.
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
for round in 1 2; do
  suite 90 $app/suite.mjs suite.jsonl --dtype f16 --only ag-gemm --ranks 2,4
  suite 90 $app/before/suite.mjs suite-before.jsonl --dtype f16 --only ag-gemm --ranks 2,4
done
suite 60 $app/suite.mjs suite.jsonl --dtype f32 --only ag-gemm --ranks 4
suite 60 $app/before/suite.mjs suite-before.jsonl --dtype f32 --only ag-gemm --ranks 4
kill %1 2>/dev/null
