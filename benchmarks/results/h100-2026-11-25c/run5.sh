#!/usr/bin/env bash
# Device call 5 (2026-11-25 night, H100, nvidia-h100-x1): the hand-written sweep's best tile,
# 128x256x32 (one copy; calls 2 and 4), as the compiler emits it, beside the tiles the tuner tries
# now, at 8192³, 4096³ and 4000×3000×1000; cuBLAS at the same three shapes in the same call.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/matmul.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 200 node $app/matmul.mjs --tiles 128x256x32,128x256x16,128x128x64:4x2 --sizes 8192,4096,4000x3000x1000 --out "$OUT/tiles"
step 90 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 8192 --shapes 4000x3000x1000 --dtypes f16
kill %1 2>/dev/null
