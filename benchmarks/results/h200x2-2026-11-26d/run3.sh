#!/usr/bin/env bash
# Device call 3: where a transfer stalls, piece by piece (each piece's read-back mapped, upload staging
# mapped, host copy done, upload submitted, now in every transfer's trace args). placed-timeline.mjs on
# a2a-gemm twice (in call 1 its Y chunks device 0 -> 1 took 2.3-4.4 ms from first mapped to last
# submitted, the other way 0.4-0.6) and ag-gemm f32 on 2 ranks; host clock only, as the timed runs.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 120 node $app/placed-timeline.mjs --only a2a-gemm --runs 10 --out "$OUT"
mv "$OUT/timeline-a2a-gemm.json" "$OUT/timeline-a2a-gemm-1.json"
step 120 node $app/placed-timeline.mjs --only a2a-gemm --runs 10 --out "$OUT"
step 90 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 10 --out "$OUT"
