#!/usr/bin/env bash
# Device call 1 (2026-11-28, issue 44): the fuzz's wrong cases on one H100 with waits by cache line
# (passes/src/analysis/cache-lines.ts), three runs each. Bundles in .devpack/app/linewait.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/linewait
log="$OUT/check.txt"
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
nvidia-smi -L >>"$log" 2>&1
one() { for i in 1 2 3; do echo "=== $*" >>"$log"; timeout 30 node $app/syncopate.mjs "$@" --json 2>>"$log" | grep -E '"verified"|maxAbsError|"target"' | tr -d '\n ' >>"$log"; echo >>"$log"; done; }
one run ring-attn --ranks 4 --m 24 --n 1 --k 1 --dtype f32 --chunks-per-rank 1 --gather one-shot --order column-major --seed 720
one run ring-attn --ranks 8 --m 72 --n 9 --k 1 --dtype f32 --gather ring --order column-major --seed 882
one run ring-attn --ranks 4 --m 68 --n 17 --k 1 --dtype f32 --order grouped --seed 57
one run ring-attn --ranks 2 --m 106 --n 53 --k 1 --dtype f32 --order grouped --seed 33
one run ag-gemm --ranks 8 --m 138 --n 125 --k 191 --dtype f16 --chunks-per-rank 3 --gather one-shot --order row-major --seed 229
one run ring-attn --ranks 8 --m 504 --n 63 --k 1 --dtype f16 --order column-major --seed 899
one run ring-attn --ranks 7 --m 322 --n 46 --k 1 --dtype f16 --chunks-per-rank 1 --gather ring --order chunk-arrival --seed 474
true
