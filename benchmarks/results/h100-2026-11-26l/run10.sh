#!/usr/bin/env bash
# Device call 10 (session of 20:31 UTC, one H100: nvidia-h100-x1): gemm-rs f16 on the wide tensor-core
# tile (128x256x32, ag-gemm's) against its own (128x128x64): the tuner picked the wide one for one-shot
# gemm-rs at 8 ranks (call 9: 1.09 against 1.18 ms; half the tiles, half the arrives). Suite rows at 2,
# 4, 8 ranks from the final code (458fa11) and the same with gemm-rs's tile wide (variant/), arms
# alternating.
# Pack: bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node /tmp/variant
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/variant/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local bundle=$1 into=$2; rm -rf /tmp/s; step 110 node $bundle --quick --size 4096 --no-sweeps --no-trace --one-device --only gemm-rs --dtype f16 --ranks 2,4,8 --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite $app/variant/suite-wide.mjs suite-wide.jsonl
suite $app/suite.mjs suite-own.jsonl
true
