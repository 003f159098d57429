#!/usr/bin/env bash
# Device call 7 (session of 16:36 UTC, one H100: nvidia-h100-x1): the one-device rows whose kernels
# changed since the one-device suite of 2026-11-25 evening (results/h100-2026-11-25b, code 09804c7):
# `syncopate compile --emit wgsl` at the suite's shapes gives other WGSL for gemm-rs f32 and ag-gemm
# f32 at 2, 4 and 8 ranks (the f32 GEMM default tile, now 128x128x8), ag-gemm f16 at 2, 4, 8 (now
# 128x256x32) and a2a-gemm (compile-hashes.txt); gemm-rs f16, gemv-ar, embed-a2a and ring-attn compile
# to the same WGSL.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs "$@" --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 150 --dtype f32 --only gemm-rs,ag-gemm --ranks 2,4,8
suite 140 --dtype f16 --only ag-gemm --ranks 2,4,8
suite 50 --dtype f32 --only a2a-gemm --ranks 4
true
