#!/usr/bin/env bash
# Device call 15 (2026-11-25 evening, H100, nvidia-h100-x1): the autotuner on the H100 for the f16 GEMM
# workloads at the suite's 8-rank shapes (each tile at the first order and chunk count, then every
# order and chunk count at the fastest tile; every trial verified on 16 sampled rows), then bench with
# the workload's own choice and with the tuned one, in the same call. The cache lands in $OUT/cache.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_CACHE_DIR="$OUT/cache"
rs=(gemm-rs --ranks 8 --dtype f16 --m 4096 --n 4096 --k 512 --verify-rows 16 --no-robustness)
ag=(ag-gemm --ranks 8 --dtype f16 --m 4096 --n 512 --k 4096 --verify-rows 16 --no-robustness)
step 150 node $app/syncopate.mjs tune "${rs[@]}"
step 150 node $app/syncopate.mjs tune "${ag[@]}"
step 60 node $app/syncopate.mjs bench "${rs[@]}" --runs 10
step 60 node $app/syncopate.mjs bench "${rs[@]}" --runs 10 --tuned
step 60 node $app/syncopate.mjs bench "${ag[@]}" --runs 10
step 60 node $app/syncopate.mjs bench "${ag[@]}" --runs 10 --tuned
