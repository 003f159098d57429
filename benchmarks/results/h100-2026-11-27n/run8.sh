#!/usr/bin/env bash
# Device call 8 (session of 01:27 UTC, two GPUs: nvidia-h100-x2): the suite's two-device rows on the
# final code (b674087), each row's fused variant at the phasing the tuner keeps (--tune-phasing), 20
# rounds; the four-rank rows first (two ranks a device: their moves within a device changed since
# they were last run), then the GEMMs at two ranks, as far as the session's device time goes.
# Pack: pnpm build && pnpm bench:build, suite bundle into /tmp/v8, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v8
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v8
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
echo "DEVPACK_GPUS=$DEVPACK_GPUS" >>"$log"
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --tune-phasing --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 150 --only a2a-gemm,embed-a2a,ring-attn,gemv-ar --dtype f32
suite 80 --only gemm-rs,ag-gemm --dtype f16
suite 100 --only gemm-rs,ag-gemm --dtype f32
true
