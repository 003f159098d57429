/**
 * Which lowering of `dot` a run uses on a device. `auto` takes subgroup matrices (tensor cores) where
 * the device offers a configuration for the dot's inputs accumulated in f32 (f16 on an H100 through
 * Dawn's toggles), and SIMT elsewhere; a kernel the subgroup-matrix path cannot lower stays SIMT
 * (run.ts, retarget). Naming `subgroup-matrix` on a device without the feature is a UsageError that
 * says what is missing. The subgroup-matrix kernel was exact on the H100 at every shape checked once
 * every workgroup variable was a whole number of 16-byte words
 * (benchmarks/results/h100-2026-11-23/subgroup-matrix-v3/); before that fix `auto` stayed on SIMT.
 */
import { chooseMatmulStrategy, type MatmulTarget } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { UsageError } from '../workloads/index.js';
import { type RunTarget } from './run-report.js';

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
