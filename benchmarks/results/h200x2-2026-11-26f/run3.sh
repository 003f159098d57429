#!/usr/bin/env bash
# Device call 3: call 2 found the JS thread away from its event loop for 8-30 ms with no slow WebGPU
# call of ours in the gap, and the late host copies seen done at the gap's end. What the thread does
# in the gap:
#   1. placed-timeline --watch-js-thread now samples /proc/self/task/<pid>/syscall from a worker
#      (user code, or blocked in which system call), ag-gemm f32 twice and gemm-rs f16 once;
#   2. the same under node --prof (which library and function the ticks in a gap fall in);
#   3. the same under strace -f -T -tt (each system call of each thread, with its time).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs dist/host_copy.node,
#       then mkdir .devpack/extra && cp strace_6.1-0.1_amd64.deb .devpack/extra/ and libunwind8_*.deb (apt-get download strace libunwind8, Debian bookworm)
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
tl="node $app/placed-timeline.mjs --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp"
if [ "${1:-}" != "--tools-only" ]; then  # the second run of this call (after fixing the --prof flag and strace's library) skipped these
step 60 $tl --only ag-gemm --dtype f32
step 60 $tl --only gemm-rs --dtype f16
step 60 $tl --only ag-gemm --dtype f32
fi
mkdir -p /tmp/prof && cd /tmp/prof
step 90 node --prof --prof-sampling-interval=200 $app/placed-timeline.mjs --ranks 2 --runs 5 --busy-ms 500 --watch-js-thread --out /tmp --only ag-gemm --dtype f32
cd - >/dev/null
tar -C /tmp/prof -cJf "$OUT/prof.tar.xz" .
for d in .devpack/extra/*.deb; do dpkg -x $d /tmp/straceroot; done
mkdir -p /tmp/st
step 120 env LD_LIBRARY_PATH=/tmp/straceroot/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} /tmp/straceroot/usr/bin/strace -f -T -tt -o /tmp/st/strace.txt node $app/placed-timeline.mjs --ranks 2 --runs 3 --busy-ms 500 --watch-js-thread --out /tmp --only ag-gemm --dtype f32
ls -la /tmp/st >>"$log"
tar -C /tmp/st -cJf "$OUT/strace.tar.xz" .
