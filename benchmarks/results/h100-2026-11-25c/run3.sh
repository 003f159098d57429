#!/usr/bin/env bash
# Device call 3 (2026-11-25 night, H100, nvidia-h100-x1): call 2 found words fetched two steps ahead
# worth only 2-5%. Are the loads waited for at each barrier (probes without the loop's barriers, one
# and two register sets)? Do smaller workgroups, several to an SM, hide them better
# (gemm-sweep --set occupancy-barrier, 8192³ and 4096³)?
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/gemm-sweep.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 >"$OUT/clocks.csv" 2>/dev/null &
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 200 node $app/gemm-sweep.mjs --set occupancy-barrier --size 8192 --out "$OUT/sweep8192"
step 150 node $app/gemm-sweep.mjs --set occupancy-barrier --size 4096 --out "$OUT/sweep4096"
kill %1 2>/dev/null
