#!/usr/bin/env bash
# Device call 5 (session of 01:27 UTC, one H100: nvidia-h100-x1): the suite's a2a-gemm row with the
# phasing trial now on one device (--tune-phasing, commit 5a709cc's tuner), twice; then rs-probe on
# ag-gemm with its gather cut finer and coarser (parts-x0.25 / x0.5 / x4: 0.25 to 4 times
# PART_ELEMENTS a part) at f16 8 and 4 ranks and f32 8 ranks.
# Pack: pnpm build && pnpm bench:build, suite and rs-probe bundles into /tmp/v5, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v5
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v5
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
probe() { rm -rf /tmp/p; step 120 node $app/rs-probe.mjs --out /tmp/p "$@"; cat /tmp/p/*.jsonl >>"$OUT/probe.jsonl" 2>/dev/null; }
suite 90 --only a2a-gemm --dtype f32 --tune-phasing
suite 90 --only a2a-gemm --dtype f32 --tune-phasing
probe --workload ag-gemm --ranks 8 --dtype f16
probe --workload ag-gemm --ranks 4 --dtype f16
probe --workload ag-gemm --ranks 8 --dtype f32
true
