#!/usr/bin/env bash
# Device call 1 (session of 18:26 UTC, one H100: nvidia-h100-x1): a copy whose stores name the rank
# (a2a-gemm's combine of Y, embed-a2a's pooled rows) is now cut at the tiles, each part moved by the
# tile that stores it, where each chunk was one part moved by one workgroup (commits ca3fc4a, 7283acf).
# The two rows whose WGSL changed, ranks sharing the device, arms after / before (f4af1b3) / after.
# Pack: pnpm build && pnpm bench:build && cp <f4af1b3's dist/suite.mjs, placed-timeline.mjs> /tmp/before/ &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node /tmp/before
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3; rm -rf /tmp/s; step "$limit" node "$bundle" --dtype f32 --only a2a-gemm,embed-a2a --ranks 4 --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 150 $app/suite.mjs suite-after.jsonl
suite 150 $app/before/suite.mjs suite-before.jsonl
suite 150 $app/suite.mjs suite-after.jsonl
true
