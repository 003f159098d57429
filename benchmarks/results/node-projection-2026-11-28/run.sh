#!/usr/bin/env bash
# The cost model's projection of the suite's two-GPU f16 GEMM rows (two H200s, device call 4 of
# 2gpu-2026-11-27o) to 16 ranks on 2 nodes of 8 GPUs, chunks between nodes over InfiniBand NDR or
# 25 GbE TCP (benchmarks/src/project-nodes.ts; the links and their sources are in docs/processes.md).
# No device: a projection from the model, not a measurement. From the repository root:
#   pnpm bench:build && bash benchmarks/results/node-projection-2026-11-28/run.sh
set -eu
out=benchmarks/results/node-projection-2026-11-28
{
  echo "# $(git rev-parse --short HEAD): node dist/project-nodes.mjs benchmarks/results/2gpu-2026-11-27o/call4/suite.jsonl"
  echo
  node dist/project-nodes.mjs benchmarks/results/2gpu-2026-11-27o/call4/suite.jsonl 2>&1
} >"$out/projection.md"
cat "$out/projection.md"
