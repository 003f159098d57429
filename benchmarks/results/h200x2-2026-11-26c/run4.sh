#!/usr/bin/env bash
# Device call 4: as call 3 (every piece read back at once, suite.mjs, against the ring of 4, suite-ring.mjs, built from
# this commit with peer-copy.ts of call 1), now with the burn kernel (gpu-burn.ts) keeping the GPUs busy between the rounds;
# nvidia-smi samples the clocks every 50 ms beside it.
# Pack: pnpm build && pnpm bench:build (suite-ring.mjs: the same with call 1's peer-copy.ts) &&
#       bash ../shared/device/pack.sh dist/suite.mjs dist/suite-ring.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active --format=csv -lms 50 >/tmp/clocks.csv 2>/dev/null &
suite() { local bundle=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/$bundle --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 40 --out /tmp/s "$@"; sed "s/^{/{\"bundle\":\"$bundle\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cp /tmp/s/suite.md "$OUT/suite-$bundle-$(date +%H%M%S).md" 2>/dev/null; }
suite suite.mjs 130 --dtype f32
suite suite-ring.mjs 130 --dtype f32
suite suite.mjs 70 --dtype f16 --only ag-gemm,gemm-rs
suite suite-ring.mjs 70 --dtype f16 --only ag-gemm,gemm-rs
kill %1 2>/dev/null
xz -T0 -c /tmp/clocks.csv >"$OUT/clocks.csv.xz"
