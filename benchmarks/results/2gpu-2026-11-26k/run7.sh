#!/usr/bin/env bash
# Device call 7 (session of 18:26 UTC, asked as nvidia-h200-x2): the tuner's gather trial (0654339):
# `syncopate tune ring-attn` over two devices at the suite's shape, one order and chunk count (the
# suite's), so the trials are the ring candidate, the same gathered one-shot, and the phasing trial of
# the faster; then `bench --tuned` at what it kept (the cache in $OUT/cache).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_CACHE_DIR="$OUT/cache"
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
shape="--ranks 4 --devices 2 --m 4096 --n 64 --k 4096 --no-robustness --verify-rows 16"
step 150 node $app/syncopate.mjs tune ring-attn $shape --order chunk-arrival --chunks-per-rank 1
step 120 node $app/syncopate.mjs bench ring-attn $shape --tuned
true
