#!/usr/bin/env bash
# Device call 9: three arms, each twice, alternating (f32, the two-device rows of ag-gemm, gemm-rs and
# a2a-gemm, 20 rounds each):
#   before    suite-before.mjs: 473855a (the host submits every phase as soon as its chunks have landed)
#   throttle  suite.mjs: a device keeps two phases queued at most
#   split4    suite.mjs --split 4: also phases beside a transfer between devices cut into up to 4 parts
# Pack: build suite-before.mjs (473855a's phases.ts, emit-kernel.ts, placed-session.ts), then
#       pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/suite-before.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local arm=$1 bundle=$2; shift 2; rm -rf /tmp/s; step 100 node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --dtype f32 --only ag-gemm,gemm-rs,a2a-gemm --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$arm-$(date +%H%M%S).md" 2>/dev/null; }
for i in 1 2; do
  suite before suite-before.mjs
  suite throttle suite.mjs
  suite split4 suite.mjs --split 4
done
