#!/usr/bin/env bash
# Device call C (2026-11-28, issues 44 and 45), two GPUs, the bundles of call B (commit f99844f): the
# GPU fuzz again with every fix of the session (seed 3 as suite-2026-11-28, 12 processes, 100 s of
# cases, Dawn's bounds checks on as `syncopate run` has them), then the four GEMM rows with one process
# per GPU at 16 copy threads (call B: 8) beside one process for both, and NCCL through host memory.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; return $rc; }
{ sha256sum $app/*.mjs $app/*.node; nvidia-smi -L; } >>"$log" 2>&1
step 130 node $app/fuzz.mjs --processes 12 --cases 1500 --seed 3 --case-timeout-ms 45000 --time-limit-s 100 --out $OUT/fuzz.jsonl --summary $OUT/fuzz-summary.md
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 60 env SYNCOPATE_MPI_COPY_THREADS=16 mpirun --allow-run-as-root --bind-to none -n 2 node $app/bandwidth.mjs file://$app/runtime.mjs 64 20
step 130 env SYNCOPATE_MPI_COPY_THREADS=16 mpirun --allow-run-as-root --bind-to none -n 2 node $app/process-rows.mjs --only gemm-rs,ag-gemm --runs 15 --out $OUT/processes-16.jsonl
step 110 node $app/process-rows.mjs --only gemm-rs,ag-gemm --runs 15 --out $OUT/one-process.jsonl
step 60 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 bash -c "python3 benchmarks/peers/nccl_bandwidth.py --nproc 2 --transport host --min-mib 8 --max-mib 32 >$OUT/nccl-host.jsonl"
cat $OUT/fuzz-summary.md
tail -12 "$log"
