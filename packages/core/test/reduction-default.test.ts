// gemm-rs's reduction unless told (defaultReduction): one-shot where its ranks share one device (the
// partials of an output tile summed once, by the last tile over it), the ring where they span devices
// (fewer bytes between them). The report names the plan that ran.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevice, runWorkload } from '../src/tools/run.js';
import { getWorkload } from '../src/workloads/index.js';
import type { DeviceHandle } from '@syncopate/runtime';

const shape = { m: 128, n: 32, k: 64 };
const base = { workload: 'gemm-rs', ranks: 4, shape, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 5 } as const;

describe('gemm-rs reduction by placement', () => {
  it('builds one-shot on one device, the ring over several, and what is named wherever', () => {
    const plan = (o: { devices?: number; reduction?: 'ring' | 'one-shot' }) => getWorkload('gemm-rs').build({ ranks: 4, shape, dtype: 'f32', ...o }).plan.name;
    expect(plan({})).toBe('one-shot-reduce-scatter(@C, axis=0)');
    expect(plan({ devices: 1 })).toBe('one-shot-reduce-scatter(@C, axis=0)');
    expect(plan({ devices: 2 })).toBe('ring-reduce-scatter(@C, axis=0)');
    expect(plan({ devices: 2, reduction: 'one-shot' })).toBe('one-shot-reduce-scatter(@C, axis=0)');
    expect(plan({ reduction: 'ring' })).toBe('ring-reduce-scatter(@C, axis=0)');
  });

  let device: DeviceHandle;
  beforeAll(async () => {
    device = await openDevice();
  });
  afterAll(() => device?.close());

  it('runs exact on one device, one-shot, and reports it', async () => {
    const report = await runWorkload({ ...base, device });
    expect(report.plan).toBe('one-shot-reduce-scatter(@C, axis=0)');
    expect(report.verified).toBe(true);
    expect(report.maxAbsError).toBe(0);
  }, 120_000);

  it('runs exact over two devices, the ring, and reports it', async () => {
    const report = await runWorkload({ ...base, devices: 2 });
    expect(report.devices).toBe(2);
    expect(report.plan).toBe('ring-reduce-scatter(@C, axis=0)');
    expect(report.verified).toBe(true);
    expect(report.maxAbsError).toBe(0);
  }, 120_000);
});
