import { describe, expect, it } from 'vitest';
import { openGpu, requestDevice, TENSOR_CORE_FEATURES, withDawnFeature } from '../src/index.js';
import { hasWebGPU } from './webgpu.js';

describe('Dawn feature toggles', () => {
  it('joins features into one enable-dawn-features option, next to the disabled ones', () => {
    let t = withDawnFeature(['disable-dawn-features=timestamp_quantization'], 'enable', 'allow_unsafe_apis');
    t = withDawnFeature(t, 'enable', 'vulkan_enable_f16_on_nvidia');
    t = withDawnFeature(t, 'enable', 'allow_unsafe_apis');
    expect(t).toEqual(['disable-dawn-features=timestamp_quantization', 'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia']);
  });
});

describe.skipIf(!hasWebGPU)('tensor-core toggles on this adapter', () => {
  it('opens with the tensor-core toggles by default and reports them, features and matrix configs', async () => {
    const gpu = await openGpu();
    expect(gpu.toggles).toContain(`enable-dawn-features=${TENSOR_CORE_FEATURES.join(',')}`);
    const handle = await requestDevice(gpu);
    try {
      expect(handle.toggles).toEqual(gpu.toggles);
      expect(handle.features).toEqual([...handle.device.features].sort());
      const matrices = handle.features.includes('chromium-experimental-subgroup-matrix');
      // Lavapipe has no subgroup matrices; an adapter that has them lists at least one shape.
      expect(handle.subgroupMatrixConfigs.length > 0).toBe(matrices);
      if (!matrices) expect(handle.missingFeatures).toContain('chromium-experimental-subgroup-matrix');
      console.log(`features: ${handle.features.join(', ')}; configs: ${JSON.stringify(handle.subgroupMatrixConfigs)}`);
    } finally {
      handle.close();
    }
  });

  it('still opens without them', async () => {
    const gpu = await openGpu({ tensorCores: false });
    expect(gpu.toggles.some((t) => t.startsWith('enable-dawn-features='))).toBe(false);
    const handle = await requestDevice(gpu);
    handle.close();
  });
});
