#!/usr/bin/env bash
# Device call 3: the copy threads again, now that a copy's slices settle one promise (the addon cuts
# and counts them: host_copy.c) instead of a promise a slice. Call 2 (a promise a slice) found more
# threads no faster and 16 slices a piece 1.4x slower. Arms, alternating (the suite's two-device GEMM
# rows, 20 rounds; streaming stores in all):
#   s4     default: libuv's pool of 4, 4 slices a piece
#   s8     UV_THREADPOOL_SIZE=8, 8 slices a piece
#   s16x8  UV_THREADPOOL_SIZE=16, 8 slices a piece
# f32 twice each arm, then f16 with s4 and s8.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local arm=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
f32() {
  suite s4 60 node $app/suite.mjs "$@"
  suite s8 60 env UV_THREADPOOL_SIZE=8 node $app/suite.mjs "$@" --copy-threads 8
  suite s16x8 60 env UV_THREADPOOL_SIZE=16 node $app/suite.mjs "$@" --copy-threads 8
}
for i in 1 2; do f32 --dtype f32 --only ag-gemm,gemm-rs; done
suite s4 95 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs
suite s8 95 env UV_THREADPOOL_SIZE=8 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs --copy-threads 8
true
