#!/usr/bin/env bash
# Device call 2: why fused ag-gemm f16 over two GPUs got slower than sequential with the native host
# copy (call 1: fused median 5.2-5.6 ms, min 2.0; sequential 3.0-3.1): host-clock timelines of its
# variants with the native copy (pool of 16, then of 4) and with the JS copy, one with GPU timestamps;
# then the suite's ag-gemm f16 row with a pool of 4.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
tl() { step 60 env "$@" node $app/placed-timeline.mjs --only ag-gemm --dtype f16 --ranks 2 --runs 10 --out "$OUT"; }
tl UV_THREADPOOL_SIZE=16 SYNCOPATE_HOST_COPY=native
tl UV_THREADPOOL_SIZE=16 SYNCOPATE_HOST_COPY=native
tl UV_THREADPOOL_SIZE=4 SYNCOPATE_HOST_COPY=native
tl SYNCOPATE_HOST_COPY=js
step 60 env UV_THREADPOOL_SIZE=16 node $app/placed-timeline.mjs --only ag-gemm --dtype f16 --ranks 2 --runs 10 --gpu-timestamps --out "$OUT"
rm -rf /tmp/s; step 90 env UV_THREADPOOL_SIZE=4 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s --dtype f16 --only ag-gemm; cp /tmp/s/suite.jsonl "$OUT/suite-pool4.jsonl"
