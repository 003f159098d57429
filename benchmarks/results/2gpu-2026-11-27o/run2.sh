#!/usr/bin/env bash
# Device call 2 (session of 03:44 UTC, 2026-11-27, two GPUs): the suite's eight two-device rows again,
# on 1551523 (a fused row that is the sequential program now says so and counts at 1.00x in the
# summary; the kernels and transfers are those of call 1), the native host copy, --tune-phasing, 20
# rounds; then in the same call the peers of the rows' communication: pinned host copies GPU0 -> host
# -> GPU1, and NCCL's all-gather and reduce-scatter through host memory (its P2P path off).
# Pack: pnpm build && pnpm bench:build && rm -rf .devpack && mkdir /tmp/o2 && cp dist/suite.mjs /tmp/o2/ \
#   && bash ../shared/device/pack.sh dist/host_copy.node /tmp/o2
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/o2
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
# A bundle in a folder of its own does not find the addon beside it: name it.
export SYNCOPATE_HOST_COPY_ADDON=$PWD/.devpack/app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
echo "DEVPACK_GPUS=$DEVPACK_GPUS" >>"$log"
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --tune-phasing --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 80 --only gemm-rs,ag-gemm --dtype f32
suite 170 --only gemm-rs,ag-gemm --dtype f16
suite 240 --only a2a-gemm,embed-a2a,ring-attn,gemv-ar --dtype f32
step 30 bash -c "python3 benchmarks/peers/host_copy.py --src 0 --dst 1 --min-mib 1 --max-mib 64 >$OUT/peer-host-copy.jsonl"
step 70 env NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 bash -c "python3 benchmarks/peers/nccl_bandwidth.py --nproc 2 --transport host --min-mib 1 --max-mib 64 >$OUT/peer-nccl-host.jsonl"
true
