#!/usr/bin/env bash
# Device call 5 (session of 16:36 UTC): call 4's A/B again, arms alternating before, after, before,
# after, on the two rows whose host copies are all under 512 KiB (gemv-ar, embed-a2a), each arm with
# `node --trace-gc` (its collections counted in gc-<arm>-<n>.txt).
# Pack: as call 4.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/before/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
arm() { local name=$1 bundle=$2 n=$3; rm -rf /tmp/s; echo "=== $(date +%T) $name $n" >>"$log"; timeout 80 node --trace-gc "$bundle" --dtype f32 --only gemv-ar,embed-a2a --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s >"$OUT/gc-$name-$n.txt" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; cat /tmp/s/suite.jsonl >>"$OUT/suite-$name.jsonl" 2>/dev/null; }
arm before $app/before/suite.mjs 1
arm after $app/suite.mjs 1
arm before $app/before/suite.mjs 2
arm after $app/suite.mjs 2
for f in "$OUT"/gc-*.txt; do echo "$(basename $f): scavenges $(grep -c Scavenge $f), mark-compacts $(grep -c Mark-Compact $f)" >>"$log"; done
true
