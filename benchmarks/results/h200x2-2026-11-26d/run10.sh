#!/usr/bin/env bash
# Device call 10: are call 6's stalls (pieces' host copies 17-31 ms late right after a burn) garbage
# collection? The same placed timelines (ag-gemm f32 2 ranks, a2a-gemm; GPUs busy 500 ms before each
# recorded run) under node --trace-gc, each recorded run's start printed on the process's clock.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 90 node --trace-gc $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --out "$OUT"
step 90 node --trace-gc $app/placed-timeline.mjs --only a2a-gemm --runs 5 --busy-ms 500 --out "$OUT"
