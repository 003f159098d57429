#!/usr/bin/env bash
# Device call 4: a transfer between devices cut into more chunks. With one queue a device (call 1),
# only the host's part of a transfer (map, copy between mapped ranges, round trips) hides under
# compute, and call 3's timelines show each device's queue idle for most of the gap between its two
# phases, waiting on the host's copies. With C chunks a rank, a rank's shard crosses as C transfers
# landing before C successive phases, so later chunks' host copies run under the earlier chunks'
# tiles. syncopate bench, 2 ranks on 2 GPUs, the suite's shapes, chunk counts 1 (the suite's), 2, 4 in
# one invocation each; every variant checked on 16 rows at its timed shape.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
b() { local name=$1; shift; step 90 sh -c "node $app/syncopate.mjs bench $* --ranks 2 --devices 2 --chunks-per-rank 1,2,4 --verify-rows 16 --no-robustness --runs 20 --json > $OUT/$name.json"; }
b ag-gemm-f32 ag-gemm --m 4096 --n 2048 --k 4096 --dtype f32
b gemm-rs-f32 gemm-rs --m 4096 --n 4096 --k 2048 --dtype f32
b ag-gemm-f16 ag-gemm --m 4096 --n 2048 --k 4096 --dtype f16
b gemm-rs-f16 gemm-rs --m 4096 --n 4096 --k 2048 --dtype f16
