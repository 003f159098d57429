#!/usr/bin/env bash
# Device call 4 (final): the suite's eight two-device rows on the final code (the bench timing its five
# parts in settled blocks of 10, in turn, 3 rounds; every device submitting its phase before that
# phase's transfers start), every variant checked at the timed shape; one host-clock timeline of
# embed-a2a; the peers on the same machine (cuBLAS, PyTorch pinned copies, NCCL, async TP) and our
# host copier GPU 0 -> GPU 1.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/placed-timeline.mjs dist/peercopy.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
{ nvidia-smi -L; nvidia-smi topo -m; } >>"$log" 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >/tmp/clocks.csv 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 110 --dtype f16 --only ag-gemm,gemm-rs
suite 250 --dtype f32
step 40 node $app/placed-timeline.mjs --only embed-a2a --runs 5 --out /tmp
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
step 60 node $app/peercopy.mjs --src 0 --dst 1 --out "$OUT"
PEERS_BUDGET_S=100 PEERS_TIMEOUT_S=40 bash benchmarks/peers/run_all.sh "$OUT" >>"$log" 2>&1
