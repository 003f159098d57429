#!/usr/bin/env bash
# Device call 4: this session's code as it stands (streaming stores by default, a copy's slices settling
# one promise, a tuned sequential phasing running the sequential variant).
#   1. streaming against memcpy's stores once more (the suite's two-device GEMM rows, f32 and f16:
#      --copy-stores cached against the default).
#   2. the other four two-device rows (f32) at the defaults, for the eight-row table.
#   3. a2a-gemm and embed-a2a, 4 ranks on 2 GPUs: syncopate tune (at the suite's order and chunk count),
#      then bench --tuned.
#   4. the peers (cuBLAS, pinned host copies, NCCL) in the same call.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/syncopate.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs $app/*.node >>"$log"
nvidia-smi -L >>"$log" 2>&1
suite() { local arm=$1 limit=$2; shift 2; rm -rf /tmp/s; step "$limit" "$@" --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 20 --out /tmp/s; sed "s/^/{\"arm\":\"$arm\",\"line\":/; s/$/}/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite cached 60 node $app/suite.mjs --dtype f32 --only ag-gemm,gemm-rs --copy-stores cached
suite streaming 60 node $app/suite.mjs --dtype f32 --only ag-gemm,gemm-rs
suite streaming 100 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs
suite cached 100 node $app/suite.mjs --dtype f16 --only ag-gemm,gemm-rs --copy-stores cached
suite streaming 110 node $app/suite.mjs --dtype f32 --only gemv-ar,a2a-gemm,embed-a2a,ring-attn
export SYNCOPATE_CACHE_DIR=$OUT/cache
s="node $app/syncopate.mjs"
common="--ranks 4 --devices 2 --dtype f32 --verify-rows 16 --no-robustness"
for w in "a2a-gemm --m 2048 --n 2048 --k 2048" "embed-a2a --m 16384 --n 128 --k 65536"; do
  step 45 $s tune $w $common --order chunk-arrival --chunks-per-rank 1
  step 45 $s bench $w $common --tuned --runs 20
done
unset SYNCOPATE_DAWN_ENABLE
PEERS_BUDGET_S=90 PEERS_TIMEOUT_S=30 bash benchmarks/peers/run_all.sh "$OUT" >>"$log" 2>&1
true
