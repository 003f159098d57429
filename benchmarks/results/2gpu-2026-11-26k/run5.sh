#!/usr/bin/env bash
# Device call 5 (session of 18:26 UTC, asked as nvidia-h200-x2): ring-attn on two devices with its K and
# V gathered one-shot (every block from its owner at launch: one hop) against the ring (three hops one
# after another), the same bundle (76732f8), arms alternating, 30 rounds, no phasing trial; then
# one-shot with the phasing trial, as the suite's rows run.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1 into=$2; shift 2; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --dtype f32 --only ring-attn --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/$into" 2>/dev/null; }
suite 70 suite-ring.jsonl --gather ring
suite 70 suite-one-shot.jsonl --gather one-shot
suite 70 suite-ring.jsonl --gather ring
suite 70 suite-one-shot.jsonl --gather one-shot
suite 200 suite-one-shot-tuned.jsonl --gather one-shot --tune-phasing
true
