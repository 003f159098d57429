#!/usr/bin/env bash
# Device call 5: calls 2-4 found each recorded run's JS thread stopped 5-30 ms, a major collection
# (4-14 ms) in the middle of it: every mapped range handed to JS (4 MiB a piece, read-back and upload)
# counts as V8 external memory, which starts a major collection every ~64 MiB moved. The host copy now
# takes an 8-byte anchor of each mapped range and the addon copies from the anchors' addresses.
#   1. placed-timeline --watch-js-thread, ag-gemm f32 and gemm-rs f16 (are the collections gone?);
#   2. the eight two-device rows, arms alternating, twice each:
#        before   suite-before.mjs: 653f4e1's peer-copy.ts and host-copy.ts (whole ranges)
#        anchors  suite.mjs
#      f32 (six rows, 20 rounds), then f16 ag-gemm and gemm-rs (20 rounds).
# Pack: build suite-before.mjs (653f4e1's two files), then
#       pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/suite-before.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
mkdir -p /tmp/w
tl="node $app/placed-timeline.mjs --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp/w"
step 40 $tl --only ag-gemm --dtype f32
step 40 $tl --only gemm-rs --dtype f16
suite() { local arm=$1 limit=$2 bundle=$3; shift 3; rm -rf /tmp/s; step "$limit" node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for i in 1 2; do
  suite before 85 suite-before.mjs --dtype f32
  suite anchors 85 suite.mjs --dtype f32
done
for i in 1 2; do
  suite before 45 suite-before.mjs --dtype f16 --only ag-gemm,gemm-rs
  suite anchors 45 suite.mjs --dtype f16 --only ag-gemm,gemm-rs
done
