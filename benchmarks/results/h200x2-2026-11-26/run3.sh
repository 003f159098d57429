#!/usr/bin/env bash
# Device call 3: how much of the two-device rows' spread is the JS garbage collector? Dawn's Node
# binding polls with setImmediate while a GPU promise is pending (5.5 MB allocated a run on lavapipe,
# /tmp/alloc.mjs), so scavenges promote in-flight promises and old-space collections follow.
# (a) GC pauses during one variant's runs (--trace-gc, counted), default heap vs a 64 MB semi-space;
# (b) the short two-device rows (f16 GEMMs, embed-a2a, gemv-ar) as the suite times them, default heap
#     vs --max-semi-space-size=64, in the same call.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/placed-timeline.mjs
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
gc() { # $1 label, rest: node flags
  local label=$1; shift
  timeout 120 node --trace-gc "$@" $app/placed-timeline.mjs --only ag-gemm --dtype f16 --ranks 2 --runs 40 --out /tmp >/tmp/gc.txt 2>&1
  { echo "=== gc $label: $(grep -c Scavenge /tmp/gc.txt) scavenges, $(grep -c Mark-Compact /tmp/gc.txt) mark-compacts";
    grep Mark-Compact /tmp/gc.txt | sed -E 's/.*MB, ([0-9.]+) \/ ([0-9.]+) ms.*/\1/' | awk '{s+=$1; if ($1>m) m=$1} END {print "mark-compact pause total " s " ms, longest " m " ms"}';
    grep Scavenge /tmp/gc.txt | sed -E 's/.*MB, ([0-9.]+) \/ ([0-9.]+) ms.*/\1/' | awk '{s+=$1; if ($1>m) m=$1} END {print "scavenge pause total " s " ms, longest " m " ms"}';
    grep -E "median" /tmp/gc.txt; } >>"$log"
}
gc default
gc semi64 --max-semi-space-size=64
suite() { local limit=$1 tag=$2; shift 2; rm -rf /tmp/s; step "$limit" "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s; sed "s/^{/{\"heap\":\"$tag\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
for round in 1 2; do
  suite 100 default node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs
  suite 100 semi64 node --max-semi-space-size=64 $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs
done
suite 100 default node $app/suite.mjs --dtype f32 --only embed-a2a,gemv-ar
suite 100 semi64 node --max-semi-space-size=64 $app/suite.mjs --dtype f32 --only embed-a2a,gemv-ar
