#!/usr/bin/env bash
# Device call 9 (session of 16:36 UTC): is a2a-gemm's overlapped run held by the host copies sharing
# libuv's pool (call 8)? Its row with --tune-phasing (the trial's overlap/sequential ratio) at the
# default pool of 4 against a pool of 8 (UV_THREADPOOL_SIZE=8) with each piece still cut in 4 slices
# (--copy-threads 4: two pieces' copies at once), arms alternating, 30 rounds.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
arm() { local name=$1 pool=$2; rm -rf /tmp/s; step 60 env UV_THREADPOOL_SIZE=$pool node $app/suite.mjs --dtype f32 --only a2a-gemm --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --tune-phasing --copy-threads 4 --out /tmp/s; cat /tmp/s/suite.jsonl >>"$OUT/suite-$name.jsonl" 2>/dev/null; }
arm pool4 4
arm pool8 8
arm pool4 4
arm pool8 8
true
