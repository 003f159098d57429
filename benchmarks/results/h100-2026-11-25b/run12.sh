#!/usr/bin/env bash
# Device call 12 (2026-11-25 evening, H100, nvidia-h100-x1): chunk moves at four elements a round
# (.devpack/app/suite.mjs, the committed code) against eight (.devpack/app/u8/suite.mjs: the same
# commit with MOVE_UNROLL = 8) on the rows where moves cost most, back to back; then ring-attn at 2
# and 8 ranks: does the fused kernel's distance from its compute alone grow with the number of waits
# in its KV loop (2·R·(R−1) of them)?
# Pack: pnpm bench:build (with MOVE_UNROLL = 8: cp dist/suite.mjs <dir>/u8/) and
#   bash ../shared/device/pack.sh dist/suite.mjs <dir>/u8
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
# suite LIMIT BUNDLE RESULT-FILE ARGS...: one suite step; its rows appended to $OUT/RESULT-FILE.
suite() { local limit=$1 bundle=$2 into=$3; shift 3; rm -rf /tmp/s; step "$limit" node "$bundle" --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite 130 $app/suite.mjs suite-u4.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 8
suite 130 $app/u8/suite.mjs suite-u8.jsonl --dtype f16 --only gemm-rs,ag-gemm --ranks 8
suite 40 $app/suite.mjs suite-u4.jsonl --dtype f32 --only embed-a2a --ranks 4
suite 40 $app/u8/suite.mjs suite-u8.jsonl --dtype f32 --only embed-a2a --ranks 4
suite 120 $app/suite.mjs suite-u4.jsonl --dtype f32 --only ring-attn --ranks 2,8
kill %1 2>/dev/null
