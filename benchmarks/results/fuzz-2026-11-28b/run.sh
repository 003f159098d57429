#!/usr/bin/env bash
# Device call 2 (2026-11-28, issue 44): the GPU fuzz on two H100s with waits by cache line
# (commit 16c6f3b), a new seed. Bundles in .devpack/app/linewait.
set -u
source .devpack/prelude.sh
app=$PWD/.devpack/app/linewait
export SYNCOPATE_HOST_COPY_ADDON=$app/host_copy.node
nvidia-smi -L > "$OUT/log.txt" 2>&1
node $app/fuzz.mjs --processes 12 --cases 1500 --seed 2 --case-timeout-ms 45000 --time-limit-s 150 --out $OUT/fuzz.jsonl --summary $OUT/summary.md >>"$OUT/log.txt" 2>&1
echo "rc $?" >>"$OUT/log.txt"
true
