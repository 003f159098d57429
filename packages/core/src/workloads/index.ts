/**
 * Workloads: named kernels with their chunk plan, seeded inputs and an exact CPU reference, for
 * tests, benchmarks and the `syncopate` CLI.
 */
import { UsageError } from './errors.js';
import { agGemm, gemmRs } from './gemm.js';
import { gemvAr } from './gemv.js';
import { a2aGemm } from './a2a.js';
import { embedA2a } from './embed-a2a.js';
import { ringAttn } from './ring-attn.js';
import type { Workload, WorkloadName } from './types.js';

export * from './types.js';
export * from './errors.js';
export { BLOCK_K, BLOCK_MN, defaultBlock, defaultReduction, shrinkBlock, simtGemmBlock, tensorCoreBlock, validateGemmOptions, wideTensorCoreBlock } from './gemm.js';
export { DEFAULT_POOLING, EMBED_BLOCK_M, embedA2a, gatherRow } from './embed-a2a.js';
export { a2aGemm, a2aKernel, a2aLayout, a2aPlan, defaultSplits, type A2aLayout } from './a2a.js';
export { defaultGemvBlock, GEMV_BLOCK_M, gemvKernel, validateGemvOptions } from './gemv.js';
export { attentionReference, attentionWorkgroupBytes, ringAttentionBlock, ringAttentionKernel, ringAttentionShape, ringAttentionTensorCoreBlock, RING_ATTN_TOLERANCE } from './ring-attn.js';
export { attentionReferenceF16 } from './ring-attn-f16.js';
export { mulberry32, smallIntegers, streamSeed } from './random.js';
export { gemmTolerance } from './tolerance.js';
export { fillRegion, forEachRun, gemmAccumulate, maxAbsError } from './tensor.js';

export const workloads: Readonly<Record<WorkloadName, Workload>> = {
  'ag-gemm': agGemm,
  'gemm-rs': gemmRs,
  'gemv-ar': gemvAr,
  'a2a-gemm': a2aGemm,
  'embed-a2a': embedA2a,
  'ring-attn': ringAttn,
};

export const WORKLOAD_NAMES = Object.keys(workloads) as WorkloadName[];

export function isWorkloadName(name: string): name is WorkloadName {
  return Object.hasOwn(workloads, name);
}

/** The workload called `name`; throws `UsageError` listing the known names. */
export function getWorkload(name: string): Workload {
  if (!isWorkloadName(name)) throw new UsageError(`unknown workload '${name}'; known workloads: ${WORKLOAD_NAMES.join(', ')}`);
  return workloads[name];
}
