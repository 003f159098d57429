#!/usr/bin/env bash
# Device call 2: what holds the JS thread when a transfer's last host copies show done 10-20 ms late
# (call 1's timelines): placed-timeline --watch-js-thread (slow WebGPU calls, gaps between the
# thread's turns) at busy clocks, ag-gemm f32 and gemm-rs f16 (2 ranks), twice each; and which
# tracing tools the machine has.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
step 5 bash -c 'for t in perf strace gdb ltrace bpftrace nsys; do printf "%s: %s\n" $t "$(command -v $t || echo none)"; done; cat /proc/sys/kernel/perf_event_paranoid'
mkdir -p /tmp/t
for i in 1 2; do
  step 60 node $app/placed-timeline.mjs --only ag-gemm --dtype f32 --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp/t
  step 60 node $app/placed-timeline.mjs --only gemm-rs --dtype f16 --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp/t
done
