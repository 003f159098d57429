#!/usr/bin/env bash
# Device call 6 (session of 16:36 UTC): the eight two-device rows on the final code (host copies under
# 512 KiB through copySync), as calls 1-2 ran them (--tune-phasing, 30 rounds), in one call, with
# queue-overlap-probe on each GPU for the one-queue floor (model-suite --queue-probe).
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/queue-overlap-probe.mjs dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
for d in 0 1; do step 40 node $app/queue-overlap-probe.mjs --device $d --runs 15; done
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --tune-phasing --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 110 --dtype f32 --only ag-gemm,gemm-rs
suite 200 --dtype f16 --only ag-gemm,gemm-rs
suite 240 --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn
true
