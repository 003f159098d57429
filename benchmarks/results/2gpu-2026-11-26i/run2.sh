#!/usr/bin/env bash
# Device call 2: what each WebGPU call of a two-device run costs the JS thread (webgpu-call-cost, new),
# and a CPU profile of gemm-rs f16's placed runs without the JS-thread watch (call 1's wrapped every
# WebGPU method and kept a setImmediate ticker running).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/webgpu-call-cost.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 60 node $app/webgpu-call-cost.mjs --runs 300
step 60 node $app/webgpu-call-cost.mjs --runs 300
mkdir -p /tmp/w /tmp/prof
step 90 node --cpu-prof --cpu-prof-interval 25 --cpu-prof-dir /tmp/prof $app/placed-timeline.mjs --runs 10 --busy-ms 500 --out /tmp/w --only gemm-rs --dtype f16 --ranks 2
tar -C /tmp/prof -cJf "$OUT/prof.tar.xz" .
true
