#!/usr/bin/env bash
# Device call 4 (2026-11-25, late night, nvidia-h100-x2): where the two-device rows' time goes. Each
# workload's three variants as the suite runs them (checked at the timed shape, timed), then one more
# run of each recorded on the host's clock alone (no timestamp queries, unlike call 3's traces, whose
# query set per dispatch slowed the traced run 3x): phase submits and completions, transfer stages.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/placed-timeline.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
step 200 node $app/placed-timeline.mjs --only embed-a2a,gemv-ar,ring-attn,a2a-gemm --out "$OUT"
step 150 node $app/placed-timeline.mjs --only ag-gemm,gemm-rs --dtype f16 --ranks 2 --out "$OUT"
