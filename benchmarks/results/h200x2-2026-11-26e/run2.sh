#!/usr/bin/env bash
# Device call 2: call 1's sweep had two pieces in flight with eight read back ahead (ring 2, read-ahead 8)
# as fast beside compute as alone; and pinned probes were never in the slow mode (26d call 1). Four
# arms twice, alternating (f32, two-device rows of ag-gemm, gemm-rs, a2a-gemm, 20 rounds):
#   ra4          suite.mjs (defaults: ring 4, read-ahead 4)
#   r2ra8        suite.mjs --ring 2 --read-ahead 8
#   ra4-pin      taskset -c 0-7 node suite.mjs
#   r2ra8-pin    taskset -c 0-7 node suite.mjs --ring 2 --read-ahead 8
# then ag-gemm f32's placed timeline at busy clocks, GPU timestamps, with each copier.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
suite() { local arm=$1; shift; rm -rf /tmp/s; step 100 "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --dtype f32 --only ag-gemm,gemm-rs,a2a-gemm --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for i in 1 2; do
  suite ra4 node $app/suite.mjs
  suite r2ra8 node $app/suite.mjs --ring 2 --read-ahead 8
  suite ra4-pin taskset -c 0-7 node $app/suite.mjs
  suite r2ra8-pin taskset -c 0-7 node $app/suite.mjs --ring 2 --read-ahead 8
done
mkdir -p /tmp/t
step 90 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --gpu-timestamps --out /tmp/t
step 90 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --gpu-timestamps --ring 2 --read-ahead 8 --out /tmp/t
tar -C /tmp/t -cJf "$OUT/timelines.tar.xz" .
