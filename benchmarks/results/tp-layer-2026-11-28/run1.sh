#!/usr/bin/env bash
# Device call 1 (2026-11-28, issue 43): the tp-layer with its GEMMs on subgroup matrices (tensor cores,
# `--target auto`), attention tiles larger than 16 query rows with query tiles last-first. At small
# shapes against the CPU reference on the GPUs; the attention kernel alone at 8 tiles (8 ranks on one
# GPU); the layer at Llama-7B-like shapes (S = H = 4096, 32 heads of 128, FFN 11008, f16), fused
# against sequential, 8 ranks on one GPU then 2 ranks on two, each GEMM's compute alone for the
# overlap bound; PyTorch's TP layer through host memory in the same call.
# Bundle: HEAD 295ada1 plus this change's files (git archive HEAD, the files copied over, esbuild as
#   benchmarks/tsup.config.ts bundles), with the host-copy addon, in .devpack/app/tl.
# Its `gemmComputeMs` and `overlapBoundMs` came from each GEMM compiled rank-local, which lowers A
# through 16-byte views the layer's GEMMs do not use and ran 2-4x slower than the layer's own steps:
# not a bound. Call 2's bench measures each collective alone instead (run2.sh).
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/tl
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
echo "DEVPACK_GPUS=$DEVPACK_GPUS" >>"$log"
small="--seq 512 --hidden 1024 --heads 8 --head-dim 128 --ffn 2048 --rounds 1 --reference"
step 45 node $app/tp-layer.mjs $small --ranks 2 --devices 2 --attention 64x32x16 --out "$OUT/small.jsonl"
step 45 node $app/tp-layer.mjs $small --ranks 8 --devices 1 --out "$OUT/small.jsonl"
step 40 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport host >>$OUT/peer-tp-layer.jsonl"
step 120 node $app/tp-layer.mjs --ranks 8 --devices 1 --dtype f16 --rounds 5 --attention 64x32x16 \
  --attention-tiles 16x32x32,32x16x16,32x32x16,32x32x32,64x16x16,64x32x16,64x32x32,128x16x16 --out "$OUT/tp-layer.jsonl"
step 90 node $app/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 5 --attention 64x32x16 --out "$OUT/tp-layer.jsonl"
true
