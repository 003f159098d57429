#!/usr/bin/env bash
# Device call 3 (session of 18:26 UTC, one H100: nvidia-h100-x1): the three rows whose WGSL changed,
# ranks sharing the device: a2a-gemm (its combine cut at the tiles on their grid: 2982a1c),
# embed-a2a (cut at the tiles: ca3fc4a) and ring-attn (its KV loop's waits remember the parts they saw
# published: 03122e4). Arms after / before (f4af1b3) / after.
# Pack: pnpm build && pnpm bench:build && cp <f4af1b3's dist/suite.mjs> dist/host_copy.node /tmp/before/ &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node /tmp/before
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3; rm -rf /tmp/s; step "$limit" node "$bundle" --dtype f32 --only a2a-gemm,embed-a2a,ring-attn --ranks 4 --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 170 $app/suite.mjs suite-after.jsonl
suite 170 $app/before/suite.mjs suite-before.jsonl
suite 170 $app/suite.mjs suite-after.jsonl
true
