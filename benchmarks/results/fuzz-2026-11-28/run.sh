#!/usr/bin/env bash
# Device call (2026-11-28, issue 44): the GPU fuzz (benchmarks/src/fuzz.ts) on two H100s: random cases
# of `syncopate run` (every workload, 1-8 ranks, one or two devices, f16 and f32, odd shapes up to 192,
# random order, chunks per rank, gather, reduction and GEMM block), seed 1, each checked against the
# CPU reference with Dawn's bounds checks on, 45 s a case; 12 processes (shards) with two devices
# each, no case started after 270 s. Bundle from the working tree at 465afc5 (fuzz at 15821ca; others'
# uncommitted edits of api/program.ts, api/half.ts and layers/ were in it, none on the fuzz's path).
# Pack: pnpm bench:build && mkdir -p /tmp/fz/bundle/fuzz && cp dist/fuzz.mjs dist/host_copy.node /tmp/fz/bundle/fuzz
#   && bash ../shared/device/pack.sh /tmp/fz/bundle/fuzz
# The call (run tool, kind nvidia-h100-x2, carry [".devpack"], timeout_s 420) was this script's body:
source .devpack/prelude.sh && node .devpack/app/fuzz/fuzz.mjs --processes 12 --cases 1500 --seed 1 --case-timeout-ms 45000 --time-limit-s 270 \
  --out $OUT/fuzz.jsonl --summary $OUT/summary.md 2>$OUT/log.txt; rc=$?
sha256sum .devpack/app/fuzz/* >>$OUT/log.txt; nvidia-smi -L >>$OUT/log.txt 2>&1; exit $rc
