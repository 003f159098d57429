#!/usr/bin/env bash
# Device call 4: the step's gain in one call: the suite's eight two-device rows with the JS host copy
# (SYNCOPATE_HOST_COPY=js) and with the native one (libuv's default pool of 4), the same bundle,
# alternating by dtype; 20 timed runs a part to fit the call (call 3 cut ring-attn off at 200 s).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local copy=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" env SYNCOPATE_HOST_COPY=$copy node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite native 80 --dtype f16 --only ag-gemm,gemm-rs
suite js 80 --dtype f16 --only ag-gemm,gemm-rs
suite native 190 --dtype f32
suite js 210 --dtype f32
