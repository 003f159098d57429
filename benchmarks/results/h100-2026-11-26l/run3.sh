#!/usr/bin/env bash
# Device call 3 (session of 20:31 UTC, one H100: nvidia-h100-x1): chunk-arrival with a reduce-add's
# destination tiles counted as producing it (they are: its parts need them). One-shot reduce-scatter
# then orders every rank alike (grouped), the ring starts each rank on the two shards step 0 needs.
# Arms: after (working tree on 6348cde) / before (6348cde, the bundle of calls 1-2): gemm-rs f16 one-shot and ring
# at 2, 4, 8 ranks; gemv-ar f32 4 ranks (one-shot all-reduce, its order changes too).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node /tmp/before
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node $bundle --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 120 $app/suite.mjs after.jsonl --only gemm-rs --reduction one-shot --dtype f16 --ranks 2,4,8
suite 100 $app/suite.mjs after.jsonl --only gemm-rs --reduction ring --dtype f16 --ranks 4,8
suite 60 $app/suite.mjs after.jsonl --only gemv-ar --dtype f32 --ranks 4
suite 60 $app/before/suite.mjs before.jsonl --only gemv-ar --dtype f32 --ranks 4
suite 60 $app/suite.mjs after.jsonl --only gemv-ar --dtype f32 --ranks 4
true
