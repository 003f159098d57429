#!/usr/bin/env bash
# Device call 4 of 2026-11-25 (H100, nvidia-h100-x1): what Dawn's safety toggles and the staging's
# register prefetch cost the f16 GEMM. Pack: pnpm bench:build && bash ../shared/device/pack.sh
# dist/matmul.mjs dist/gemm-sweep.mjs. Toggle sets, each for the whole process (SYNCOPATE_DAWN_ENABLE /
# _DISABLE, runtime/src/gpu.ts): T0 Dawn's defaults; T1 disable_robustness; T2 T1 + disable_workgroup_init;
# T3 T2 with the Vulkan memory model off. Every timed kernel is checked at its shape (sampled rows, f64).
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
T0=(env)
T1=(env SYNCOPATE_DAWN_ENABLE=disable_robustness)
T2=(env SYNCOPATE_DAWN_ENABLE=disable_robustness,disable_workgroup_init)
T3=(env SYNCOPATE_DAWN_ENABLE=disable_robustness,disable_workgroup_init SYNCOPATE_DAWN_DISABLE=use_vulkan_memory_model)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
for t in 0 1; do
  declare -n T=T$t
  step 60 "${T[@]}" node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 8192,4096 --out "$OUT/emitted-T$t"
  step 75 "${T[@]}" node $app/gemm-sweep.mjs --set occupancy --size 8192 --out "$OUT/sweep-T$t"
done
step 45 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 8192 --dtypes f16
grep '"peer": *"cublas"' "$log" >"$OUT/cublas.jsonl" || true
# What Tint hands the driver, with and without robustness (SPIR-V disassembly on stdout).
dump() { local name=$1; shift; echo "=== $(date +%T) dump $name" >>"$log"; timeout 25 "$@" >"$OUT/$name.txt" 2>&1; echo "=== rc=$?" >>"$log"; }
dump spirv-sweep-T0 env SYNCOPATE_DAWN_ENABLE=dump_shaders node $app/gemm-sweep.mjs --set occupancy --only "staged 128x128x64 pad8 sg4x2 f2x4" --size 512
dump spirv-sweep-T1 env SYNCOPATE_DAWN_ENABLE=disable_robustness,dump_shaders node $app/gemm-sweep.mjs --set occupancy --only "staged 128x128x64 pad8 sg4x2 f2x4" --size 512
dump spirv-emitted-T0 env SYNCOPATE_DAWN_ENABLE=dump_shaders node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 512
dump spirv-emitted-T1 env SYNCOPATE_DAWN_ENABLE=disable_robustness,dump_shaders node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 512
step 50 "${T2[@]}" node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 8192,4096 --out "$OUT/emitted-T2"
step 50 "${T2[@]}" node $app/gemm-sweep.mjs --set occupancy --only "staged 128x128x64 pad8 sg4x2 f2x4,staged 128x256x16" --size 8192 --out "$OUT/sweep-T2"
step 50 "${T3[@]}" node $app/matmul.mjs --tiles 128x128x64:4x2 --sizes 8192,4096 --out "$OUT/emitted-T3"
xz -T0 "$OUT"/spirv-*.txt 2>/dev/null
kill %1 2>/dev/null
