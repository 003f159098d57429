#!/usr/bin/env bash
# Device call 1 (2026-11-25, late night, nvidia-h100-x2: two H100s of one host): the suite's rows with
# ranks on two devices, one device per GPU (f16 GEMMs, then every workload in f32; each timed kernel
# checked at its timed shape; communication timed alone), the trace of one fused ag-gemm run over the
# two GPUs, and the peer-copy copier between the GPUs beside PyTorch's pinned host copies.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/peercopy.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
{ nvidia-smi -L; nvidia-smi topo -m; echo "DEVPACK_GPUS=$DEVPACK_GPUS"; } >>"$log" 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
rm -rf /tmp/s; step 200 node $app/suite.mjs --quick --size 4096 --no-sweeps --devices 2 --dtype f16 --only ag-gemm,gemm-rs --out /tmp/s
cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/trace.json "$OUT/trace-ag-gemm-f16.json" 2>/dev/null
rm -rf /tmp/s; step 260 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --dtype f32 --out /tmp/s
cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null
step 150 node $app/peercopy.mjs --src 0 --dst 1 --out "$OUT"
kill %1 2>/dev/null
