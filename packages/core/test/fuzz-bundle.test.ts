/**
 * The GPU fuzz bundle (benchmarks/src/fuzz.ts) kept working: a few small drawn cases on the software
 * adapter (one and two devices) verified against the CPU reference, a refusal and a timeout counted as
 * such, cases reproducible from (seed, index), and the summary table. The long runs are the bundle's,
 * on the GPU machines (benchmarks/results/suite-2026-11-28/).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openDevices } from '@syncopate/runtime';
import { drawCase, type FuzzCase, type FuzzLimits } from '../../../benchmarks/src/fuzz-cases.js';
import { FuzzDevices, runCase, type FuzzResult } from '../../../benchmarks/src/fuzz-runner.js';
import { summaryTable } from '../../../benchmarks/src/fuzz-summary.js';
import { WORKLOAD_NAMES } from '../src/workloads/index.js';

// Small enough that the software adapter compiles each kernel in seconds.
const TINY: FuzzLimits = { maxDim: 12, maxRanks: 2, maxDevices: 2, workloads: ['embed-a2a', 'gemv-ar'] };
const devices = new FuzzDevices(() => openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } }));
afterAll(() => devices.close());

describe('fuzz cases', () => {
  it('are reproducible from (seed, index) and cover every workload, dtype and both device counts', () => {
    expect(drawCase(7, 42)).toEqual(drawCase(7, 42));
    const cases = Array.from({ length: 300 }, (_, i) => drawCase(1, i));
    expect(new Set(cases.map((c) => c.workload))).toEqual(new Set(WORKLOAD_NAMES));
    expect(new Set(cases.map((c) => c.dtype))).toEqual(new Set(['f16', 'f32']));
    expect(new Set(cases.map((c) => c.devices))).toEqual(new Set([1, 2]));
    expect(cases.every((c) => c.ranks >= 1 && c.ranks <= 8 && (c.devices === 1 || c.ranks >= 2))).toBe(true);
  });
});

describe('fuzz cases on the software adapter', () => {
  const results: FuzzResult[] = [];

  it('runs drawn cases on one and two devices, each verified against the CPU reference', async () => {
    const cases = Array.from({ length: 40 }, (_, i) => drawCase(3, i, TINY));
    const picked = [cases.find((c) => c.devices === 1)!, cases.find((c) => c.devices === 2)!];
    for (const c of picked) results.push(await runCase(c, devices, 100_000));
    expect(results.map((r) => [r.command, r.outcome, r.message])).toEqual(picked.map((c, i) => [results[i]!.command, 'verified', undefined]));
  }, 120_000);

  it('counts a UsageError as refused, with its message, and a case past its bound as a timeout', async () => {
    const bad: FuzzCase = { ...drawCase(3, 0, TINY), workload: 'ring-attn', ranks: 2, devices: 1, shape: { m: 3, n: 2, k: 1 } };
    const refused = await runCase(bad, devices, 100_000);
    expect(refused).toMatchObject({ outcome: 'refused', error: 'UsageError', message: expect.stringMatching(/S = 3 must split evenly over the 2 ranks/) });
    const late = await runCase({ ...drawCase(3, 1, TINY), ranks: 2, devices: 1 }, devices, 1);
    expect(late.outcome).toBe('timeout');
    results.push(refused, late);
  }, 60_000);

  it('summarises by workload and device count, failures listed with their commands', () => {
    const table = summaryTable(results);
    expect(table).toMatch(/^\| case \| cases \| verified \| refused \| wrong \| timeout \| error \| slowest \(s\) \|/);
    expect(table).toMatch(/\| all \| 4 \| 2 \| 1 \| 0 \| 1 \| 0 \|/);
    expect(table).toMatch(/failed:\n- #1 timeout: syncopate run /);
  });
});
