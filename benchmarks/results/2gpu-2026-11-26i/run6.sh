#!/usr/bin/env bash
# Device call 6: the two rows whose phasing the rule of call 5 left overlapped though its own trial had
# overlap slower (gemm-rs f16, 0.989x; embed-a2a, 0.969x), with the tuner now keeping sequential where
# overlap is slower in the median of the alternating rounds. 30 rounds, --tune-phasing.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --tune-phasing --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite 130 --dtype f16 --only gemm-rs
suite 90 --dtype f32 --only embed-a2a
true
