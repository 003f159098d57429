/**
 * How the layer's four GEMMs are lowered on a device group: SIMT, or subgroup matrices (tensor cores)
 * where every device offers a configuration for the layer's inputs accumulated in f32 (f16 on an
 * H100 or H200 through Dawn's toggles; DESIGN.md, facts). Attention takes the same target for its
 * two products alone (backends wgsl/matrix-dots.ts), its softmax SIMT; RMSNorm and the elementwise
 * steps have no dots and stay SIMT.
 */
import { chooseMatmulStrategy, type SubgroupMatrixTarget } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { UsageError } from '../workloads/index.js';

/**
 * What the caller asks for: `auto` (subgroup matrices where every device has them, else SIMT),
 * `simt`, `subgroup-matrix` (a UsageError where a device lacks them), `simt-attention` (the GEMMs
 * as under auto, attention SIMT: the baseline the tensor-core attention is measured against), or a
 * target given whole (the emulated one checks the tensor-core tiles' indexing on adapters without
 * the feature).
 */
export type TpLayerGemmTarget = 'auto' | 'simt' | 'subgroup-matrix' | 'simt-attention' | SubgroupMatrixTarget;

/** The subgroup-matrix target the GEMMs take on `devices`, or undefined for SIMT. */
export function gemmTargetFor(requested: TpLayerGemmTarget, devices: readonly DeviceHandle[], dtype: 'f16' | 'f32'): SubgroupMatrixTarget | undefined {
  if (typeof requested === 'object') return requested;
  if (requested === 'simt') return undefined;
  if (requested !== 'auto' && requested !== 'subgroup-matrix' && requested !== 'simt-attention') {
    throw new UsageError(`tp-layer: target must be 'auto', 'simt', 'subgroup-matrix', 'simt-attention' or a subgroup-matrix target, got ${String(requested)}`);
  }
  const targets = devices.map((d) => {
    const strategy = chooseMatmulStrategy(d.features, d.subgroupMatrixConfigs, { input: dtype, accumulate: 'f32' }, d.subgroupMaxSize);
    if (strategy.kind === 'simt') {
      if (requested === 'subgroup-matrix') throw new UsageError(`tp-layer: target subgroup-matrix: ${strategy.reason} for ${dtype} inputs accumulated in f32; use 'simt' or 'auto'`);
      return undefined;
    }
    return { ...strategy.target, workgroupBytes: d.device.limits.maxComputeWorkgroupStorageSize };
  });
  // One lowering for every device: the first device's, where all of them have one.
  return targets.every((t) => t !== undefined) ? targets[0] : undefined;
}
