#!/usr/bin/env bash
# Device call 4 (2026-11-25 night, H100, nvidia-h100-x1): call 3 found the loop without barriers 1.4x
# faster (a probe), two register sets no help, and smaller workgroups slower. Is it the branches
# around each step's fetch and stores (the compiler cannot interleave the stores with the MMAs)?
# gemm-sweep --set peel: the last step peeled, the loop body one basic block, against the loop as is.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/gemm-sweep.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 200 node $app/gemm-sweep.mjs --set peel --size 8192 --out "$OUT/sweep8192"
step 150 node $app/gemm-sweep.mjs --set peel --size 4096 --out "$OUT/sweep4096"
kill %1 2>/dev/null
