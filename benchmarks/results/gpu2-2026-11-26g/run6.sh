#!/usr/bin/env bash
# Device call 6: a2a-gemm's expert GEMM at the GEMM workloads' new f32 default (simtGemmBlock:
# 128x128x8 where the output is at least 1024 x 512) against its old tile, 64x64x32. Suite rows
# (--only a2a-gemm, 4 ranks: sharing one GPU, and on two GPUs), each variant verified on 16 rows at
# its timed shape; arms alternating, twice each:
#   before   suite-before.mjs: db87929's a2a.ts (defaultBlock, 64x64x32)
#   after    suite.mjs: a2a-gemm with simtGemmBlock
# Pack: pnpm build && pnpm bench:build (suite.mjs), the same with db87929's a2a.ts copied to
#       dist/suite-before.mjs, then bash ../shared/device/pack.sh dist/suite.mjs dist/suite-before.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local arm=$1 bundle=$2; shift 2; rm -rf /tmp/s; step 60 node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --runs 20 --dtype f32 --only a2a-gemm --out /tmp/s "$@"; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for i in 1 2; do
  suite before suite-before.mjs --one-device
  suite after suite.mjs --one-device
  suite before suite-before.mjs --devices 2
  suite after suite.mjs --devices 2
done
