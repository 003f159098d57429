#!/usr/bin/env bash
# Device call 4 (session of 01:27 UTC, one H100: nvidia-h100-x1): where a2a-gemm's fused time goes
# (rs-probe on the working tree, whose kernels are the session's starting code's): fused, the chunks no
# tile waits on unpublished (its combine), its dispatch cut 4 and 16 times coarser (fewer, larger
# token workgroups), compute alone in the fused order and row-major; embed-a2a and ag-gemm f16 likewise.
# Pack: pnpm build && pnpm bench:build, rs-probe bundle into /tmp/v4, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v4
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v4
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { rm -rf /tmp/p; step 120 node $app/rs-probe.mjs --out /tmp/p "$@"; cat /tmp/p/*.jsonl >>"$OUT/probe.jsonl" 2>/dev/null; }
probe --workload a2a-gemm --ranks 4 --dtype f32
probe --workload embed-a2a --ranks 4 --dtype f32
probe --workload ag-gemm --ranks 8 --dtype f16
probe --workload a2a-gemm --ranks 4 --dtype f32
true
