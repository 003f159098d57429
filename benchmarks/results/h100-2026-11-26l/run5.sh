#!/usr/bin/env bash
# Device call 5 (session of 20:31 UTC, one H100: nvidia-h100-x1): where fused one-shot gemm-rs's time
# goes, and a merged add reading every member in one round. rs-probe times fused, its chunks
# unpublished (no adds), and compute alone in the fused order; fused - unpublished is the adds' cost.
# Bundles: e9af0ff (merged adds read 4 members a round: two rounds at 8 ranks) and the same with
# MEMBER_GROUP = 8 (variant/*-g8.mjs: one round), arms alternating; then the suite's gemm-rs f16 rows at
# the new default (one-shot on one device) from both.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/rs-probe.mjs dist/suite.mjs dist/host_copy.node /tmp/variant
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/variant/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local bundle=$1 into=$2; step 120 node $bundle --ranks 4,8 --dtype f16 --reduction one-shot --out /tmp/p; cat /tmp/p/*.jsonl >>"$OUT/$into" 2>/dev/null; rm -rf /tmp/p; }
suite() { local bundle=$1 into=$2; rm -rf /tmp/s; step 120 node $bundle --quick --size 4096 --no-sweeps --no-trace --one-device --only gemm-rs --dtype f16 --ranks 2,4,8 --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
probe $app/rs-probe.mjs probe-g4.jsonl
probe $app/variant/rs-probe-g8.mjs probe-g8.jsonl
suite $app/suite.mjs suite-g4.jsonl
suite $app/variant/suite-g8.mjs suite-g8.jsonl
true
