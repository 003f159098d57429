#!/usr/bin/env bash
# Device call (2026-11-28, issue 44): the fuzz's wrong cases on one H100, with the code at the start of
# the session (a536ba5, "old") and now ("new", HEAD at the call), each three times, to tell a
# regression from an old bug and a race from a wrong formula. Pack: pnpm bench:build; bundles in
# .devpack/app/diag/{old,new} with dist/host_copy.node beside them.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/diag
log="$OUT/log.txt"
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
nvidia-smi -L >>"$log" 2>&1
one() { local v=$1; shift; for i in 1 2 3; do echo "=== $v $*" >>"$log"; timeout 40 node $app/$v/syncopate.mjs "$@" --json 2>>"$log" | grep -E '"verified"|maxAbsError|"target"' | tr -d '\n ' >>"$log"; echo >>"$log"; done; }
cases=(
  "run ring-attn --ranks 8 --m 72 --n 9 --k 1 --dtype f32 --gather ring --order column-major --seed 882"
  "run ring-attn --ranks 4 --m 24 --n 1 --k 1 --dtype f32 --chunks-per-rank 1 --gather one-shot --order column-major --seed 720"
  "run ring-attn --ranks 4 --m 68 --n 17 --k 1 --dtype f32 --order grouped --seed 57"
  "run ring-attn --ranks 2 --m 106 --n 53 --k 1 --dtype f32 --order grouped --seed 33"
  "run ag-gemm --ranks 8 --m 138 --n 125 --k 191 --dtype f16 --chunks-per-rank 3 --gather one-shot --order row-major --seed 229"
  "run gemv-ar --ranks 3 --m 13 --n 102 --k 274 --dtype f16 --chunks-per-rank 4 --order row-major --seed 394"
)
for c in "${cases[@]}"; do one new $c; one old $c; done
# The same ring-attn cases without Dawn's bounds checks, and a SIMT ag-gemm/gemv-ar.
export SYNCOPATE_DAWN_ENABLE=disable_robustness
one new ${cases[0]}
one new ${cases[1]}
unset SYNCOPATE_DAWN_ENABLE
one new ${cases[4]} --target simt
one new ${cases[5]} --target simt
for n in 182 430 6 73; do timeout 60 node $app/new/fuzz.mjs --seed 1 --case $n >>"$log" 2>&1; done
true
