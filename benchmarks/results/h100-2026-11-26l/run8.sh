#!/usr/bin/env bash
# Device call 8 (session of 20:31 UTC, one H100: nvidia-h100-x1): the one-device suite's other rows on
# the final code (03fba0b: every fused kernel's count function changed text): ag-gemm f16 and f32 at 2,
# 4, 8 ranks, a2a-gemm, embed-a2a, ring-attn; and cuBLAS at 4096^3 f16 and f32 in the same call (the
# peer: randn inputs, TF32 off). gemm-rs and gemv-ar rows: call 7 (the same code).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 130 --only ag-gemm --dtype f16 --ranks 2,4,8
suite 110 --only ag-gemm --dtype f32 --ranks 2,4,8
suite 150 --only a2a-gemm,embed-a2a,ring-attn --dtype f32 --ranks 4
echo "=== $(date +%T) cublas_gemm.py" >>"$log"; timeout 90 python3 benchmarks/peers/cublas_gemm.py --sizes 4096 --dtypes f16 f32 >"$OUT/peers.jsonl" 2>>"$log"; echo "=== $(date +%T) rc=$?" >>"$log"
true
