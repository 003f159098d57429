#!/usr/bin/env bash
# Device call 1 (session of 01:27 UTC, one H100: nvidia-h100-x1): tiles that wait on nothing run among
# a phase's tokens (CodegenOptions.tilesPerToken): k0 = every token first (the code before), k1 = at
# most one tile a token, kall = every such tile. rs-probe a2a-gemm on k0 (fused, compute, compute-rm), then
# the suite's rows with tokens (a2a-gemm f32, ag-gemm f16 and f32), arms alternating.
# Pack: pnpm build && pnpm bench:build per TILES_PER_TOKEN, bundles into /tmp/v1, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v1
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v1
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local v=$1; shift; rm -rf /tmp/p; step 70 node $app/rs-probe-$v.mjs --out /tmp/p "$@"; cat /tmp/p/*.jsonl >>"$OUT/probe.jsonl" 2>/dev/null; }
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; sed "s/^{/{\"arm\":\"$v\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
probe k0 --workload a2a-gemm --ranks 4 --dtype f32

for v in k0 k1 k0 k1; do suite $v 40 --only a2a-gemm --dtype f32; done
for v in k0 k1 kall; do suite $v 100 --only ag-gemm --dtype f16; done
for v in k0 kall; do suite $v 70 --only ag-gemm --dtype f32; done
true
