#!/usr/bin/env bash
# Device call 2 (session of 18:26 UTC, asked as nvidia-h200-x2): the two rows whose WGSL changed (a
# copy whose stores name the rank is cut at the tiles: commits ca3fc4a, 7283acf), ranks on two
# devices, where a chunk that lands is published by token workgroups on the destination (one part
# each chunk before, so one workgroup moved it out of the mailbox). Arms after / before (f4af1b3),
# 30 rounds each, no phasing trial; then after with the phasing trial, as the suite's rows run.
# Pack: as call 1 (the same .devpack).
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --dtype f32 --only a2a-gemm,embed-a2a --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 125 $app/suite.mjs suite-after.jsonl
suite 125 $app/before/suite.mjs suite-before.jsonl
suite 330 $app/suite.mjs suite-tuned.jsonl --tune-phasing
true
