#!/usr/bin/env bash
# Device call 9 (session of 20:31 UTC, one H100: nvidia-h100-x1): the tuner on gemm-rs f16 at 8 ranks
# sharing the device, with the new reduction trial (the ring, timed at the fastest one-shot candidate),
# then bench --tuned (every variant at the tuned choice, checked). Final code (458fa11).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_CACHE_DIR="$OUT/cache"
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
shape="--ranks 8 --dtype f16 --m 4096 --n 4096 --k 512 --no-robustness --verify-rows 16"
step 300 node $app/syncopate.mjs tune gemm-rs $shape --order chunk-arrival,grouped --chunks-per-rank 1
step 150 node $app/syncopate.mjs bench gemm-rs $shape --tuned
true
