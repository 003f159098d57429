#!/usr/bin/env bash
# Device call 1: the copier's read-ahead (pieces read back ahead of the host copies, upload staging
# grown rather than waited for), and a collection between rounds (node --expose-gc).
#   host-link-probe.mjs --sweep, two processes: ring x piece x read-ahead, transfers alone and both
#     ways beside one compute submission a device (submitted right after the transfers start).
#   suite, f32, the two-device rows of ag-gemm, gemm-rs and a2a-gemm, 20 rounds, four arms twice, alternating:
#     before     suite-before.mjs: b44cb44's peer-copy.ts and staging-pool.ts
#     ra4        suite.mjs (read-ahead = ring = 4, the new default)
#     ra8        suite.mjs --read-ahead 8 (a 32 MiB transfer's 8 pieces all read back at once)
#     ra8-gc     node --expose-gc suite.mjs --read-ahead 8
# Pack: build suite-before.mjs (b44cb44's two files), then
#       pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/suite-before.mjs dist/host-link-probe.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
step 60 node $app/host-link-probe.mjs --sweep --runs 10 --label sweep1
step 60 node $app/host-link-probe.mjs --sweep --runs 10 --label sweep2
grep '^{' "$log" >"$OUT/host-link.jsonl"
suite() { local arm=$1; shift; rm -rf /tmp/s; step 100 "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --dtype f32 --only ag-gemm,gemm-rs,a2a-gemm --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$arm-$(date +%H%M%S).md" 2>/dev/null; }
for i in 1 2; do
  suite before node $app/suite-before.mjs
  suite ra4 node $app/suite.mjs
  suite ra8 node $app/suite.mjs --read-ahead 8
  suite ra8-gc node --expose-gc $app/suite.mjs --read-ahead 8
done
