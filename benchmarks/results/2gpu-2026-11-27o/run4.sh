#!/usr/bin/env bash
# Device call 4 (session of 03:44 UTC, 2026-11-27, two GPUs): the suite's two-device rows on 4ae306a,
# whose rounds open with an untimed run of their first part (in calls 1-3 the part that ran first after
# the busy kernel took 13-20% longer than later in the round), the phasing trial at 40 rounds, 20 rounds
# a row; the f16 GEMMs first (where the trial and the bench disagreed in call 3), then the f32 GEMMs,
# then the four-rank rows, as far as the session's device time goes.
# Pack: pnpm build && pnpm bench:build && rm -rf .devpack && mkdir /tmp/o4 && cp dist/suite.mjs /tmp/o4/ \
#   && bash ../shared/device/pack.sh dist/host_copy.node /tmp/o4
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/o4
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
# A bundle in a folder of its own does not find the addon beside it: name it.
export SYNCOPATE_HOST_COPY_ADDON=$PWD/.devpack/app/host_copy.node
sha256sum $app/*.mjs $SYNCOPATE_HOST_COPY_ADDON >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --tune-phasing --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 170 --only gemm-rs,ag-gemm --dtype f16
suite 80 --only gemm-rs,ag-gemm --dtype f32
suite 240 --only ring-attn,gemv-ar,embed-a2a,a2a-gemm --dtype f32
true
