#!/usr/bin/env bash
# Device call 7 (session of 01:27 UTC, one H100: nvidia-h100-x1): the suite's a2a-gemm row on the final
# code (b674087: 64 KiB parts, the phasing trial on one device), with and without --tune-phasing, twice.
# Pack: pnpm build && pnpm bench:build, suite bundle into /tmp/v7, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v7
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v7
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for i in 1 2; do suite 90 --only a2a-gemm --dtype f32 --tune-phasing; suite 45 --only a2a-gemm --dtype f32; done
true
