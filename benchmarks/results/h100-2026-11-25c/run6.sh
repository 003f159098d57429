#!/usr/bin/env bash
# Device call 6 (2026-11-25 night, H100, nvidia-h100-x1): the loop's barriers cost a third (call 3's
# probe) while all eight subgroups do the same phase at once. Does the order within a step help: the
# next substep's matrix loads before this one's MMAs, the next step's stores among the MMAs
# (gemm-sweep --set interleave, 8192³ and 4096³)?
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/gemm-sweep.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 200 node $app/gemm-sweep.mjs --set interleave --size 8192 --out "$OUT/sweep8192"
step 150 node $app/gemm-sweep.mjs --set interleave --size 4096 --out "$OUT/sweep4096"
kill %1 2>/dev/null
