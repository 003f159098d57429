#!/usr/bin/env bash
# Device call D (2026-11-28, issues 43 and 45), two GPUs, bundles of commit fd50182: the tp-layer
# (f16, S = H = 4096, 32 heads of 128, FFN 11008, 2 ranks) with one process a GPU (mpirun -n 2) and
# with one process for both, alternating, fused against sequential in rounds, checked fused against
# sequential (and a small shape against the CPU reference over processes first); PyTorch's TP layer
# through host memory; then gemv-ar and embed-a2a over processes with the transport's longest idle
# wait at 20 us against the default 200 us, and in one process, all in this call.
# Pack: pnpm bench:build in a worktree of fd50182, then
#   bash ../shared/device/pack.sh dist/{process-rows,tp-layer}.mjs dist/{host_copy,mpi_transport}.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; return $rc; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
mpi=(mpirun --allow-run-as-root --bind-to none -n 2)
{ sha256sum $app/*.mjs $app/*.node; nvidia-smi -L; } >>"$log" 2>&1
step 60 "${mpi[@]}" node $app/tp-layer.mjs --seq 512 --hidden 1024 --heads 8 --head-dim 128 --ffn 2048 --rounds 1 --reference --ranks 2 --devices 2 --out $OUT/small.jsonl
layer="--ranks 2 --devices 2 --dtype f16 --rounds 10 --attention 64x32x64"
step 60 "${mpi[@]}" node $app/tp-layer.mjs $layer --out $OUT/tp-layer-processes.jsonl
step 60 node $app/tp-layer.mjs $layer --out $OUT/tp-layer-one-process.jsonl
step 60 "${mpi[@]}" node $app/tp-layer.mjs $layer --out $OUT/tp-layer-processes.jsonl
step 60 node $app/tp-layer.mjs $layer --out $OUT/tp-layer-one-process.jsonl
step 40 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport host >>$OUT/peer-tp-layer.jsonl"
step 70 env SYNCOPATE_MPI_POLL_WAIT_US=20 "${mpi[@]}" node $app/process-rows.mjs --only gemv-ar,embed-a2a --runs 15 --out $OUT/rows-wait20.jsonl
step 70 "${mpi[@]}" node $app/process-rows.mjs --only gemv-ar,embed-a2a --runs 15 --out $OUT/rows-wait200.jsonl
step 70 node $app/process-rows.mjs --only gemv-ar,embed-a2a --runs 15 --out $OUT/rows-one-process.jsonl
tail -5 "$log"
