#!/usr/bin/env bash
# Device call 7 (2026-11-25, late night, nvidia-h100-x2): the two-device rows whose plans the new cut
# changes (one cut for all the chunks a rank sends to one other device: gemv-ar 5 -> 3 phases,
# embed-a2a 4 -> 3, a2a-gemm 6/5 -> 5/5 fused), as call 6 ran them: every variant checked at the
# timed shape, the three variants and the communication alone timed in turn, 20 rounds.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
rm -rf /tmp/s; step 190 node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s --dtype f32 --only gemv-ar,embed-a2a,a2a-gemm
cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null
