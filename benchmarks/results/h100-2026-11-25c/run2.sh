#!/usr/bin/env bash
# Device call 2 (2026-11-25 night, H100, nvidia-h100-x1): call 1 found the staged GEMM waiting on its
# global loads (no global loads in the loop: 209 -> 360 TFLOP/s even with slower stores) and rotated
# stores 1.8x slower (reverted). Here: the words fetched two steps ahead in two register sets
# (gemm-sweep --set deep: each tile with and without), at 8192³ and 4096³.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/gemm-sweep.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 200 node $app/gemm-sweep.mjs --set deep --size 8192 --out "$OUT/sweep8192"
step 150 node $app/gemm-sweep.mjs --set deep --size 4096 --out "$OUT/sweep4096"
kill %1 2>/dev/null
