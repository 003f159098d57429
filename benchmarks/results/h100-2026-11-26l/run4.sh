#!/usr/bin/env bash
# Device call 4 (session of 20:31 UTC, two GPUs: nvidia-h200-x2): gemm-rs over two devices.
# (1) The suite's two-device rows (2 ranks, one a device), after (chunk-arrival counting a reduce-add's
# destination only within a device, so the shard a rank sends still runs first) against before
# (6348cde), which must agree. (2) 4 ranks, two a device: the ring reduce-scatter against the one-shot
# (one device: one-shot 1.3-1.4x faster, calls 1-3), to choose the default where ranks span devices.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node /tmp/before
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs $app/*.node $app/before/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --only gemm-rs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 90 $app/suite.mjs after.jsonl --dtype f16
suite 90 $app/before/suite.mjs before.jsonl --dtype f16
suite 90 $app/suite.mjs after.jsonl --dtype f32
suite 90 $app/before/suite.mjs before.jsonl --dtype f32
suite 90 $app/suite.mjs r4-ring.jsonl --dtype f16 --two-device-ranks 4 --reduction ring
suite 90 $app/suite.mjs r4-one-shot.jsonl --dtype f16 --two-device-ranks 4 --reduction one-shot
true
