#!/usr/bin/env bash
# Device call A (2026-11-28, issue 45), two GPUs: ranks as processes. A smoke run under mpirun, the MPI
# transport's bandwidth between two processes (shared memory, then TCP alone), the suite's four GEMM
# rows of two devices with one process per GPU (mpirun -n 2) and with one process for both, and NCCL
# through host memory for the same sizes, all in this call.
# Pack: pnpm bench:build in a worktree of the commit named in the log, then
#   bash ../shared/device/pack.sh dist/{process-rows,syncopate,runtime}.mjs dist/{host_copy,mpi_transport}.node \
#     packages/runtime/test/mpi/{bandwidth,common}.mjs
# mpirun binds each process to one core by default: --bind-to none leaves Dawn's, libuv's and the
# transport's threads the machine's cores, as one process has them.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; return $rc; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
mpi=(mpirun --allow-run-as-root --bind-to none -n 2)
{ sha256sum $app/*.mjs $app/*.node; nvidia-smi -L; command -v mpirun; mpirun --version | head -1; ldd $app/mpi_transport.node; } >>"$log" 2>&1
step 90 "${mpi[@]}" node $app/syncopate.mjs run ag-gemm --ranks 2 || { tail -40 "$log"; exit 1; }
step 60 "${mpi[@]}" node $app/bandwidth.mjs file://$app/runtime.mjs 64 20
step 60 "${mpi[@]}" --mca pml ob1 --mca btl tcp,self node $app/bandwidth.mjs file://$app/runtime.mjs 64 20
step 200 "${mpi[@]}" node $app/process-rows.mjs --only gemm-rs,ag-gemm --runs 20 --out $OUT/processes.jsonl
step 200 node $app/process-rows.mjs --only gemm-rs,ag-gemm --runs 20 --out $OUT/one-process.jsonl
step 90 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 bash -c "python3 benchmarks/peers/nccl_bandwidth.py --nproc 2 --transport host --min-mib 1 --max-mib 64 >$OUT/nccl-host.jsonl"
tail -30 "$log"
