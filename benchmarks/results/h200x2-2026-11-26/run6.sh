#!/usr/bin/env bash
# Device call 6 (the last 4 minutes of the session's device time): the four-rank two-device rows with
# the fused variant's own communication timed alone as a sixth part (fusedCommOnlyMs), which the cost
# model now predicts fused from; 20 timed runs a part, every variant checked at the timed shape.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
export SYNCOPATE_DAWN_ENABLE=disable_robustness
nvidia-smi -L >>"$log" 2>&1
echo "=== $(date +%T) suite f32 four-rank rows" >>"$log"
timeout 170 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out "$OUT" --dtype f32 --only ring-attn,a2a-gemm,embed-a2a,gemv-ar >>"$log" 2>&1
echo "=== $(date +%T) rc=$?" >>"$log"
