#!/usr/bin/env bash
# Device call 1 (session of 20:31 UTC, one H100: nvidia-h100-x1): gemm-rs on one device, ranks sharing
# it, the ring reduce-scatter against the one-shot (every rank's partial summed once into the owner by the
# last tile over it, no lock, no hop after hop), since the reduce-scatter is cut a part per tile
# (2026-11-25) and moves with its loads in flight: the one-shot was last measured before both
# (0.65x at 4 ranks, f16, 2026-11-24). Orders: chunk-arrival (the suite's) and row-major (every rank
# over the same rows at once, so a merged part completes early). Commit 6348cde's bundle.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 into=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --only gemm-rs --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 110 suite-ring.jsonl --reduction ring --dtype f16 --ranks 4,8
suite 110 suite-one-shot.jsonl --reduction one-shot --dtype f16 --ranks 4,8
suite 110 suite-one-shot-row-major.jsonl --reduction one-shot --order row-major --dtype f16 --ranks 4,8
suite 110 suite-one-shot.jsonl --reduction one-shot --dtype f32 --ranks 4,8
suite 110 suite-ring.jsonl --reduction ring --dtype f32 --ranks 4,8
true
