#!/usr/bin/env bash
# Device call (2026-11-28, issue 43): the tp-layer with attention on subgroup matrices (tensor cores:
# QKV rounded to f16, Q·Kᵀ and P·V on matrices, the softmax f32, P cast to f16), on nvidia-h100-x2.
# 1. a small shape against the CPU reference (2 ranks over two GPUs, the default tensor-core tile);
# 2. attention alone at 8 tensor-core tiles (8 ranks on one GPU, --rounds 0);
# 3. the layer at the fastest of them, fused vs sequential: 8 ranks on one GPU, 2 ranks over two;
# 4. PyTorch's TP layer through host memory;
# 5. the layer with SIMT attention (--target simt-attention: GEMMs still on tensor cores) at its best
#    tile 64x32x16, 2 ranks over two GPUs and 8 ranks on one, the same-machine baseline.
# Bundle: HEAD 647e2fb (pnpm bench:build: dist/tp-layer.mjs,
#   dist/syncopate.mjs, dist/host_copy.node) in .devpack/app/attn-tc.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/attn-tc
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
step 35 node $app/tp-layer.mjs --seq 512 --hidden 1024 --heads 8 --head-dim 128 --ffn 2048 --rounds 1 --reference --ranks 2 --devices 2 --out "$OUT/small.jsonl"
step 40 node $app/tp-layer.mjs --ranks 8 --devices 1 --dtype f16 --rounds 0 \
  --attention-tiles 64x32x64,64x32x32,32x32x128,32x32x64,32x64x64,64x16x64,128x16x32,64x32x16 --out "$OUT/attention-sweep.jsonl"
best=$(python3 -c "
import json,sys
rows=[json.loads(l) for l in open('$OUT/attention-sweep.jsonl') if l.strip()]
ok=[r for r in rows if r.get('path')=='subgroup-matrix' and 'ms' in r]
print(min(ok,key=lambda r:r['ms']['median'])['tile'] if ok else '64x32x64')" 2>>"$log")
echo "best tensor-core attention tile: $best" >>"$log"
step 50 node $app/tp-layer.mjs --ranks 8 --devices 1 --dtype f16 --rounds 10 --attention "$best" --out "$OUT/tp-layer.jsonl"
step 40 node $app/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 10 --attention "$best" --out "$OUT/tp-layer.jsonl"
step 25 bash -c "python3 benchmarks/peers/tp_layer.py --nproc 2 --transport host >>$OUT/peer-tp-layer.jsonl"
step 30 node $app/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 5 --target simt-attention --attention 64x32x16 --out "$OUT/tp-layer-simt-attention.jsonl"
step 30 node $app/tp-layer.mjs --ranks 8 --devices 1 --dtype f16 --rounds 5 --target simt-attention --attention 64x32x16 --out "$OUT/tp-layer-simt-attention.jsonl"
true
