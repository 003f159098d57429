#!/usr/bin/env bash
# Device call 3 (session of 16:36 UTC): where the small-transfer rows spend their communication. On two
# H200s (calls 1-2) gemv-ar's communication alone took 2.24 ms, ring-attn's 3.22 and embed-a2a's 0.86
# against 0.04, 0.07 and 0.35 ms of DMA (model-suite --queue-probe): a recorded run of each variant
# (placed-timeline, the GPUs busy 500 ms before it), the transfers' stages piece by piece.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 200 node $app/placed-timeline.mjs --only gemv-ar,embed-a2a,ring-attn --dtype f32 --size 4096 --ranks 4 --runs 10 --busy-ms 500 --out "$OUT"
true
