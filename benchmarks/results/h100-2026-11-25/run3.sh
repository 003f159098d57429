#!/usr/bin/env bash
# The third device call of 2026-11-25 (H100): call 2's fused gemv-ar (4 ranks, f32, parts per tile)
# did not match the reference. Is it a race the acquire barrier before a part's move fixes?
#   pnpm bench:build && bash ../shared/device/pack.sh dist/rs-probe.mjs <dir>/nofix
# <dir>/nofix/rs-probe.mjs is the same probe built without that barrier (commit a34dfb8's emit-signal.ts).
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
step 50 node $app/nofix/rs-probe.mjs --workload gemv-ar --shape 16x8192x8192 --ranks 4 --dtype f32 --repeat 3 --out /tmp/nofix
cp /tmp/nofix/rs-probe.jsonl "$OUT/gemv-ar-nofix.jsonl" 2>/dev/null
step 50 node $app/rs-probe.mjs --workload gemv-ar --shape 16x8192x8192 --ranks 4 --dtype f32 --repeat 3 --out /tmp/fix
cp /tmp/fix/rs-probe.jsonl "$OUT/gemv-ar-fix.jsonl" 2>/dev/null
step 70 node $app/rs-probe.mjs --size 4096 --ranks 2 --out /tmp/rs
cp /tmp/rs/rs-probe.jsonl "$OUT/gemm-rs-fix.jsonl" 2>/dev/null
