#!/usr/bin/env bash
# Device call 5: call 4's suite rows again, the same bundle, to see how far a row moves from one call
# (one process) to the next.
# Pack: as call 4.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
nvidia-smi -L >>"$log" 2>&1
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 110 --dtype f16 --only ag-gemm,gemm-rs
suite 250 --dtype f32
