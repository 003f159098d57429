#!/usr/bin/env bash
# Device call 9 of 2026-11-25 (H100, nvidia-h100-x1), the last of the session's device time: the emitted
# f16 GEMM after edge tiles of word-aligned tensors went by masked words (irregular shape), at Dawn's
# defaults, and the f16 GEMM workloads at 2 and 8 ranks on the final code. Pack: pnpm bench:build &&
# bash ../shared/device/pack.sh dist/matmul.mjs dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
step 60 node $app/matmul.mjs --tiles 128x128x64:4x2,128x256x16 --sizes 4000x3000x1000,4096 --out /tmp/m
step 150 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --dtype f16 --only gemm-rs,ag-gemm --ranks 8 --out /tmp/s
cp /tmp/m/matmul-tiles.json "$OUT/matmul-tiles.json" 2>/dev/null
cp /tmp/s/suite.jsonl "$OUT/suite.jsonl" 2>/dev/null
