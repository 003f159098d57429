#!/usr/bin/env bash
# Device call 3: the adapter's features on this GPU (webgpu-call-cost's setup line), then the eight
# two-device rows with --tune-phasing (each row's fused variant at the phasing the tuner keeps, from
# trials of its own before the row's rounds: overlap, or the sequential variant), then the peers.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/webgpu-call-cost.mjs dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 30 node $app/webgpu-call-cost.mjs --runs 100
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --tune-phasing --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 110 --dtype f32 --only ag-gemm,gemm-rs
suite 170 --dtype f16 --only ag-gemm,gemm-rs
suite 170 --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn
unset SYNCOPATE_DAWN_ENABLE
PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=30 bash benchmarks/peers/run_all.sh "$OUT" >>"$log" 2>&1
true
