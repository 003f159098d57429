import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDisabledFeature, withEnvironmentFeatures } from '../src/gpu.js';
import { LimitExceededError, requestDevice, type DeviceHandle } from '../src/index.js';
import { gpuHandle, hasWebGPU } from './webgpu.js';

describe.skipIf(!hasWebGPU)('requestDevice', () => {
  let handle: DeviceHandle;
  beforeAll(async () => {
    handle = await requestDevice(gpuHandle());
  });
  afterAll(() => handle?.close());

  it('opens a device, lists its features and adapter info', () => {
    console.log(`adapter: ${handle.adapterInfo.description}; features: ${handle.features.join(', ')}`);
    expect(handle.adapterInfo.vendor).not.toBe('');
    expect(handle.features).toEqual([...handle.device.features].sort());
    expect(handle.hasTimestamps).toBe(handle.features.includes('timestamp-query'));
  });

  it('asks for the adapter maximum of the buffer and compute limits', async () => {
    const adapter = await gpuHandle().gpu.requestAdapter();
    expect(adapter).not.toBeNull();
    for (const name of ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize'] as const) {
      expect(handle.limits[name]).toBe(adapter!.limits[name]);
    }
    expect(handle.limits.maxComputeInvocationsPerWorkgroup).toBe(adapter!.limits.maxComputeInvocationsPerWorkgroup);
    expect(handle.limits['maxBindGroups']).toBe(handle.device.limits.maxBindGroups);
  });

  it('requests only the features the adapter has, and reports the others', async () => {
    const other = await requestDevice(gpuHandle(), {
      requiredFeatures: ['timestamp-query', 'texture-compression-astc-sliced-3d'],
    });
    try {
      const adapter = await gpuHandle().gpu.requestAdapter();
      const astc = adapter!.features.has('texture-compression-astc-sliced-3d');
      expect(other.features.includes('texture-compression-astc-sliced-3d')).toBe(astc);
      expect(other.missingFeatures).toEqual(astc ? [] : ['texture-compression-astc-sliced-3d']);
      expect(other.features).not.toContain('shader-f16');
    } finally {
      other.close();
    }
  });

  it('refuses a limit above the adapter maximum before asking for the device', async () => {
    const tooBig = handle.limits.maxBufferSize * 2;
    await expect(requestDevice(gpuHandle(), { requiredLimits: { maxBufferSize: tooBig } })).rejects.toThrow(
      LimitExceededError,
    );
  });

  it("opens a device with every limit at 'adapter-max'", async () => {
    const other = await requestDevice(gpuHandle(), { requiredLimits: 'adapter-max' });
    try {
      expect(other.limits.maxStorageBuffersPerShaderStage).toBe(handle.limits.maxStorageBuffersPerShaderStage);
    } finally {
      other.close();
    }
  });

  it('close() destroys the device, and twice is harmless', async () => {
    const other = await requestDevice(gpuHandle());
    other.close();
    other.close();
    expect((await other.device.lost).reason).toBe('destroyed');
  });
});

describe('withDisabledFeature', () => {
  it("adds a feature to the caller's disable-dawn-features list, or starts one", () => {
    const feature = 'timestamp_quantization';
    expect(withDisabledFeature([], feature)).toEqual(['disable-dawn-features=timestamp_quantization']);
    expect(withDisabledFeature(['enable-dawn-features=allow_unsafe_apis', 'disable-dawn-features=a,b'], feature)).toEqual([
      'enable-dawn-features=allow_unsafe_apis',
      'disable-dawn-features=a,b,timestamp_quantization',
    ]);
    expect(withDisabledFeature(['disable-dawn-features=timestamp_quantization'], feature)).toEqual([
      'disable-dawn-features=timestamp_quantization',
    ]);
  });
});

describe('withEnvironmentFeatures', () => {
  it('merges SYNCOPATE_DAWN_ENABLE and _DISABLE into the one enable and one disable option Dawn reads', () => {
    const env = { SYNCOPATE_DAWN_ENABLE: 'disable_robustness, dump_shaders', SYNCOPATE_DAWN_DISABLE: 'use_vulkan_memory_model' };
    expect(withEnvironmentFeatures(['enable-dawn-features=allow_unsafe_apis', 'disable-dawn-features=timestamp_quantization'], env)).toEqual([
      'enable-dawn-features=allow_unsafe_apis,disable_robustness,dump_shaders',
      'disable-dawn-features=timestamp_quantization,use_vulkan_memory_model',
    ]);
    expect(withEnvironmentFeatures(['a'], {})).toEqual(['a']);
  });
});
