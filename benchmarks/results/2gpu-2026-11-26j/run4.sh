#!/usr/bin/env bash
# Device call 4 (session of 16:36 UTC): host copies under 512 KiB through the addon on the JS thread
# (copySync, through 8-byte anchors: no ArrayBuffer over the whole mapped ranges) against the JS copy
# over whole ranges (before/, commit bd75ccc), on the three rows whose transfers are small (call 3:
# a 128 KiB transfer's host-copy stage took 0.09-1.2 ms inside a run). Arms after, before, after, each
# the three rows, 30 rounds; then the recorded runs again (placed-timeline) with the new copy.
# Pack: pnpm build && pnpm bench:build && mkdir before && cp <bd75ccc's dist/suite.mjs> before/ &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/placed-timeline.mjs dist/host_copy.node before
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3; rm -rf /tmp/s; step "$limit" node "$bundle" --dtype f32 --only gemv-ar,embed-a2a,ring-attn --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 110 $app/suite.mjs suite-after.jsonl
suite 110 $app/before/suite.mjs suite-before.jsonl
suite 110 $app/suite.mjs suite-after.jsonl
step 100 node $app/placed-timeline.mjs --only gemv-ar,ring-attn --dtype f32 --size 4096 --ranks 4 --runs 10 --busy-ms 500 --out "$OUT"
true
