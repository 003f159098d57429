#!/usr/bin/env bash
# Device call 2 (2026-11-25, late night, nvidia-h100-x2, the machine of call 1 still warm): the peers on
# the two H100s: cuBLAS, PyTorch's pinned host copies GPU0 -> host -> GPU1, NCCL all-gather and
# reduce-scatter over NVLink and through host memory, PyTorch's async tensor parallelism (ag-gemm and
# gemm-rs at our per-rank shapes). NVLink multicast stays off (run_all.sh never unsets its switches).
set -u
mkdir -p "$OUT"
PEERS_BUDGET_S=500 bash benchmarks/peers/run_all.sh "$OUT"
