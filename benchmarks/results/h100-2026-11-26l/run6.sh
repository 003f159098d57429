#!/usr/bin/env bash
# Device call 6 (session of 20:31 UTC, one H100: nvidia-h100-x1): where the 0.3 ms goes that fused
# one-shot gemm-rs at 8 ranks spends with its chunks unpublished over compute alone (call 5: 1.027
# against 0.725 ms; at 4 ranks none). Probes (rs-probe, f16 one-shot, 4 and 8 ranks), each a build of
# e9af0ff with merged adds reading 8 members a round (g8, kept) and: as is; arrives without their
# storageBarrier (nofence: not correct, a probe); no arrive code at all (noarrive: nothing is
# published, a probe).
# Pack: bash ../shared/device/pack.sh dist/host_copy.node /tmp/variant (variant/: the three rs-probe builds)
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/variant/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
probe() { local name=$1; step 120 node $app/variant/rs-probe-$name.mjs --ranks 4,8 --dtype f16 --reduction one-shot --out /tmp/p; cat /tmp/p/*.jsonl >>"$OUT/probe-$name.jsonl" 2>/dev/null; rm -rf /tmp/p; }
probe g8
probe nofence
probe noarrive
true
