#!/usr/bin/env bash
# The device call of 2026-11-25 (H100, nvidia-h100-x1), from the project root with .devpack carried:
#   pnpm bench:build && bash ../shared/device/pack.sh dist/matmul.mjs dist/suite.mjs dist/rs-probe.mjs \
#     dist/peercopy.mjs dist/gemm-sweep.mjs <dir>/before
# <dir>/before/matmul.mjs is the matmul bench built from commit 2ba910c (the emitted kernel before its
# edge registers went), so the baseline runs in the same call. Steps run in order of importance, each
# under its own time limit; all output goes to $OUT/log.txt, the results beside it.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
# 1. The emitted f16 GEMM tile by tile (each timed kernel checked on sampled rows), then cuBLAS.
step 90 node $app/matmul.mjs --tiles 128x128x64:4x2,128x256x16 --sizes 4096,8192,4000x3000x1000 --out /tmp/after
cp /tmp/after/matmul-tiles.json "$OUT/matmul-tiles.json"
step 45 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 8192 --dtypes f16 f32
grep '"peer": *"cublas"' "$log" >"$OUT/cublas.jsonl" || true
# 2. Where fused gemm-rs time goes, parts per tile against parts per row band.
step 70 node $app/rs-probe.mjs --size 4096 --ranks 2,8 --out "$OUT"
# 3. The f16 GEMM workloads three ways, every variant verified as timed.
step 180 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f16 --only gemm-rs,ag-gemm --one-device --ranks 2,4,8 --out /tmp/suite
cp /tmp/suite/suite.jsonl "$OUT/suite.jsonl" 2>/dev/null
# 4. Baselines in the same call: the emitted kernel before this session, the hand-written kernel of the tile.
step 40 node $app/before/matmul.mjs --tiles 128x128x64:4x2 --sizes 4096,8192 --out /tmp/before
cp /tmp/before/matmul-tiles.json "$OUT/matmul-tiles-before.json" 2>/dev/null
step 30 node $app/gemm-sweep.mjs --set focus --only "staged 128x128x64 pad8 sg4x2 f2x4" --size 8192 --out /tmp/sweep
# 5. Where the host copy out of mapped read-back memory runs: NUMA layout, then the probes per node.
{ nproc; ls -d /sys/devices/system/node/node*; cat /sys/devices/system/node/node*/cpulist; nvidia-smi topo -m; } >>"$log" 2>&1
step 25 node $app/peercopy.mjs --probes-only --no-peer --out /tmp/pc-default
for n in /sys/devices/system/node/node*; do
  step 25 taskset -c "$(cat $n/cpulist)" node $app/peercopy.mjs --probes-only --no-peer --out /tmp/pc-$(basename $n)
done
grep -E '^=== .*peercopy|"probe-' "$log" >"$OUT/peer-probes.txt" || true
kill %1 2>/dev/null
