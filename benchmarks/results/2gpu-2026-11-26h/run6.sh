#!/usr/bin/env bash
# Device call 6: a transfer's read-ahead in one submission (--batch-read-backs) against one submission
# a piece (default). Call 5's map-latency-probe: each piece's encoding and submit cost the JS thread
# ~0.04 ms and no map was seen until it was free (two transfers of 8 pieces starting at once: the first
# seen at 0.70 ms against 0.12 alone). The suite's two-device GEMM rows, arms alternating: f32, f16,
# then f32 again while the call's time lasts.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local arm=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite apiece 40 node $app/suite.mjs --dtype f32 --only ag-gemm,gemm-rs
suite batched 40 node $app/suite.mjs --dtype f32 --only ag-gemm,gemm-rs --batch-read-backs
suite batched 60 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs --batch-read-backs
suite apiece 60 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs
true
