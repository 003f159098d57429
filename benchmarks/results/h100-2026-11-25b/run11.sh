#!/usr/bin/env bash
# Device call 11 (2026-11-25 evening, H100, nvidia-h100-x1): the one-device suite rows call 10 did not
# reach, on the four-element chunk moves; then the f32 SIMT GEMM tile by tile at 4096³ (each timed
# kernel checked on sampled rows) beside cuBLAS f32 (TF32 off) in the same call.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/matmul.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
# suite LIMIT ARGS...: one suite step; its rows appended to $OUT/suite.jsonl.
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite 80 --dtype f16 --only ag-gemm --ranks 8
suite 110 --dtype f16 --only gemm-rs,ag-gemm --ranks 2
suite 200 --dtype f32 --only gemm-rs,ag-gemm --ranks 2,4,8
step 100 node $app/matmul.mjs --dtype f32 --tiles 128x128x8,128x128x16,128x128x32,128x64x16,64x128x16 --sizes 4096 --out /tmp/m
cp /tmp/m/matmul-tiles.json "$OUT/matmul-f32-tiles.json" 2>/dev/null
step 45 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 --dtypes f32
kill %1 2>/dev/null
