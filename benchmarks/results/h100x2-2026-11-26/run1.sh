#!/usr/bin/env bash
# Device call 1 (2026-11-25/26 night session, nvidia-h100-x2): where the two-device rows still lose.
# (a) embed-a2a, gemv-ar, a2a-gemm (f32, 4 ranks on 2 GPUs): the three variants and the fused kernel
#     with the sequential variant's phasing (no cut for chunks between devices), each checked at the
#     timed shape, one run each recorded on the host's clock;
# (b) ag-gemm and gemm-rs f32, 2 ranks: one run recorded with GPU timestamps (each phase's GPU time),
#     with the SM clocks sampled every 10 ms beside it (is the compute after an 18 ms wait slow?).
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
nvidia-smi topo -m >>"$log" 2>&1
step 200 node $app/placed-timeline.mjs --only embed-a2a,gemv-ar,a2a-gemm --fused-sequential --runs 10 --out "$OUT"
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 10 >/tmp/clocks.csv 2>/dev/null &
step 150 node $app/placed-timeline.mjs --only ag-gemm,gemm-rs --dtype f32 --ranks 2 --runs 20 --gpu-timestamps --out "$OUT"
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
