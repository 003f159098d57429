#!/usr/bin/env bash
# Device call 2 (2026-11-27, issue 44): kernels whose WGSL does not grow with the plan (774f763, "new")
# beside the code before it (202e3db, "old"), in the same call on one GPU: the WGSL's size and the
# compile time (passes and WGSL, on the GPU machine's CPU) per workload at 4-64 ranks and 1 and 4
# chunks a rank; every workload run and checked at 8 ranks and 4 chunks a rank (the whole command
# timed: an upper bound on its pipeline creation); the suite's one-GPU rows, new then old.
# Pack: bundles of each commit (pnpm bench:build in a worktree) into /tmp/bundles/c2/{old,new}, the
#   addon beside them, then bash ../shared/device/pack.sh /tmp/bundles/c2
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/c2
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
sha256sum $app/*/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 60 node $app/new/wgsl-size.mjs --ranks 4,8,16,32,64 --chunks 1,4 --runs 3 --warmup 1
export TIMEFORMAT="seconds %R"
runs() { local v=$1 limit=$2; shift 2; for w in "$@"; do step $limit bash -c "time node $app/$v/syncopate.mjs run $w --ranks 8 --chunks-per-rank 4 --json"; done; }
runs new 20 ag-gemm gemm-rs gemv-ar a2a-gemm embed-a2a ring-attn
# The old code where the issue saw it fail (its own 30 s limit on pipeline creation ends it).
runs old 40 a2a-gemm
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/$v/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; sed "s/^{/{\"bundle\":\"$v\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for v in new old; do suite $v 100 --only ag-gemm,gemm-rs --dtype f16 --ranks 8; done
for v in new old; do suite $v 80 --only a2a-gemm,ring-attn --dtype f32; done
true
