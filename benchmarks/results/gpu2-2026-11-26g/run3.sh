#!/usr/bin/env bash
# Device call 3: where the queue of each GPU idles in a fused two-device run. Call 1 found that a
# copy and a compute submission on one queue never overlap, so each device's queue must run its
# compute, the read-back of what it sends and the upload of what it gets, one after another; this
# draws each phase at its GPU timestamps (placed-timeline --gpu-timestamps) so the time between phases
# shows the copies plus any time the queue waited on the host. Default flows, and --beside-compute
# 4,8 (a plan cut for overlap reads every piece back ahead of the first phase).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
mkdir -p /tmp/w
tl="node $app/placed-timeline.mjs --ranks 2 --runs 10 --busy-ms 500 --gpu-timestamps --out /tmp/w"
for w in "ag-gemm --dtype f32" "ag-gemm --dtype f16" "gemm-rs --dtype f32" "gemm-rs --dtype f16"; do
  step 60 $tl --only $w
  step 60 $tl --only $w --beside-compute 4,8
done
tar -C /tmp/w -cJf "$OUT/traces.tar.xz" .
