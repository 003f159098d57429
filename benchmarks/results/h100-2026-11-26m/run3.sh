#!/usr/bin/env bash
# Device call 3 (session of 23:00 UTC, one H100: nvidia-h100-x1): the suite's rows with the move code of
# call 2's h8 (member bases once a round, 8 elements an invocation a round, shared extents as literals:
# the working tree) against the session's starting code (before, 7d919c0), alternating per workload.
# Pack: pnpm build && pnpm bench:build, suite bundle into /tmp/v3 with call 1's before, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v3
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v3
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite-$v.jsonl" 2>/dev/null; }
for w in gemv-ar a2a-gemm embed-a2a ring-attn; do suite h8 50 --only $w --dtype f32; suite before 50 --only $w --dtype f32; done
suite h8 60 --only ag-gemm --dtype f16 --ranks 8
suite before 60 --only ag-gemm --dtype f16 --ranks 8
suite h8 110 --only gemm-rs --dtype f16
true
