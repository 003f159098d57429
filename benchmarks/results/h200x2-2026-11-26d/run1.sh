#!/usr/bin/env bash
# Device call 1 (session of 04:55 UTC, 2026-11-26): (a) the host link's slow mode: host-link-probe.mjs
# (32 MiB: each stage alone, transfers one way, the other, both at once, then with a fresh copier) in
# ten processes in a row: four unpinned, three on CPUs 0-7, three on 24-31; with the CPU topology.
# (b) where a2a-gemm's fused run loses to sequential: placed-timeline.mjs, its variants each checked
# at the timed shape, one run recorded with every phase timed on the GPU; ag-gemm f32 (2 ranks) too.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/host-link-probe.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
{ lscpu; nproc; numactl -H; cat /sys/devices/system/node/online; } >"$OUT/topology.txt" 2>&1
probe() { step 40 "$@" node $app/host-link-probe.mjs --label "$*"; }
probe env
probe taskset -c 0-7
probe taskset -c 24-31
probe env
probe taskset -c 0-7
probe taskset -c 24-31
probe env
probe taskset -c 0-7
probe taskset -c 24-31
probe env
grep '^{' "$log" >"$OUT/host-link.jsonl"
step 120 node $app/placed-timeline.mjs --only a2a-gemm --runs 5 --gpu-timestamps --out "$OUT"
step 90 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --gpu-timestamps --out "$OUT"
