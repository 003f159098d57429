#!/usr/bin/env bash
# Device call 7 (session of 20:31 UTC, one H100: nvidia-h100-x1): merged reduce-adds' destination tile
# counts once for the group, on the lead, and every arrive counts on its lead without a table read
# (working tree on e9af0ff, with merged adds reading 8 members a round). rs-probe against the g8 build
# of call 6 (before/rs-probe-g8.mjs: the same but for the arrives), then the suite's gemm-rs rows (f16,
# f32; one-shot, the one-device default) and gemv-ar.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/rs-probe.mjs dist/suite.mjs dist/host_copy.node /tmp/before
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local bundle=$1 into=$2; step 100 node $bundle --ranks 4,8 --dtype f16 --reduction one-shot --out /tmp/p; cat /tmp/p/*.jsonl >>"$OUT/$into" 2>/dev/null; rm -rf /tmp/p; }
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
probe $app/rs-probe.mjs probe-after.jsonl
probe $app/before/rs-probe-g8.mjs probe-before.jsonl
suite 110 --only gemm-rs --dtype f16 --ranks 2,4,8
suite 110 --only gemm-rs --dtype f32 --ranks 2,4,8
suite 50 --only gemv-ar --dtype f32 --ranks 4
true
