#!/usr/bin/env bash
# Device call 4: call 3 found the JS thread running user code in its gaps (not blocked in a system
# call), and --prof put a run's ticks in GC, bytecode compilation and libc under the copier's move().
# Now the watch also lists garbage collections (PerformanceObserver 'gc'), and the process writes its
# /proc/self/maps (libraries loaded after start, for the --prof ticks) and V8's start time; the
# machine's libc comes back for symbols.
#   1. placed-timeline --watch-js-thread: ag-gemm f32, gemm-rs f16 (no profiler);
#   2. the same ag-gemm under node --prof.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
mkdir -p /tmp/w /tmp/prof
tl="node $app/placed-timeline.mjs --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp/w"
step 60 $tl --only ag-gemm --dtype f32
step 60 $tl --only gemm-rs --dtype f16
cd /tmp/prof
step 90 node --prof --prof-sampling-interval=100 $app/placed-timeline.mjs --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp/prof --only ag-gemm --dtype f32
cd - >/dev/null
cp /usr/lib/x86_64-linux-gnu/libc.so.6 /tmp/prof/ 2>>"$log"
tar -C /tmp/prof -cJf "$OUT/prof.tar.xz" .
