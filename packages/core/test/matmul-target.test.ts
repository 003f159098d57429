import { describe, expect, it } from 'vitest';
import { F16_F32_16x16x16 } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { UsageError } from '../src/workloads/index.js';
import { matmulTargetFor } from '../src/tools/matmul-target.js';

/** What matmulTargetFor reads of a device: its features, matrix configurations, subgroup size and limits. */
function device(features: string[], configs = [F16_F32_16x16x16]): DeviceHandle {
  return {
    features,
    subgroupMatrixConfigs: features.includes('chromium-experimental-subgroup-matrix') ? configs : [],
    subgroupMaxSize: 32,
    device: { limits: { maxComputeWorkgroupStorageSize: 49152 } },
  } as unknown as DeviceHandle;
}

const h100 = device(['chromium-experimental-subgroup-matrix', 'shader-f16', 'subgroups', 'timestamp-query']);
const lavapipe = device(['shader-f16', 'subgroups', 'timestamp-query']);

describe('matmulTargetFor', () => {
  it('takes subgroup matrices under auto for f16 where the device has them, sized to the device', () => {
    expect(matmulTargetFor('auto', h100, 'f16')).toEqual({ config: F16_F32_16x16x16, subgroupSize: 32, workgroupBytes: 49152 });
  });

  it('stays SIMT under auto for f32 inputs (no configuration multiplies f32) and on devices without the feature', () => {
    expect(matmulTargetFor('auto', h100, 'f32')).toBe('simt');
    expect(matmulTargetFor('auto', lavapipe, 'f16')).toBe('simt');
  });

  it('refuses a named subgroup-matrix target the device cannot run, saying what is missing', () => {
    expect(() => matmulTargetFor('subgroup-matrix', lavapipe, 'f16')).toThrow(UsageError);
    expect(() => matmulTargetFor('subgroup-matrix', h100, 'f32')).toThrow(/no subgroup matrix configuration multiplies f32 into f32/);
  });

  it('gives SIMT when SIMT is named, whatever the device has', () => {
    expect(matmulTargetFor('simt', h100, 'f16')).toBe('simt');
  });
});
