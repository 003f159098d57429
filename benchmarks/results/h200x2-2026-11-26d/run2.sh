#!/usr/bin/env bash
# Device call 2: the host link's slow mode (call 1: transfers both ways at once took 5.0-5.8 ms in 2 of
# 10 processes, 2.1-2.9 in the rest; one way and each stage alone were alike in all). host-link-probe.mjs
# now also times the stages two or four at once (read-backs on both GPUs, uploads on both, a read-back
# beside an upload, all four), two host copies at once, the transfers with the host copy on the JS
# thread, and lists the staging mappings' page sizes. Twelve processes: eight unpinned, two on CPUs
# 0-7, two on 24-31.
# Pack: pnpm bench:build && bash ../shared/device/pack.sh dist/host-link-probe.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T.%N) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T.%N) rc=$?" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
probe() { step 40 "$@" node $app/host-link-probe.mjs --label "$*"; }
for i in 1 2 3 4; do probe env; probe env; done
for i in 1 2; do probe taskset -c 0-7; probe taskset -c 24-31; done
grep '^{' "$log" >"$OUT/host-link.jsonl"
