/**
 * Which lowering of `dot` a run uses on a device: SIMT everywhere, subgroup matrices (tensor cores)
 * only when asked for. `auto` is SIMT for now: on the H100 (2026-11-23,
 * benchmarks/results/h100-2026-11-23/subgroup-matrix-v2/) the subgroup-matrix kernel gave wrong
 * results at every shape checked, while its emulation on lavapipe is exact, so it must not be picked
 * behind a user's back until it is right on hardware. Naming `subgroup-matrix` on a device without
 * the feature is a UsageError that says what is missing; on one with it, the run's check against the
 * CPU reference says whether the result was right.
 */
import { chooseMatmulStrategy, type MatmulTarget } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { UsageError, type RunTarget } from './workloads/index.js';

/**
 * The codegen target for `target` on `device`: 'simt', or the device's best subgroup-matrix
 * configuration for `dtype` inputs accumulated in f32, sized to its subgroups and workgroup memory.
 */
export function matmulTargetFor(target: RunTarget, device: DeviceHandle, dtype: 'f16' | 'f32'): MatmulTarget {
  if (target === 'simt' || target === 'auto') return 'simt';
  const strategy = chooseMatmulStrategy(device.features, device.subgroupMatrixConfigs, { input: dtype, accumulate: 'f32' }, device.subgroupMaxSize);
  if (strategy.kind === 'simt') {
    throw new UsageError(`--target subgroup-matrix: ${strategy.reason} for ${dtype} inputs accumulated in f32; use --target simt or auto`);
  }
  return { ...strategy.target, workgroupBytes: device.device.limits.maxComputeWorkgroupStorageSize };
}
