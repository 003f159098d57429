#!/usr/bin/env bash
# Device call 2 (session of 01:27 UTC, one H100: nvidia-h100-x1): copies stored through by their
# source tiles (st, the working tree: backends gpu-signal/store-through.ts) against the code before
# (base: the same build with storeThrough off by default), arms alternating on the rows it changes
# (a2a-gemm, embed-a2a); then the suite's gemv-ar, ring-attn and gemm-rs f16 rows on st.
# Pack: pnpm build && pnpm bench:build (st), again with the default flipped (base), into /tmp/v2, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v2
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v2
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; sed "s/^{/{\"arm\":\"$v\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for v in st base st base; do suite $v 45 --only a2a-gemm --dtype f32; done
for v in st base st base; do suite $v 40 --only embed-a2a --dtype f32; done
suite st 45 --only gemv-ar --dtype f32
suite st 45 --only ring-attn --dtype f32
suite st 130 --only gemm-rs --dtype f16
true
