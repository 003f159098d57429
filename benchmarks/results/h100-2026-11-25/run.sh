#!/usr/bin/env bash
# The device call of 2026-11-25 (H100, nvidia-h100-x1), from the project root with .devpack carried:
#   pnpm bench:build && bash ../shared/device/pack.sh dist/matmul.mjs dist/suite.mjs dist/rs-probe.mjs dist/peercopy.mjs dist/gemm-sweep.mjs <dir with before/matmul.mjs>
# before/matmul.mjs is the matmul bench built from commit 2ba910c (the emitted kernel before its edge
# registers went), so the baseline runs in the same call. Every step has its own time limit; all
# output goes to $OUT/log.txt, the results beside it.
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
tiles=128x128x64:4x2,128x256x16
step 100 node $app/matmul.mjs --tiles $tiles --sizes 4096,8192,4000x3000x1000 --out /tmp/after
cp /tmp/after/matmul-tiles.json "$OUT/matmul-tiles.json"
step 60 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 8192 --dtypes f16 f32
grep '^{' "$log" | grep -i cublas >"$OUT/cublas.jsonl" || true
step 200 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --dtype f16 --only gemm-rs,ag-gemm --one-device --ranks 2,4,8 --out /tmp/suite
cp /tmp/suite/suite.jsonl "$OUT/suite.jsonl" 2>/dev/null
step 50 node $app/before/matmul.mjs --tiles 128x128x64:4x2 --sizes 4096,8192 --out /tmp/before
cp /tmp/before/matmul-tiles.json "$OUT/matmul-tiles-before.json" 2>/dev/null
step 40 node $app/gemm-sweep.mjs --set focus --only "staged 128x128x64 pad8 sg4x2 f2x4" --size 8192 --out /tmp/sweep
step 70 node $app/rs-probe.mjs --size 4096 --ranks 2,8 --out "$OUT"
# Where the host copy out of mapped read-back memory runs: NUMA layout, then the probes per node.
{ nproc; ls -d /sys/devices/system/node/node* ; cat /sys/devices/system/node/node*/cpulist; nvidia-smi topo -m; command -v numactl taskset; } >>"$log" 2>&1
step 30 node $app/peercopy.mjs --probes-only --no-peer --out /tmp/pc-default
for n in /sys/devices/system/node/node*; do
  step 30 taskset -c "$(cat $n/cpulist)" node $app/peercopy.mjs --probes-only --no-peer --out /tmp/pc-$(basename $n)
done
grep -E '^=== .*peercopy|"probe-' "$log" >"$OUT/peer-probes.txt" || true
kill %1 2>/dev/null
