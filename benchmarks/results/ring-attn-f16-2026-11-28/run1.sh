#!/usr/bin/env bash
# Device call 1 (2026-11-28, issue 44, one H100: nvidia-h100-x1): ring-attn in f16 with both products on
# subgroup matrices (tensor cores), beside f32 and f16 on SIMT, at the suite's shape (4096x64, 4 ranks on
# one GPU): fused, sequential and decomposed, each checked against the CPU reference on sampled rows; first,
# three tensor-core runs checked on every row at other shapes (D = 64, 32, 16; 4, 2, 8 ranks).
# Bundles from f667605 (a worktree of it): tsup with benchmarks/tsup.config.ts, entries suite and syncopate
# only, into /tmp/ra16-dist; then bash ../shared/device/pack.sh /tmp/ra16-dist (app/ra16-dist/).
# Command: source .devpack/prelude.sh && node .devpack/app/ra16-dist/syncopate.mjs help >/dev/null && bash benchmarks/results/ring-attn-f16-2026-11-28/run1.sh
set -u
[ -n "${DEVPACK_GPUS+x}" ] || source .devpack/prelude.sh
app=$PWD/.devpack/app/ra16-dist
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; local rc=$?; echo "=== $(date +%T) rc=$rc" >>"$log"; }
export SYNCOPATE_DAWN_ENABLE=disable_robustness
sha256sum $app/*.mjs >>"$log"
nvidia-smi -L >>"$log" 2>&1
run() { step 15 bash -c "node $app/syncopate.mjs run ring-attn --dtype f16 --target subgroup-matrix --json $* >>$OUT/runs.json"; }
run --ranks 4 --m 1024 --n 64
run --ranks 2 --m 256 --n 32
run --ranks 8 --m 512 --n 16
suite() { local tag=$1 limit=$2; shift 2; rm -rf /tmp/s; step $limit node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --one-device --only ring-attn --out /tmp/s "$@"; sed "s/^{/{\"arm\":\"$tag\",/" /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; }
suite f16-auto 55 --dtype f16
suite f32 45 --dtype f32
suite f16-simt 45 --dtype f16 --target simt
true
