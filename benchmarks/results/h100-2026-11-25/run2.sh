#!/usr/bin/env bash
# The second device call of 2026-11-25 (H100): what call 1 (run.sh) ran out of time for. Same pack.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
step 110 node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 8192,4000x3000x1000 --out /tmp/after
cp /tmp/after/matmul-tiles.json "$OUT/matmul-tiles.json" 2>/dev/null
step 110 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f16 --only ag-gemm --one-device --ranks 4,8 --out /tmp/suite
cp /tmp/suite/suite.jsonl "$OUT/suite-ag-gemm.jsonl" 2>/dev/null
step 60 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f32 --only gemv-ar --one-device --ranks 4 --out /tmp/suite-gemv
cp /tmp/suite-gemv/suite.jsonl "$OUT/suite-gemv-ar.jsonl" 2>/dev/null
kill %1 2>/dev/null
