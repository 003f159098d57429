#!/usr/bin/env bash
# Device call 8: call 7 again, the same bundle byte for byte (the eight two-device rows, f32 then f16,
# 40 rounds, clocks sampled), without the peers: does a row's ratio hold from one invocation to the next?
# Pack: as call 7 (pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node)
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/suite.mjs >>"$log"
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 50 >/tmp/clocks.csv 2>/dev/null &
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 40 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$(date +%H%M%S).md" 2>/dev/null; }
suite 160 --dtype f32
suite 90 --dtype f16 --only ag-gemm,gemm-rs
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
