#!/usr/bin/env bash
# Device call 1: where the two-device rows that lose to sequential spend their time (gemm-rs f16 at
# 2 ranks, a2a-gemm and embed-a2a f32 at 4 ranks on 2 GPUs). placed-timeline with the host's clock
# alone (the recorded run goes as the timed ones do), the JS thread watched, GPUs kept busy before it;
# gemm-rs f16 once more with GPU timestamps, and under a CPU profile (50 us samples).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
mkdir -p /tmp/w /tmp/prof
t="node $app/placed-timeline.mjs --runs 10 --busy-ms 500 --out /tmp/w"
step 90 node --cpu-prof --cpu-prof-interval 50 --cpu-prof-dir /tmp/prof $app/placed-timeline.mjs --runs 10 --busy-ms 500 --out /tmp/w --only gemm-rs --dtype f16 --ranks 2 --fused-sequential --watch-js-thread
step 80 $t --only gemm-rs --dtype f16 --ranks 2 --gpu-timestamps
step 80 $t --only a2a-gemm,embed-a2a --ranks 4 --fused-sequential --watch-js-thread
tar -C /tmp/w -cJf "$OUT/traces.tar.xz" .
tar -C /tmp/prof -cJf "$OUT/prof.tar.xz" .
true
