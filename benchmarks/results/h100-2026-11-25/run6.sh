#!/usr/bin/env bash
# Device call 6 of 2026-11-25 (H100, nvidia-h100-x1): the suite's other rows, ranks sharing the device,
# Dawn's bounds checks off (SYNCOPATE_DAWN_ENABLE=disable_robustness) like call 5's f16 rows; gemv-ar now
# one-shot by default. Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { step "$@" --quick --size 4096 --no-sweeps --no-trace --one-device; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
suite 60 node $app/suite.mjs --dtype f16 --only ag-gemm --ranks 8 --out /tmp/s1
suite 200 node $app/suite.mjs --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn --ranks 4 --out /tmp/s2
suite 280 node $app/suite.mjs --dtype f32 --only gemm-rs,ag-gemm --ranks 2,4,8 --out /tmp/s3
kill %1 2>/dev/null
cat /tmp/s*/suite.jsonl >"$OUT/suite.jsonl" 2>/dev/null
