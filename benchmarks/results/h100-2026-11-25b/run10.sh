#!/usr/bin/env bash
# Device call 10 (2026-11-25 evening, H100, nvidia-h100-x1): chunk moves with four elements an
# invocation a round (loads ahead of stores) against the scalar move loop of commit f2781a1, which
# runs from .devpack/app/before/ in the same call; then the rest of the one-device suite on the new code.
# Pack: pnpm bench:build (at f2781a1: cp dist/suite.mjs <dir>/before/) and
#   bash ../shared/device/pack.sh dist/suite.mjs dist/rs-probe.mjs <dir>/before
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
# suite LIMIT BUNDLE RESULT-FILE ARGS...: one suite step; its rows appended to $OUT/RESULT-FILE.
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
# 1. The rows where communication is largest, new moves then old, back to back.
suite 110 $app/suite.mjs suite.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 8
suite 110 $app/before/suite.mjs suite-before.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 8
suite 60 $app/suite.mjs suite.jsonl --dtype f32 --only embed-a2a --ranks 4
suite 60 $app/before/suite.mjs suite-before.jsonl --dtype f32 --only embed-a2a --ranks 4
# 2. The rest of the one-device suite on the new moves.
suite 120 $app/suite.mjs suite.jsonl --dtype f32 --only gemv-ar,a2a-gemm,ring-attn --ranks 4
suite 100 $app/suite.mjs suite.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 4
kill %1 2>/dev/null
