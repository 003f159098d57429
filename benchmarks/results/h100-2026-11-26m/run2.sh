#!/usr/bin/env bash
# Device call 2 (session of 23:00 UTC, one H100: nvidia-h100-x1): a merged add's member bases read once
# a round, outside the element loop, with 8 and 16 elements an invocation a round (h8, h16); rs-probe
# at 4 and 8 ranks (gemm-rs f16 one-shot); then the suite's one-device rows on h16 but the f32 GEMMs,
# and the session's starting code (before, 7d919c0) on gemm-rs f16 at 8 ranks and ag-gemm f16 at 8.
# Pack: bundles built from the working tree with MOVE_UNROLL 8/16 into /tmp/v2, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v2
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v2
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local v=$1; rm -rf /tmp/p; step 100 node $app/rs-probe-$v.mjs --ranks 4,8 --dtype f16 --reduction one-shot --out /tmp/p; cat /tmp/p/*.jsonl >>"$OUT/probe-$v.jsonl" 2>/dev/null; }
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite-$v.jsonl" 2>/dev/null; }
probe h16
probe h8
suite h16 110 --only gemm-rs,ag-gemm --dtype f16
suite before 70 --only gemm-rs,ag-gemm --dtype f16 --ranks 8
suite h16 150 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn --dtype f32
true
