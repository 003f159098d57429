#!/usr/bin/env bash
# Device call 3 (session of 01:27 UTC, one H100: nvidia-h100-x1): store-through again (st, the working
# tree), now writing a store's elements through one by one with constant register indices (call 2's
# loop kept the accumulator out of registers: a2a-gemm fused 39 ms), against base (call 2's bundle,
# storeThrough off: the code before), arms alternating on a2a-gemm and embed-a2a; then the suite's
# ag-gemm f16 and f32 and gemm-rs f32 rows on st (their WGSL is base's: no chunk of theirs qualifies).
# Pack: pnpm build && pnpm bench:build (st) into /tmp/v3 with call 2's suite-base.mjs, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v3
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v3
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; sed "s/^{/{\"arm\":\"$v\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for v in st base st base; do suite $v 45 --only a2a-gemm --dtype f32; done
for v in st base st base; do suite $v 40 --only embed-a2a --dtype f32; done
suite st 150 --only ag-gemm --dtype f16
suite st 80 --only ag-gemm --dtype f32
suite st 80 --only gemm-rs --dtype f32
true
