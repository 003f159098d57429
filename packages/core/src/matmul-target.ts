/**
 * Which lowering of `dot` a run uses on a device: SIMT everywhere, subgroup matrices (tensor cores)
 * where the adapter offers them. `auto` takes subgroup matrices where the device has them for the
 * workload's dtype and the kernel lowers that way, SIMT otherwise; naming `subgroup-matrix` on a
 * device without them is a UsageError that says what is missing.
 */
import { chooseMatmulStrategy, type MatmulTarget } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { UsageError, type RunTarget } from './workloads/index.js';

/**
 * The codegen target for `target` on `device`: 'simt', or the device's best subgroup-matrix
 * configuration for `dtype` inputs accumulated in f32, sized to its subgroups and workgroup memory.
 */
export function matmulTargetFor(target: RunTarget, device: DeviceHandle, dtype: 'f16' | 'f32'): MatmulTarget {
  if (target === 'simt') return 'simt';
  const strategy = chooseMatmulStrategy(device.features, device.subgroupMatrixConfigs, { input: dtype, accumulate: 'f32' }, device.subgroupMaxSize);
  if (strategy.kind === 'simt') {
    if (target === 'auto') return 'simt';
    throw new UsageError(`--target subgroup-matrix: ${strategy.reason} for ${dtype} inputs accumulated in f32; use --target simt or auto`);
  }
  return { ...strategy.target, workgroupBytes: device.device.limits.maxComputeWorkgroupStorageSize };
}
