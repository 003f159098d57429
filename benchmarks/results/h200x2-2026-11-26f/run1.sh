#!/usr/bin/env bash
# Device call 1 (session of 09:04 UTC, 2026-11-26): what holds host copies back, and the addon's own
# copy threads that spin (bounded) for the next copy instead of sleeping.
#   1. host-link-probe --stalls: one 4 MiB copy after idle / right after a 500 ms burn / during a burn,
#      by libuv's pool, the addon's own threads (spin 0 and 2000 us) and the JS thread, on mapped
#      staging and on plain arrays; twice.
#   2. host-link-probe --sweep with libuv's pool and with own threads (spin 2000 us).
#   3. placed-timeline of ag-gemm f32 at busy clocks, libuv against own threads.
#   4. suite f32 (ag-gemm, gemm-rs, a2a-gemm, 2 devices, 20 rounds), arms alternating, twice each:
#        libuv       default copier
#        own         SYNCOPATE_HOST_COPY_WORKERS=own (spin 2000 us)
#        own-spin0   SYNCOPATE_HOST_COPY_WORKERS=own SYNCOPATE_HOST_COPY_SPIN_US=0
#   5. the ring plan (ag-gemm 4 ranks on 2 devices): suite.mjs against suite-ring-before.mjs (phases.ts of 2119104), twice.
# The addon's own threads (SYNCOPATE_HOST_COPY_WORKERS=own, a bounded spin after each copy) were
# written for this call, showed no gain (benchmarks/peer-copy.md) and were removed before any commit:
# that code is not in the history; the bundles' sha256 are at the top of call1/log.txt.
# Pack: build suite-ring-before.mjs (phases.ts of 2119104), then
#       pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/suite-ring-before.mjs dist/host-link-probe.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nproc >>"$log"
for i in 1 2; do step 40 node $app/host-link-probe.mjs --stalls --label stalls-$i; done
step 30 node $app/host-link-probe.mjs --sweep --runs 10 --label sweep-libuv
step 30 env SYNCOPATE_HOST_COPY_WORKERS=own node $app/host-link-probe.mjs --sweep --runs 10 --label sweep-own
mkdir -p /tmp/t/libuv /tmp/t/own
step 60 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --gpu-timestamps --out /tmp/t/libuv
step 60 env SYNCOPATE_HOST_COPY_WORKERS=own node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --gpu-timestamps --out /tmp/t/own
tar -C /tmp/t -cJf "$OUT/timelines.tar.xz" .
suite() { local arm=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
f32="--dtype f32 --only ag-gemm,gemm-rs,a2a-gemm --runs 20"
for i in 1 2; do
  suite libuv 60 node $app/suite.mjs $f32
  suite own 60 env SYNCOPATE_HOST_COPY_WORKERS=own node $app/suite.mjs $f32
  suite own-spin0 60 env SYNCOPATE_HOST_COPY_WORKERS=own SYNCOPATE_HOST_COPY_SPIN_US=0 node $app/suite.mjs $f32
done
ring="--dtype f32 --only ag-gemm --two-device-ranks 4 --runs 20"
for i in 1 2; do
  suite ring-before 50 node $app/suite-ring-before.mjs $ring
  suite ring 50 node $app/suite.mjs $ring
done
