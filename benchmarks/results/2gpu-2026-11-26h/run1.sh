#!/usr/bin/env bash
# Device call 1: the host copy's stores. In a two-device run the host copies between mapped ranges
# are the transfer's bound (2 x 32 MiB at 11-16 GB/s on libuv's 4 threads; one thread moves 5.5-8
# GB/s between mapped ranges, h200x2-2026-11-26b call 1). A plain memcpy of a 1 MiB slice reads each
# destination line in before overwriting it; non-temporal (streaming) stores do not.
#   1. peercopy --probes-only, libuv pool 16: mapped -> mapped at 4 and 64 MiB, 1-16 threads, cached
#      and streaming stores, each checked byte for byte.
#   2. the suite's two-device GEMM rows (2 ranks on 2 GPUs, 20 rounds), arms alternating:
#      cached (default), streaming (--copy-stores streaming), streaming8 (pool of 8, 8 slices a piece).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/peercopy.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
nproc >>"$log"
step 60 env UV_THREADPOOL_SIZE=16 node $app/peercopy.mjs --probes-only --src 0 --dst 1 --out $OUT/probes
suite() { local arm=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
arms() {
  local limit=$1; shift
  suite cached "$limit" node $app/suite.mjs "$@"
  suite streaming "$limit" node $app/suite.mjs "$@" --copy-stores streaming
  suite streaming8 "$limit" env UV_THREADPOOL_SIZE=8 node $app/suite.mjs "$@" --copy-stores streaming --copy-threads 8
}
for i in 1 2; do arms 60 --dtype f32 --only ag-gemm,gemm-rs; done
suite cached 75 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs
suite streaming 75 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs --copy-stores streaming
