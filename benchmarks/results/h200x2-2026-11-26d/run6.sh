#!/usr/bin/env bash
# Device call 6: where the fused two-device runs lose, at the clocks of the suite's rounds: the
# placed timelines of ag-gemm f32 (2 ranks) and a2a-gemm (4 ranks) with the GPUs kept busy (burnGpus)
# for 500 ms right before each recorded run; once on the host's clock, once with GPU timestamps.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
mkdir -p "$OUT/host" "$OUT/gpu"
step 90 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --out "$OUT/host"
step 90 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --gpu-timestamps --out "$OUT/gpu"
step 90 node $app/placed-timeline.mjs --only a2a-gemm --runs 5 --busy-ms 500 --out "$OUT/host"
step 90 node $app/placed-timeline.mjs --only a2a-gemm --runs 5 --busy-ms 500 --gpu-timestamps --out "$OUT/gpu"
