#!/usr/bin/env bash
# Device call 2 (session of 16:36 UTC): the other four two-device rows (4 ranks, two a GPU) with
# --tune-phasing, as call 1 ran the GEMM rows; 30 rounds.
# Pack: as call 1.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --tune-phasing --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 300 --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn
true
