#!/usr/bin/env bash
# Device call 8 of 2026-11-25 (H100, nvidia-h100-x1): the f16 GEMM workloads on their new tensor-core tile
# (128x256x16, tiles proved inside without an edge path) with Dawn's defaults (bounds checks on), the
# irregular GEMM shape, and cuBLAS in the same call. Pack: pnpm bench:build && bash ../shared/device/pack.sh
# dist/matmul.mjs dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
step 270 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --dtype f16 --only gemm-rs,ag-gemm --ranks 2,4,8 --out /tmp/s
step 50 node $app/matmul.mjs --tiles 128x256x16,128x128x64:4x2 --sizes 4000x3000x1000 --out /tmp/m
step 45 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 8192 --dtypes f16
grep '"peer": *"cublas"' "$log" >"$OUT/cublas.jsonl" || true
kill %1 2>/dev/null
cp /tmp/s/suite.jsonl "$OUT/suite.jsonl" 2>/dev/null
cp /tmp/m/matmul-tiles.json "$OUT/matmul-tiles.json" 2>/dev/null
