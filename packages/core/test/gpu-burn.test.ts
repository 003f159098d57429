// burnGpus on the software adapter, driven by a clock of the test's own: what it submits and waits
// for, never how long it took (wall-clock bounds fail on a loaded 2-core machine).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { burnGpus } from '../src/tools/gpu-burn.js';

/** `target` with some members replaced; the rest bound to it (Dawn's objects check `this`). */
function withMembers<T extends object>(target: T, members: Record<string, unknown>): T {
  return new Proxy(target, {
    get: (t, key) => {
      if (typeof key === 'string' && key in members) return members[key];
      const value: unknown = Reflect.get(t, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
}

interface Observed {
  readonly device: GPUDevice;
  /** Workgroups of each dispatch, in the order encoded. */
  readonly dispatches: number[];
  /** onSubmittedWorkDone calls, and those not yet resolved. */
  readonly waits: number;
  readonly pending: number;
}

/** `device` as burnGpus sees it, its dispatches and queue waits counted; `onSubmit` runs at each submission. */
function observe(device: GPUDevice, onSubmit: () => void = () => {}): Observed {
  const seen = { dispatches: [] as number[], waits: 0, pending: 0 };
  const queue = withMembers(device.queue, {
    submit: (buffers: Iterable<GPUCommandBuffer>) => {
      onSubmit();
      device.queue.submit(buffers);
    },
    onSubmittedWorkDone: () => {
      seen.waits++;
      seen.pending++;
      return device.queue.onSubmittedWorkDone().then(() => void seen.pending--);
    },
  });
  const createCommandEncoder = (descriptor?: GPUCommandEncoderDescriptor) => {
    const encoder = device.createCommandEncoder(descriptor);
    const beginComputePass = (passDescriptor?: GPUComputePassDescriptor) => {
      const pass = encoder.beginComputePass(passDescriptor);
      const dispatchWorkgroups = (x: number, y?: number, z?: number) => {
        seen.dispatches.push(x);
        pass.dispatchWorkgroups(x, y, z);
      };
      return withMembers(pass, { dispatchWorkgroups });
    };
    return withMembers(encoder, { beginComputePass });
  };
  return Object.assign(seen, { device: withMembers(device, { queue, createCommandEncoder }) });
}

describe('burnGpus', () => {
  let handles: DeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(2, { gpus: [] });
  });
  afterAll(() => handles?.forEach((h) => h.close()));

  it('submits until its clock reaches the time asked, two in flight, and returns with every submission done', async () => {
    // The clock moves 1 ms at each submission, so 10 ms is 10 submissions over both devices.
    let clock = 0;
    const observed: Observed[] = [];
    for (const h of handles) observed.push(observe(h.device, () => clock++));
    const submissions = await burnGpus(observed.map((o) => o.device), 10, () => clock);
    expect(clock).toBe(10);
    expect(submissions.reduce((a, b) => a + b)).toBe(10);
    for (const [d, o] of observed.entries()) {
      // Each device's next submission goes in before it waits on the one before, so more than one each.
      expect(submissions[d]).toBeGreaterThan(1);
      expect(o.dispatches).toHaveLength(submissions[d]!);
      // A wait on every submission, all resolved: nothing left running on the queue.
      expect(o.waits).toBe(submissions[d]);
      expect(o.pending).toBe(0);
    }
  });

  it('doubles the dispatch while a submission takes less than 2 ms of its clock', async () => {
    let quick = 0;
    const fast = observe(handles[0]!.device);
    // Each read 0.5 ms later: the wait on a submission takes 0.5 ms, so every round doubles.
    await burnGpus([fast.device], 6, () => (quick += 0.5));
    expect(fast.dispatches).toEqual([1, 1, 2, 4, 8]);
    let slow = 0;
    const busy = observe(handles[1]!.device);
    // Each read 3 ms later: every submission took longer than 2 ms, so the dispatch stays as it is.
    await burnGpus([busy.device], 15, () => (slow += 3));
    expect(busy.dispatches).toEqual([1, 1, 1]);
  });

  it('submits nothing, and reads no clock, for no time', async () => {
    const observed = handles.map((h) => observe(h.device));
    const clock = () => {
      throw new Error('burnGpus read the clock');
    };
    expect(await burnGpus(observed.map((o) => o.device), 0, clock)).toEqual([0, 0]);
    expect(await burnGpus(observed.map((o) => o.device), -5, clock)).toEqual([0, 0]);
    for (const o of observed) expect([o.dispatches, o.waits]).toEqual([[], 0]);
  });
});
