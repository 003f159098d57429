#!/usr/bin/env bash
# Device call B (2026-11-28, issues 45 and 44), two GPUs, bundles of commit f99844f: the MPI transport
# between two processes (single copy by process_vm_readv at 8, 4 and 16 copy threads, and Open MPI's
# own shared memory); the suite's eight two-device rows with one process per GPU (mpirun -n 2) and
# with one process for both, and NCCL through host memory, all in this call; then issue 44's checks:
# the last wrong fuzz case (ring-attn f16 #338, fixed in 114ea27) and six neighbours five times each,
# and ag-gemm's compile time at 64 ranks on this machine's CPU.
# Pack: pnpm bench:build in a worktree of f99844f, then
#   bash ../shared/device/pack.sh dist/{process-rows,syncopate,runtime,fuzz}.mjs dist/{host_copy,mpi_transport}.node \
#     packages/runtime/test/mpi/{bandwidth,common}.mjs
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; return $rc; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
mpi=(mpirun --allow-run-as-root --bind-to none -n 2)
{ sha256sum $app/*.mjs $app/*.node; nvidia-smi -L; nproc; mpirun --version | head -1; } >>"$log" 2>&1
bw() { step 60 env "$@" "${mpi[@]}" node $app/bandwidth.mjs file://$app/runtime.mjs 64 20; }
bw SYNCOPATE_MPI_COPY_THREADS=8
bw SYNCOPATE_MPI_COPY_THREADS=4
bw SYNCOPATE_MPI_COPY_THREADS=16
bw SYNCOPATE_MPI_SINGLE_COPY=0
step 230 "${mpi[@]}" node $app/process-rows.mjs --runs 15 --out $OUT/processes.jsonl
step 200 node $app/process-rows.mjs --runs 15 --out $OUT/one-process.jsonl
step 60 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 bash -c "python3 benchmarks/peers/nccl_bandwidth.py --nproc 2 --transport host --min-mib 1 --max-mib 64 >$OUT/nccl-host.jsonl"
S="node $app/syncopate.mjs run ring-attn --k 1 --seed 171"
{
  for i in 1 2 3 4 5; do
    $S --ranks 7 --m 126 --n 9 --dtype f16 --chunks-per-rank 2 --gather one-shot --order row-major
    $S --ranks 7 --m 126 --n 9 --dtype f16 --chunks-per-rank 2 --gather one-shot --order column-major
    $S --ranks 9 --m 162 --n 9 --dtype f16 --chunks-per-rank 2 --gather one-shot --order row-major
    $S --ranks 8 --m 88 --n 11 --dtype f16 --chunks-per-rank 4 --gather one-shot --order chunk-arrival
    $S --ranks 7 --m 126 --n 9 --dtype f32 --chunks-per-rank 2 --gather one-shot --order row-major
    $S --ranks 7 --m 126 --n 9 --dtype f16 --chunks-per-rank 2 --gather ring --order row-major
    $S --ranks 7 --m 112 --n 8 --dtype f16 --chunks-per-rank 2 --gather one-shot --order row-major
  done 2>&1 | grep -E "^(workload|ranks|shape|verified|max abs|phases)" >$OUT/ring-attn-lines.txt
} &
wait
grep -c "^verified *yes" $OUT/ring-attn-lines.txt >>"$log"; grep -c "^verified *NO" $OUT/ring-attn-lines.txt >>"$log"
step 60 node $app/syncopate.mjs compile ag-gemm --ranks 64 --time --runs 50
tail -25 "$log"
