import { describe, expect, it } from 'vitest';
import { DeviceLostError, GpuTimeoutError, RuntimeError, requestDevice, withTimeout } from '../src/index.js';
import { gpuHandle, hasWebGPU } from './webgpu.js';

function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

describe('withTimeout', () => {
  it('gives the value of a promise that settles in time, and clears its timer', async () => {
    const before = activeTimers();
    await expect(withTimeout(Promise.resolve(7), 60_000, 'seven')).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('no')), 60_000, 'no')).rejects.toThrow('no');
    expect(activeTimers()).toBe(before);
  });

  it('turns a promise that never settles into a GpuTimeoutError naming what was awaited', async () => {
    const error = await withTimeout(new Promise(() => {}), 20, 'mapAsync of "c"').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GpuTimeoutError);
    expect(error).toBeInstanceOf(RuntimeError);
    expect(error).toMatchObject({ name: 'GpuTimeoutError', what: 'mapAsync of "c"', ms: 20 });
    expect((error as Error).message).toBe('timed out after 20 ms waiting for mapAsync of "c"');
  });

  it.skipIf(!hasWebGPU)('turns a lost device into a DeviceLostError', async () => {
    const handle = await requestDevice(gpuHandle());
    handle.close();
    const error = await withTimeout(new Promise(() => {}), 10_000, 'work', handle.device).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeviceLostError);
    expect(error).toMatchObject({ reason: 'destroyed' });
  });
});
