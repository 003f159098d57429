#!/usr/bin/env bash
# Device call 2 (session of 20:31 UTC, one H100: nvidia-h100-x1): gemm-rs one-shot in the grouped order.
# Chunk-arrival puts each rank's own shard last (its tiles send no chunk, they are only a reduce-add's
# destination), so every merged part of rank d's shard completes when rank d reaches it, at the end of
# the kernel; grouped gives every rank the same L2-friendly order, so the ranks' tiles over one output
# tile run at once and its merged sum is published while the GEMM runs. Ring in grouped for comparison.
# Same bundle as call 1 (commit 6348cde).
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 into=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --only gemm-rs --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 110 suite-one-shot-grouped.jsonl --reduction one-shot --order grouped --dtype f16 --ranks 2,4,8
suite 110 suite-ring-grouped.jsonl --reduction ring --order grouped --dtype f16 --ranks 4,8
suite 110 suite-one-shot-grouped.jsonl --reduction one-shot --order grouped --dtype f32 --ranks 4,8
true
