#!/usr/bin/env bash
# Device call 4 (session of 18:26 UTC, asked as nvidia-h200-x2): the three rows whose WGSL changed this
# session (a2a-gemm, embed-a2a, ring-attn), ranks on two devices. Arms after / before (f4af1b3, now
# with the addon beside it: call 2's before arm ran the JS copy), 30 rounds each, no phasing trial;
# then after with the phasing trial for a2a-gemm and ring-attn (embed-a2a's WGSL is call 2's).
# Pack: as call 3 (the same .devpack).
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs $app/*.node $app/before/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3 only=$4; shift 4; rm -rf /tmp/s; step "$limit" node "$bundle" --dtype f32 --only "$only" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 100 $app/suite.mjs suite-after.jsonl a2a-gemm,embed-a2a,ring-attn
suite 100 $app/before/suite.mjs suite-before.jsonl a2a-gemm,embed-a2a,ring-attn
suite 330 $app/suite.mjs suite-tuned.jsonl a2a-gemm,ring-attn --tune-phasing
true
