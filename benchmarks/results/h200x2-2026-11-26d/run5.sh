#!/usr/bin/env bash
# Device call 5: does the host link's speed follow the staging a transfer keeps busy? Call 4: with
# every piece of a 32 MiB transfer in flight (ring 8 x 4 MiB) ag-gemm f32's communication alone took
# 5.1-5.4 ms in both invocations, with ring 4 2.2 and 5.2 (and 3.2, 6.1 before the plan change).
# host-link-probe.mjs --sweep: 32 MiB transfers one way, the other, both at once, for ring depths 2-16
# and pieces of 1, 2, 4 MiB, each setting twice; three processes as they are, two with libuv's pool at 8.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/host-link-probe.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
probe() { step 60 "$@" node $app/host-link-probe.mjs --sweep --label "$*"; }
probe env
probe env UV_THREADPOOL_SIZE=8
probe env
probe env UV_THREADPOOL_SIZE=8
probe env
grep '^{' "$log" >"$OUT/host-link.jsonl"
