#!/usr/bin/env bash
# Device call 8 (session of 16:36 UTC): where a2a-gemm's overlapped fused run loses to sequential (the
# tuner's trials: 0.83x in call 6) — a recorded run of each variant and of the fused kernel at sequential
# phasing (placed-timeline --fused-sequential), the GPUs busy 500 ms before it, GPU timestamps per phase.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 100 node $app/placed-timeline.mjs --only a2a-gemm --dtype f32 --size 4096 --ranks 4 --runs 10 --busy-ms 500 --fused-sequential --gpu-timestamps --out "$OUT"
true
