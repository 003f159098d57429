#!/usr/bin/env bash
# Device call 3 (2026-11-25, late night, nvidia-h100-x2): where the time of the two-device rows goes
# that lost in call 1 (embed-a2a, gemv-ar, ring-attn, f32, 4 ranks on 2 GPUs, the suite's shapes): a
# Chrome trace of one run each, fused (--backend auto) and with every chunk by peer-copy (the
# decomposed variant's routes), after the CLI's verified run and timed runs.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/syncopate.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
trace() { local w=$1 shape=$2 b=$3; set -- $shape; step 90 node $app/syncopate.mjs run $w --devices 2 --ranks 4 --m $1 --n $2 --k $3 --backend $b --verify-rows 16 --no-robustness --trace "$OUT/trace-$w-$b.json"; }
for b in auto peer-copy; do
  trace embed-a2a "16384 128 65536" $b
  trace gemv-ar "16 8192 8192" $b
  trace ring-attn "4096 64 4096" $b
done
