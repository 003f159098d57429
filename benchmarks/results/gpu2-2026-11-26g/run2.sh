#!/usr/bin/env bash
# Device call 2: the host copy's threads. Call 1's queue probe found a copy and a compute submission
# on one queue never overlap, so only the host's part of a transfer (its copies between mapped
# ranges, its round trips) can hide under compute; the copies of both directions share libuv's pool
# of 4 threads. Arms, alternating (suite, 2 ranks on 2 GPUs, 20 rounds):
#   pool4      default: UV_THREADPOOL_SIZE unset (4), a piece cut into 4 slices
#   pool16s4   UV_THREADPOOL_SIZE=16, --copy-threads 4 (4 slices a piece: the lanes of both
#              transfers, 8 pieces, keep 16 threads busy)
#   pool16s16  UV_THREADPOOL_SIZE=16, 16 slices a piece (what the copier does with a pool of 16)
# f32 ag-gemm and gemm-rs twice each arm, then f16 ag-gemm and gemm-rs once each arm.
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
arms() {
  local limit=$1; shift
  suite pool4 "$limit" node $app/suite.mjs "$@"
  suite pool16s4 "$limit" env UV_THREADPOOL_SIZE=16 node $app/suite.mjs "$@" --copy-threads 4
  suite pool16s16 "$limit" env UV_THREADPOOL_SIZE=16 node $app/suite.mjs "$@"
}
for i in 1 2; do arms 60 --dtype f32 --only ag-gemm,gemm-rs; done
arms 75 --dtype f16 --only ag-gemm,gemm-rs
