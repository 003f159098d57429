#!/usr/bin/env bash
# Device call 1 (2026-11-25 night, H100, nvidia-h100-x1): where a staged GEMM step's time goes
# (gemm-sweep --set where: as is, rotated 2-byte stores, probes leaving out stores, global loads or
# workgroup matrix loads), then the emitted kernel with rotated stores (.devpack/app/matmul.mjs)
# against the one before (.devpack/app/before/, commit c8b3b66), and cuBLAS, in one call.
# Pack: pnpm bench:build && (bundle at c8b3b66 in /tmp/pk/before) && bash ../shared/device/pack.sh dist/gemm-sweep.mjs dist/matmul.mjs /tmp/pk/before
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 170 node $app/gemm-sweep.mjs --set where --size 8192 --out "$OUT/sweep8192"
tiles=128x128x64:4x2,128x256x16
for round in 1 2; do
  step 100 node $app/matmul.mjs --tiles $tiles --sizes 8192,4096,4000x3000x1000 --out "$OUT/after$round"
  step 100 node $app/before/matmul.mjs --tiles $tiles --sizes 8192,4096,4000x3000x1000 --out "$OUT/before$round"
done
step 60 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 8192 --dtypes f16
kill %1 2>/dev/null
