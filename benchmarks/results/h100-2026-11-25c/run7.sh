#!/usr/bin/env bash
# Device call 7 (2026-11-25 night, H100, nvidia-h100-x1): the tuner with 128x256x32 among its f16
# tiles, inside the workloads it tunes (gemm-rs and ag-gemm, 8 ranks, the suite's f16 shapes), at
# settled clocks with each trial checked on 16 sampled rows.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_CACHE_DIR="$OUT/cache"
step 200 node $app/syncopate.mjs tune gemm-rs --ranks 8 --dtype f16 --m 4096 --n 4096 --k 512 --verify-rows 16 --no-robustness
step 200 node $app/syncopate.mjs tune ag-gemm --ranks 8 --dtype f16 --m 4096 --n 512 --k 4096 --verify-rows 16 --no-robustness
kill %1 2>/dev/null
