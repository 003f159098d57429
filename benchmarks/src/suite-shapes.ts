/** The suite's shapes (suite-bench.ts), shared with the benchmarks that look into its rows. */
import { getWorkload, type WorkloadName, type WorkloadShape } from '@syncopate/core';

/** A shape per workload where compute and communication are both sizeable on one GPU. */
export function gpuShape(workload: WorkloadName, ranks: number, size: number): WorkloadShape {
  switch (workload) {
    case 'ag-gemm':
      return { m: size, n: size / ranks, k: size }; // one size³ GEMM of work in all
    case 'gemm-rs':
      return { m: size, n: size, k: size / ranks };
    case 'gemv-ar':
      return { m: 16, n: 2 * size, k: 2 * size }; // decode: 16 tokens, a 2·size square weight
    case 'a2a-gemm':
      return { m: size / 2, n: size / 2, k: size / 2 }; // tokens per rank, outputs, hidden
    case 'embed-a2a':
      return { m: 4 * size, n: 128, k: 16 * size }; // batch, embedding dim, table rows
    case 'ring-attn':
      return { m: size, n: 64, k: size }; // sequence, head dim
    default:
      return getWorkload(workload).defaults;
  }
}

/**
 * The SIMT GEMM's fastest tile on the H100 (benchmarks/README.md) for f32; f16 takes the workloads'
 * own tile, which is their tensor-core tile where the dots lower to subgroup matrices (Workload.tensorCoreBlock).
 */
export const GEMM_BLOCK = { f32: { block: { m: 128, n: 128, k: 8 } }, f16: {} } as const;
