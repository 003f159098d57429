#!/usr/bin/env bash
# Device call 1 (session of 23:00 UTC, one H100: nvidia-h100-x1): the parts' move code with the part
# extents every part of a tensor shares written in as literals (u4), and with 8 and 16 elements an
# invocation a round (u8, u16), against the code at the session's start (before, 7d919c0).
# rs-probe at 4 and 8 ranks (gemm-rs f16 one-shot), then the suite's gemm-rs f16 row at 8 ranks.
# Pack: bundles built from the working tree with MOVE_UNROLL 4/8/16 into /tmp/v, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local v=$1; rm -rf /tmp/p; step 100 node $app/rs-probe-$v.mjs --ranks 4,8 --dtype f16 --reduction one-shot --out /tmp/p; cat /tmp/p/*.jsonl >>"$OUT/probe-$v.jsonl" 2>/dev/null; }
suite() { local v=$1; rm -rf /tmp/s; step 60 node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --only gemm-rs --dtype f16 --ranks 8 --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite-$v.jsonl" 2>/dev/null; }
for v in before u4 u8 u16; do probe $v; done
for v in u16 u8 u4 before; do suite $v; done
true
