#!/usr/bin/env bash
# Device call 5 of 2026-11-25 (H100, nvidia-h100-x1). Pack: pnpm bench:build && bash ../shared/device/pack.sh
# dist/matmul.mjs dist/suite.mjs dist/rs-probe.mjs. (1) gemv-ar with the one-shot all-reduce, which now takes
# a part per tile (nothing reads a rewritten region again): repeated to catch a race, beside the ring; (2) the
# f16 GEMM workloads fused vs sequential with Dawn's bounds checks off (the faster GEMM on both sides);
# (3) the emitted GEMM without bounds checks at the other shapes. Every timed variant is verified as timed.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
step 80 node $app/rs-probe.mjs --workload gemv-ar --shape 16x8192x8192 --ranks 4 --dtype f32 --reduction one-shot --repeat 6 --out "$OUT/gemv-one-shot"
step 50 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f32 --only gemv-ar --one-device --ranks 4 --reduction one-shot --out "$OUT/suite-gemv-one-shot"
step 40 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f32 --only gemv-ar --one-device --ranks 4 --out "$OUT/suite-gemv-ring"
step 200 env SYNCOPATE_DAWN_ENABLE=disable_robustness node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f16 --only gemm-rs,ag-gemm --one-device --ranks 2,4,8 --out "$OUT/suite-f16-unchecked"
step 70 env SYNCOPATE_DAWN_ENABLE=disable_robustness node $app/matmul.mjs --tiles 128x128x64:4x2,128x256x16 --sizes 4096,4000x3000x1000 --out "$OUT/matmul-unchecked"
step 60 env SYNCOPATE_DAWN_ENABLE=disable_robustness node $app/rs-probe.mjs --workload gemm-rs --size 4096 --ranks 8 --dtype f16 --out "$OUT/rs-probe-unchecked"
kill %1 2>/dev/null
# Only a few files come back: keep the JSON lines in three files beside the log.
cat "$OUT"/gemv-one-shot/*.jsonl "$OUT"/rs-probe-unchecked/*.jsonl >"$OUT/rs-probe.jsonl" 2>/dev/null
cat "$OUT"/suite-*/suite.jsonl >"$OUT/suite.jsonl" 2>/dev/null
cp "$OUT"/matmul-unchecked/matmul-tiles.json "$OUT/matmul-tiles.json" 2>/dev/null
rm -rf "$OUT"/gemv-one-shot "$OUT"/rs-probe-unchecked "$OUT"/suite-* "$OUT"/matmul-unchecked
