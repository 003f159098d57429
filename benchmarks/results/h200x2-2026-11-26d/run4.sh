#!/usr/bin/env bash
# Device call 4: three arms, each twice, alternating (f32, the two-device rows of ag-gemm, gemm-rs and
# a2a-gemm, 20 rounds each):
#   before  suite-before.mjs: the code of cda5044 (a2a-gemm's combine rows landing beside the other
#           rank's tiles; a device's launch sends as one transfer)
#   after   suite.mjs: the copies nobody reads land after the device's last tiles; launch sends apart
#           per landing phase
#   ring8   suite.mjs --ring 8: also every piece of a 32 MiB transfer in flight at once (call 3: the
#           last four pieces' read-backs and uploads queued behind the compute phase)
# Pack: build suite-before.mjs (HEAD~1's phases.ts and placed-session.ts), then pnpm bench:build &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/suite-before.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local arm=$1 bundle=$2; shift 2; rm -rf /tmp/s; step 100 node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --dtype f32 --only ag-gemm,gemm-rs,a2a-gemm --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$arm-$(date +%H%M%S).md" 2>/dev/null; }
for i in 1 2; do
  suite before suite-before.mjs
  suite after suite.mjs
  suite ring8 suite.mjs --ring 8
done
