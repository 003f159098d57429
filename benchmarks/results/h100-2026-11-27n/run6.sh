#!/usr/bin/env bash
# Device call 6 (session of 01:27 UTC, one H100: nvidia-h100-x1): parts cut in rows of 64 KiB whatever
# the dtype (p64k, the working tree: PART_BYTES) against 32,768 elements (base, 5a709cc: 128 KiB in
# f32, 64 KiB in f16, so only f32 rows change), arms alternating, on the suite's f32 rows whose chunks
# are cut in rows: ag-gemm (twice), ring-attn, a2a-gemm, gemv-ar.
# Pack: pnpm build && pnpm bench:build on the working tree (p64k) and on 5a709cc (base), into /tmp/v6, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v6
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v6
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; sed "s/^{/{\"arm\":\"$v\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for v in p64k base p64k base; do suite $v 80 --only ag-gemm --dtype f32; done
for w in ring-attn a2a-gemm gemv-ar; do for v in p64k base; do suite $v 50 --only $w --dtype f32; done; done
true
