#!/usr/bin/env bash
# Device call 5: when a read-back's map is seen resolved (map-latency-probe, new). In recorded
# two-device runs every piece of a transfer was seen mapped at one moment, ~1 ms after the first was
# submitted (call 3 of results/gpu2-2026-11-26g). The probe: 8 pieces of 4 MiB (then 4) read back on
# one device, on both, both with host copies after, both with the JS thread busy 0.1 ms a piece, one
# with a setImmediate loop beside it. Then one recorded fused ag-gemm f16 run with GPU timestamps
# (placed-timeline) with this session's host copy.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/map-latency-probe.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 40 node $app/map-latency-probe.mjs --runs 30
step 40 node $app/map-latency-probe.mjs --runs 30
step 40 node $app/map-latency-probe.mjs --runs 30 --pieces 4
mkdir -p /tmp/w
step 70 node $app/placed-timeline.mjs --ranks 2 --runs 10 --busy-ms 500 --gpu-timestamps --out /tmp/w --only ag-gemm --dtype f16
tar -C /tmp/w -cJf "$OUT/traces.tar.xz" .
true
