#!/usr/bin/env bash
# Device call 5 (2026-11-25, late night, nvidia-h100-x2): the chunks a device sends at one moment as
# one transfer per destination (.devpack/app/placed-timeline.mjs) against one transfer per chunk
# (.devpack/app/before/, commit 44c08f5), in the same call; then the new code with the copier's
# smallest piece 1 MiB (one piece for transfers up to 1 MiB). 20 timed runs a variant; the recorded
# runs' timelines go to the log (the trace files stay on the machine: 8 files come back at most).
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs /tmp/pk/before
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
mkdir -p /tmp/t
for bundle in $app/before/placed-timeline.mjs $app/placed-timeline.mjs; do
  step 120 node $bundle --only embed-a2a,gemv-ar,ring-attn,a2a-gemm --runs 20 --out /tmp/t
  step 90 node $bundle --only ag-gemm,gemm-rs --dtype f16 --ranks 2 --runs 20 --out /tmp/t
done
step 120 node $app/placed-timeline.mjs --only embed-a2a,gemv-ar,ring-attn,a2a-gemm --runs 20 --min-piece-kib 1024 --out /tmp/t
grep -E "^===|median" "$log" >"$OUT/summary.txt"
