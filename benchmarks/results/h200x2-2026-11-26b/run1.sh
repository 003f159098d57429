#!/usr/bin/env bash
# Device call 1: the host copy off the JS thread (native addon, libuv pool of 16). First the copier
# alone GPU 0 -> GPU 1 (probes with 1-16 threads, each copier at 1-256 MiB, sweeps, PyTorch's pinned
# copies in the same run); then the f16 two-device GEMM rows with the addon and with the JS copy
# (SYNCOPATE_HOST_COPY=js), the same bundle, one after the other.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/peercopy.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
{ nvidia-smi -L; nvidia-smi topo -m; nproc; } >>"$log" 2>&1
export SYNCOPATE_DAWN_ENABLE=disable_robustness UV_THREADPOOL_SIZE=16
step 120 node $app/peercopy.mjs --src 0 --dst 1 --out "$OUT"
suite() { local tag=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" env "$@" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s --dtype f16 --only ag-gemm,gemm-rs; sed "s/^{/{\"hostCopy\":\"$tag\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite native 120 SYNCOPATE_HOST_COPY=native
suite js 120 SYNCOPATE_HOST_COPY=js
suite native 120 SYNCOPATE_HOST_COPY=native
