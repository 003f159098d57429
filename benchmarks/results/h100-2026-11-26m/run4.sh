#!/usr/bin/env bash
# Device call 4 (session of 23:00 UTC, one H100: nvidia-h100-x1): the suite's one-device rows call 3 left
# out, on the final move code (after, commit 47cac84) against the session's starting code (before,
# 7d919c0), alternating per workload: the f32 GEMMs at 2, 4, 8 ranks and ag-gemm f16 at 2 and 4.
# Pack: pnpm build && pnpm bench:build, suite bundle into /tmp/v4 with call 1's before, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v4
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v4
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite-$v.jsonl" 2>/dev/null; }
for v in after before; do suite $v 90 --only gemm-rs --dtype f32; done
for v in after before; do suite $v 90 --only ag-gemm --dtype f32; done
for v in after before; do suite $v 70 --only ag-gemm --dtype f16 --ranks 2,4; done
true
