#!/usr/bin/env bash
# Device call 7 of 2026-11-25 (H100, nvidia-h100-x1): the emitted f16 GEMM with tiles proved inside at
# compile time (no edge path, no store scratch), with and without Dawn's bounds checks, beside the
# hand-written kernels of the same tiles in the same call; then the f16 GEMM workloads on it.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/matmul.mjs dist/gemm-sweep.mjs dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
U=(env SYNCOPATE_DAWN_ENABLE=disable_robustness)
step 90 "${U[@]}" node $app/matmul.mjs --tiles 128x128x64:4x2,128x256x16 --sizes 8192,4096 --out /tmp/m1
step 90 node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 8192,4096 --out /tmp/m0
step 60 "${U[@]}" node $app/gemm-sweep.mjs --set occupancy --only "staged 128x128x64 pad8 sg4x2 f2x4,staged 128x256x16 pad8 sg2x4 f4x4" --size 8192 --out /tmp/sw
step 200 "${U[@]}" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --dtype f16 --only gemm-rs,ag-gemm --ranks 4,8 --out /tmp/s
kill %1 2>/dev/null
cp /tmp/m1/matmul-tiles.json "$OUT/matmul-tiles-unchecked.json" 2>/dev/null
cp /tmp/m0/matmul-tiles.json "$OUT/matmul-tiles-checked.json" 2>/dev/null
cp /tmp/s/suite.jsonl "$OUT/suite.jsonl" 2>/dev/null
