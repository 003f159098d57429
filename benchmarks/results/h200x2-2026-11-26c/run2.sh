#!/usr/bin/env bash
# Device call 2: every piece read back at once (this commit, suite.mjs) against the ring of 4 read-backs
# (the bundle of call 1, packed as suite-ring.mjs), the eight two-device rows of each, alternating, both
# timed in rounds; then one recorded ag-gemm f32 run of each variant with the new copier (placed-timeline).
# Pack: pnpm build && pnpm bench:build && cp <call 1's dist/suite.mjs> dist/suite-ring.mjs &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/suite-ring.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local bundle=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 40 --out /tmp/s "$@"; sed "s/^{/{\"bundle\":\"$bundle\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$bundle-$(date +%H%M%S).md" 2>/dev/null; }
suite suite.mjs 120 --dtype f32
suite suite-ring.mjs 120 --dtype f32
suite suite.mjs 70 --dtype f16 --only ag-gemm,gemm-rs
suite suite-ring.mjs 70 --dtype f16 --only ag-gemm,gemm-rs
step 60 node $app/placed-timeline.mjs --only ag-gemm,gemm-rs --dtype f32 --ranks 2 --runs 10 --out "$OUT"
