#!/usr/bin/env bash
# Device call (2026-11-28, issue 44), on two GPUs: the GPU fuzz again with every fix of the session
# (seed 3, 12 processes, 100 s of cases), the fuzz cases that did not compile (seed 1 #764 #880, seed 2
# #897); every workload run and checked at 8 ranks and 4 chunks a rank (the whole command timed: an
# upper bound on its pipeline creation); ag-gemm's compile time at 64 ranks on this machine's CPU;
# then the suite's one-GPU f16 GEMM rows (ag-gemm, gemm-rs; 4096, 8 ranks) with the code at the end
# of the session ("new") and at its start (a536ba5, "old"), one after the other on GPU 0.
# Pack: pnpm bench:build (HEAD, 8e824b3) and the same in a worktree of a536ba5; suite.mjs and syncopate.mjs of
#   each in .devpack/app/final/{new,old} (fuzz.mjs too in new), dist/host_copy.node in .devpack/app/final.
# The fuzz runs with Dawn's bounds checks on, as `syncopate run` does by default; the rest without.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/final
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
sha256sum $app/*/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 120 node $app/new/fuzz.mjs --processes 12 --cases 1500 --seed 3 --case-timeout-ms 45000 --time-limit-s 100 --out $OUT/fuzz.jsonl --summary $OUT/fuzz-summary.md
for c in "1 764" "1 880" "2 897"; do set -- $c; step 60 node $app/new/fuzz.mjs --seed $1 --case $2; done
step 60 node $app/new/syncopate.mjs compile ag-gemm --ranks 64 --time --runs 20
export SYNCOPATE_DAWN_ENABLE=disable_robustness
export TIMEFORMAT="seconds %R"
for w in ag-gemm gemm-rs gemv-ar a2a-gemm embed-a2a ring-attn; do
  step 20 bash -c "time node $app/new/syncopate.mjs run $w --ranks 8 --chunks-per-rank 4 --json"
done
step 30 bash -c "time node $app/new/syncopate.mjs run ring-attn --ranks 8 --chunks-per-rank 4 --dtype f16 --json"
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/$v/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; sed "s/^{/{\"bundle\":\"$v\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for v in new old; do suite $v 110 --only ag-gemm,gemm-rs --dtype f16 --ranks 8; done
true
