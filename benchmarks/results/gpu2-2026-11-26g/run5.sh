#!/usr/bin/env bash
# Device call 5: the GEMM workloads' f32 default tile. syncopate bench (call 4) ran ag-gemm and
# gemm-rs f32 at the workloads' default tile, 64x64x32, and computed at about half the rate of the
# suite's rows, which set 128x128x8. The default is now 128x128x8 where C is at least 1024 x 512
# (simtGemmBlock). Here, in one process each: syncopate tune at one order and chunk count times the
# new default (128x128x8), 128x128x16 and 64x64x32 (the old default), each verified on 16 rows; 2 ranks
# on 2 GPUs (the suite's shapes) and 4 ranks on one GPU; then syncopate bench with the new default.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
export SYNCOPATE_CACHE_DIR=$OUT/cache
s="node $app/syncopate.mjs"
common="--dtype f32 --verify-rows 16 --no-robustness"
step 80 $s tune ag-gemm --m 4096 --n 2048 --k 4096 --ranks 2 --devices 2 --order chunk-arrival --chunks-per-rank 1 $common
step 80 $s tune gemm-rs --m 4096 --n 4096 --k 2048 --ranks 2 --devices 2 --order chunk-arrival --chunks-per-rank 1 $common
step 80 $s tune ag-gemm --m 4096 --n 1024 --k 4096 --ranks 4 --order chunk-arrival --chunks-per-rank 1 $common
step 80 sh -c "$s bench ag-gemm --m 4096 --n 2048 --k 4096 --ranks 2 --devices 2 $common --runs 20 --json > $OUT/bench-ag-gemm-f32.json"
step 80 sh -c "$s bench gemm-rs --m 4096 --n 4096 --k 2048 --ranks 2 --devices 2 $common --runs 20 --json > $OUT/bench-gemm-rs-f32.json"
