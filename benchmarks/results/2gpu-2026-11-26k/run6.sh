#!/usr/bin/env bash
# Device call 6 (session of 18:26 UTC, one H100: nvidia-h100-x1): the gathers on one device, ranks
# sharing it: ag-gemm f16 and f32 at 4 and 8 ranks and ring-attn, ring against one-shot (no hop waits
# for the one before it), the same bundle (76732f8), arms ring / one-shot.
# Pack: as call 5 (the same .devpack).
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 into=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
for gather in ring one-shot; do
  suite 120 suite-$gather.jsonl --gather $gather --dtype f16 --only ag-gemm --ranks 4,8
  suite 120 suite-$gather.jsonl --gather $gather --dtype f32 --only ag-gemm --ranks 4,8
  suite 60 suite-$gather.jsonl --gather $gather --dtype f32 --only ring-attn --ranks 4
done
true
