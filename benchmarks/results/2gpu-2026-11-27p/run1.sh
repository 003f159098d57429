#!/usr/bin/env bash
# Device call 1 (2026-11-27, issue 43): the tensor-parallel layer (tp-layer) at Llama-7B-like shapes
# (S = H = 4096, 32 heads of 128, FFN 11008, f16), fused against sequential in the same rounds: 8 ranks
# on one GPU, then 2 ranks on two GPUs; PyTorch's TP layer (NCCL, plain form) on the two GPUs through
# host memory and over NVLink, in the same call. Bundles from 19eb85d.
# Pack: (in a worktree of 19eb85d) pnpm bench:build && mkdir /tmp/bundles/a && cp dist/{tp-layer,syncopate}.mjs dist/host_copy.node /tmp/bundles/a
#   && bash ../shared/device/pack.sh /tmp/bundles/a
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/a
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 200 node $app/tp-layer.mjs --ranks 8 --devices 1 --dtype f16 --rounds 5 --out "$OUT/tp-layer.jsonl"
step 200 node $app/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 5 --out "$OUT/tp-layer.jsonl"
step 90 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport host >>$OUT/peer-tp-layer.jsonl"
step 90 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport nvlink >>$OUT/peer-tp-layer.jsonl"
true
