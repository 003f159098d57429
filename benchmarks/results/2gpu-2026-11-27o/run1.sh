#!/usr/bin/env bash
# Device call 1 (session of 03:44 UTC, 2026-11-27, two GPUs): the suite's eight two-device rows on
# the final code of the session of 01:27 (8bbb056), the native host copy, each row's fused variant at
# the phasing the tuner keeps (--tune-phasing), 20 rounds; then the pinned-host-copy peer (the
# hardware path the two-device rows' transfers take) in the same call.
# Pack: pnpm build && pnpm bench:build && rm -rf .devpack && mkdir /tmp/o1 && cp dist/suite.mjs /tmp/o1/ \
#   && bash ../shared/device/pack.sh dist/host_copy.node /tmp/o1
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/o1
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
# A bundle in a folder of its own does not find the addon beside it: name it.
export SYNCOPATE_HOST_COPY_ADDON=$PWD/.devpack/app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
echo "DEVPACK_GPUS=$DEVPACK_GPUS" >>"$log"
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --tune-phasing --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 90 --only gemm-rs,ag-gemm --dtype f32
suite 170 --only gemm-rs,ag-gemm --dtype f16
suite 230 --only a2a-gemm,embed-a2a,ring-attn,gemv-ar --dtype f32
step 60 bash -c "python3 benchmarks/peers/host_copy.py --src 0 --dst 1 --min-mib 1 --max-mib 64 >$OUT/peer-host-copy.jsonl"
true
