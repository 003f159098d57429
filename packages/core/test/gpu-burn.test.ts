import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { burnGpus } from '../src/gpu-burn.js';

describe('burnGpus', () => {
  let handles: DeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(2, { gpus: [] });
  });
  afterAll(() => handles?.forEach((h) => h.close()));

  it('keeps every device busy for the time asked, then returns with its queues drained', async () => {
    const devices = handles.map((h) => h.device);
    const start = performance.now();
    const submissions = await burnGpus(devices, 60);
    expect(performance.now() - start).toBeGreaterThanOrEqual(60);
    // Two in flight at a time, so more than one each; none left running (the queues are idle).
    for (const n of submissions) expect(n).toBeGreaterThan(1);
    const idle = performance.now();
    await Promise.all(devices.map((d) => d.queue.onSubmittedWorkDone()));
    expect(performance.now() - idle).toBeLessThan(50);
    expect(await burnGpus(devices, 0)).toEqual([0, 0]);
  });
});
