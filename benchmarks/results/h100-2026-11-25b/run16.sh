#!/usr/bin/env bash
# Device call 16 (2026-11-25 evening, H100, nvidia-h100-x1): call 15 again for gemm-rs now that bench
# and tune keep the GPU busy a second before timing: the tuner's choice at settled clocks, then bench
# with the workload's own choice and with the tuned one, in the same call. Cache in $OUT/cache.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_CACHE_DIR="$OUT/cache"
rs=(gemm-rs --ranks 8 --dtype f16 --m 4096 --n 4096 --k 512 --verify-rows 16 --no-robustness)
step 170 node $app/syncopate.mjs tune "${rs[@]}"
step 50 node $app/syncopate.mjs bench "${rs[@]}" --runs 10
step 50 node $app/syncopate.mjs bench "${rs[@]}" --runs 10 --tuned
