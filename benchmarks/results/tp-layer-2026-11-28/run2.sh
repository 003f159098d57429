#!/usr/bin/env bash
# Device call 2 (2026-11-28, issue 43): the tp-layer as committed, tensor-core GEMMs (`--target auto`)
# and the attention tile call 1 found fastest (64x32x16), 15 rounds: 8 ranks on one GPU, 2 ranks on
# two; each GEMM step's collective alone for the overlap bound; the layer with SIMT GEMMs and the
# default 16x32x32 attention tile (as before this change, bar the last-first query order; 3 rounds)
# on two GPUs, a same-machine baseline;
# PyTorch's TP layer through host memory and over NVLink. First a small shape against the CPU reference.
# Bundle: HEAD 3b302c8 plus this change's files (git archive HEAD, the files copied over, esbuild as
#   benchmarks/tsup.config.ts bundles), with the host-copy addon, in .devpack/app/tl.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/tl
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 45 node $app/tp-layer.mjs --seq 512 --hidden 1024 --heads 8 --head-dim 128 --ffn 2048 --rounds 1 --reference --ranks 2 --devices 2 --attention 64x32x16 --out "$OUT/small.jsonl"
step 40 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport host >>$OUT/peer-tp-layer.jsonl"
step 30 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport nvlink >>$OUT/peer-tp-layer.jsonl"
step 90 node $app/tp-layer.mjs --ranks 8 --devices 1 --dtype f16 --rounds 15 --attention 64x32x16 --out "$OUT/tp-layer.jsonl"
step 70 node $app/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 15 --attention 64x32x16 --out "$OUT/tp-layer.jsonl"
step 70 node $app/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 3 --target simt --out "$OUT/tp-layer-before.jsonl"
true
