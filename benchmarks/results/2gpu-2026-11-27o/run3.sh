#!/usr/bin/env bash
# Device call 3 (session of 03:44 UTC, 2026-11-27, two GPUs): the suite's eight two-device rows on
# 80f229d, whose phasing trial runs 40 rounds (four for each of a candidate's ten timed runs; it ran
# ten in calls 1-2), the native host copy, --tune-phasing, 20 rounds a row; first a read-back and an
# upload of 32 MiB alone on each GPU (queue-overlap-probe) for the one-queue floor
# (model-suite --queue-probe call3/log.txt call3/suite.jsonl).
# Pack: pnpm build && pnpm bench:build && rm -rf .devpack && mkdir /tmp/o3 \
#   && cp dist/suite.mjs dist/queue-overlap-probe.mjs /tmp/o3/ && bash ../shared/device/pack.sh dist/host_copy.node /tmp/o3
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/o3
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
# A bundle in a folder of its own does not find the addon beside it: name it.
export SYNCOPATE_HOST_COPY_ADDON=$PWD/.devpack/app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
echo "DEVPACK_GPUS=$DEVPACK_GPUS" >>"$log"
for d in 0 1; do step 30 node $app/queue-overlap-probe.mjs --device $d --runs 15; done
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --tune-phasing --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 90 --only gemm-rs,ag-gemm --dtype f32
suite 180 --only gemm-rs,ag-gemm --dtype f16
suite 250 --only a2a-gemm,embed-a2a,ring-attn,gemv-ar --dtype f32
true
