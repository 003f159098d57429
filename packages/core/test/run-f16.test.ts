import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, requestDevice, type DeviceHandle } from '@syncopate/runtime';
import { cli } from './cli-harness.js';
import { openDevice, runWorkload } from '../src/tools/run.js';
import { UsageError } from '../src/workloads/index.js';
import { type RunOptions } from '../src/tools/run-report.js';

// One device for the whole file: opening one per test costs more than the small runs themselves.
let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

const base = { dtype: 'f16', backend: 'auto', seed: 11, order: 'chunk-arrival' } as const;

describe('f16 fused kernels on the software adapter, against the CPU reference', () => {
  it('the software adapter offers shader-f16 and the device has it', () => {
    expect(device.features).toContain('shader-f16');
  });

  const cases: RunOptions[] = [];
  for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
    for (const ranks of [1, 2, 4]) cases.push({ ...base, workload, ranks, shape: { m: 64, n: 64, k: 32 } });
    // Not multiples of the tile, and odd element counts: f16 buffers end in half a word of padding.
    for (const ranks of [1, 2, 4]) cases.push({ ...base, workload, ranks, shape: { m: 37, n: 23, k: 19 } });
    cases.push({ ...base, workload, ranks: 4, chunksPerRank: 2, shape: { m: 100, n: 72, k: 40 } });
  }

  // Inputs are integers in [-2, 2] (exact in f16) and dot accumulates in f32, so the answer is exact.
  it.each(cases)('$workload ranks=$ranks $shape.m x $shape.n x $shape.k chunks=$chunksPerRank', async (o) => {
    const report = await runWorkload({ ...o, device, timedRuns: 1 });
    expect(report.dtype).toBe('f16');
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
  }, 120_000);
});

describe('f16 without shader-f16', () => {
  const o = { ...base, workload: 'ag-gemm', ranks: 2, shape: { m: 32, n: 32, k: 16 } } as const;

  it('an adapter without it is a UsageError naming the feature', async () => {
    // The check comes before anything touches the GPU, so a handle that says so is enough.
    const without: DeviceHandle = { ...device, features: device.features.filter((f) => f !== 'shader-f16'), missingFeatures: ['shader-f16'] };
    const run = runWorkload({ ...o, device: without });
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow('the kernel has f16 tensors (A, B), but the adapter has no shader-f16: use --dtype f32');
  });

  it('a device opened without it is a UsageError saying so', async () => {
    const plain = await requestDevice(await openGpu(), { requiredFeatures: [], requiredLimits: 'adapter-max' });
    try {
      expect(plain.features).not.toContain('shader-f16');
      const run = runWorkload({ ...o, device: plain });
      await expect(run).rejects.toThrow(UsageError);
      await expect(run).rejects.toThrow(/the device was opened without shader-f16/);
      // f32 still runs on it.
      expect((await runWorkload({ ...o, dtype: 'f32', device: plain, timedRuns: 1 })).maxAbsError).toBe(0);
    } finally {
      plain.close();
    }
  }, 120_000);
});

describe('syncopate run --dtype f16', () => {
  it('runs, verifies and reports f16', async () => {
    const { code, out, err } = await cli('run', 'ag-gemm', '--dtype', 'f16', '--ranks', '2', '--m', '48', '--n', '40', '--k', '24', '--json');
    expect(err).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ workload: 'ag-gemm', dtype: 'f16', verified: true, maxAbsError: 0 });
  }, 120_000);
});
