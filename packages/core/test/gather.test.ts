// The gather plans of ag-gemm and ring-attn (WorkloadOptions.gather): a ring forwards each shard over
// R − 1 hops one after another; one-shot sends every shard straight to every rank at step 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevice, runWorkload, type RunWorkloadOptions } from '../src/tools/run.js';
import { getWorkload, UsageError } from '../src/workloads/index.js';
import { type RunOptions } from '../src/tools/run-report.js';
import type { DeviceHandle } from '@syncopate/runtime';

const base = { order: 'chunk-arrival', backend: 'auto', seed: 3, dtype: 'f32' } as const;

describe('gather plans', () => {
  it.each(['ag-gemm', 'ring-attn'] as const)('%s one-shot: every shard from its owner to every other rank at step 0', (workload) => {
    const o = { ranks: 4, shape: { m: 256, n: 64, k: 256 }, dtype: 'f32' as const };
    const ring = getWorkload(workload).build(o).plan.chunks;
    const oneShot = getWorkload(workload).build({ ...o, gather: 'one-shot' }).plan.chunks;
    // As many chunks (R·(R − 1) a gathered tensor), but none forwarded: each leaves the rank that owns it.
    expect(oneShot).toHaveLength(ring.length);
    expect(new Set(oneShot.map((c) => c.step))).toEqual(new Set([0]));
    expect(Math.max(...ring.map((c) => c.step))).toBe(2);
    const owner = (c: (typeof oneShot)[number]) => Math.floor(c.region.lo[0]! / (o.shape.m / 4));
    expect(oneShot.every((c) => owner(c) === c.src && c.src !== c.dst)).toBe(true);
  });

  it('refuses a gather it does not know, naming it', () => {
    const o = { ranks: 2, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32' as const, gather: 'tree' } as unknown as Parameters<ReturnType<typeof getWorkload>['build']>[0];
    expect(() => getWorkload('ag-gemm').build(o)).toThrow(new UsageError("gather must be 'ring' or 'one-shot', got tree"));
  });
});

describe('one-shot gathers run exact', () => {
  let device: DeviceHandle;
  beforeAll(async () => {
    device = await openDevice();
  });
  afterAll(() => device?.close());

  const cases: (RunOptions & { devices?: number })[] = [
    { ...base, workload: 'ag-gemm', ranks: 4, shape: { m: 128, n: 32, k: 64 } },
    { ...base, workload: 'ag-gemm', ranks: 4, devices: 2, shape: { m: 128, n: 32, k: 64 } },
    { ...base, workload: 'ring-attn', ranks: 4, shape: { m: 64, n: 16, k: 1 } },
    { ...base, workload: 'ring-attn', ranks: 4, devices: 2, shape: { m: 64, n: 16, k: 1 } },
  ];
  it.each(cases)('$workload ranks=$ranks devices=$devices', async (o) => {
    // A first dispatch compiles the shader on lavapipe (20-40 s cold on a busy machine): bounded at 100 s.
    const options: RunWorkloadOptions = { ...o, gather: 'one-shot', timeoutMs: 100_000, ...(o.devices ? {} : { device }) };
    const report = await runWorkload(options);
    expect(report.verified).toBe(true);
    if (o.workload === 'ag-gemm') expect(report.maxAbsError).toBe(0);
  }, 120_000);
});
