#!/usr/bin/env bash
# Device call 5 (session of 23:00 UTC, one H100: nvidia-h100-x1): a move's round without the tests of
# lanes past a part's end where every part of the tensor is whole rounds (whole: the working tree)
# against commit 47cac84 (h8), alternating: rs-probe at 8 ranks (gemm-rs f16 one-shot), the suite's
# gemm-rs f16 rows at 8 ranks and ag-gemm f16 at 8, then gemm-rs f16 at 2 and 4 on whole.
# Pack: pnpm build && pnpm bench:build, bundles into /tmp/v5 with h8's from calls 2 and 4, then
#   bash ../shared/device/pack.sh dist/host_copy.node /tmp/v5
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/v5
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local v=$1; rm -rf /tmp/p; step 70 node $app/rs-probe-$v.mjs --ranks 8 --dtype f16 --reduction one-shot --out /tmp/p; cat /tmp/p/*.jsonl >>"$OUT/probe-$v.jsonl" 2>/dev/null; }
suite() { local v=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite-$v.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite-$v.jsonl" 2>/dev/null; }
probe whole; probe h8
for v in whole h8 whole h8; do suite $v 50 --only gemm-rs --dtype f16 --ranks 8; done
for v in whole h8; do suite $v 50 --only ag-gemm --dtype f16 --ranks 8; done
suite whole 80 --only gemm-rs --dtype f16 --ranks 2,4
true
