#!/usr/bin/env bash
# Device call 5: the eight two-device rows with --tune-phasing, 30 rounds, now that the tuner times overlap
# against sequential phasing in alternating rounds and keeps sequential only where overlap is slower
# beyond the rounds' 95% interval; the rows print their intervals (roundRatioInterval).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/webgpu-call-cost.mjs dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --tune-phasing --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 150 --dtype f32 --only ag-gemm,gemm-rs
suite 200 --dtype f16 --only ag-gemm,gemm-rs
suite 240 --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn
true
