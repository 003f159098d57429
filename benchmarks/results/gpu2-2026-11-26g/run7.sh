#!/usr/bin/env bash
# Device call 7: the tuner's phasing trial on the rows whose fused run lost to sequential on two GPUs
# (a2a-gemm 0.92x in call 6; gemv-ar, embed-a2a 0.97x in call 1). For each, 4 ranks on 2 GPUs at the
# suite's shape: syncopate tune at the suite's order and chunk count (chunk-arrival, 1), which now also
# times the candidate with sequential phasing, then syncopate bench --tuned (the fused variant at the
# tuned phasing; sequential and decomposed as always), each variant checked on 16 rows.
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
common="--ranks 4 --devices 2 --dtype f32 --verify-rows 16 --no-robustness"
for w in "a2a-gemm --m 2048 --n 2048 --k 2048" "gemv-ar --m 16 --n 8192 --k 8192" "embed-a2a --m 16384 --n 128 --k 65536"; do
  step 45 $s tune $w $common --order chunk-arrival --chunks-per-rank 1
  step 45 $s bench $w $common --tuned --runs 20
done
