#!/usr/bin/env bash
# Device call 13 (2026-11-25 evening, H100, nvidia-h100-x1): a run of waits sharing one spin (emitWaits)
# against one spin inlined per wait (.devpack/app/before/suite.mjs, built at commit bfaf9a0) on
# ring-attn, back to back; then the whole one-device suite on the new code.
# Pack: pnpm bench:build (at bfaf9a0: cp dist/suite.mjs <dir>/before/) and
#   bash ../shared/device/pack.sh dist/suite.mjs <dir>/before
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
# suite LIMIT BUNDLE RESULT-FILE ARGS...: one suite step; its rows appended to $OUT/RESULT-FILE.
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite 50 $app/suite.mjs suite.jsonl --dtype f32 --only ring-attn --ranks 4
suite 50 $app/before/suite.mjs suite-before.jsonl --dtype f32 --only ring-attn --ranks 4
suite 120 $app/suite.mjs suite.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 8
suite 90 $app/suite.mjs suite.jsonl --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a --ranks 4
suite 130 $app/suite.mjs suite.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 2,4
suite 140 $app/suite.mjs suite.jsonl --dtype f32 --only gemm-rs,ag-gemm --ranks 2,4,8
kill %1 2>/dev/null
