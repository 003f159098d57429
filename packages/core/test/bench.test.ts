import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { BENCH_VARIANTS, benchPhasings, benchTable, benchWorkload, formatBenchSummary, medianRoundRatio, roundRatioInterval, summarizeBench, type BenchReport } from '../src/tools/bench.js';
import { openDevice } from '../src/tools/run.js';
import { defaultBlock } from '../src/workloads/index.js';

let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

describe('medianRoundRatio', () => {
  it('compares the runs of each round, which a ratio of medians does not', () => {
    // Fused is 10% faster in every round but the third, which straddled a clock change; the medians
    // fall on rounds at different clocks.
    const sequential = [2.2, 2.2, 11, 11, 11];
    const fused = [2, 2, 2, 10, 10];
    expect(medianRoundRatio(sequential, fused)).toBeCloseTo(1.1);
    expect(() => medianRoundRatio([1, 2], [1])).toThrow(RangeError);
  });
});

describe('roundRatioInterval', () => {
  // Rounds of a program against itself, each round's ratio off by up to ±15% (a two-device row's spread).
  const noise = [1.12, 0.9, 1.03, 0.95, 1.15, 0.88, 1.01, 0.97, 1.08, 0.93, 1.0, 1.05, 0.92, 1.1, 0.96, 1.02, 0.99, 1.06, 0.94, 1.04];
  const ones = noise.map(() => 1);

  it('holds the median of the rounds, and 1 where the two sides are the same program', () => {
    const [lo, hi] = roundRatioInterval(noise, ones);
    expect(lo).toBeLessThanOrEqual(medianRoundRatio(noise, ones));
    expect(hi).toBeGreaterThanOrEqual(medianRoundRatio(noise, ones));
    expect(lo).toBeLessThan(1);
    expect(hi).toBeGreaterThan(1);
    // An interval of the median, narrower than the rounds themselves.
    expect(lo).toBeGreaterThan(Math.min(...noise));
    expect(hi).toBeLessThan(Math.max(...noise));
    // Reproducible from the rounds alone.
    expect(roundRatioInterval(noise, ones)).toEqual([lo, hi]);
  });

  it('lies above 1 once the numerator is slower beyond the spread, and is a point without spread', () => {
    const [lo] = roundRatioInterval(noise.map((x) => x * 1.2), ones);
    expect(lo).toBeGreaterThan(1);
    expect(roundRatioInterval([2, 4, 6], [1, 2, 3])).toEqual([2, 2]);
    expect(() => roundRatioInterval([1, 2], [1])).toThrow(RangeError);
    expect(() => roundRatioInterval([], [])).toThrow(RangeError);
  });

  it('counts the rows resolved either way in the summary', () => {
    const row = (overSequential: number, interval: readonly [number, number]) => ({ speedup: { overSequential, overDecomposed: 1, overSequentialInterval: interval }, variants: {} }) as unknown as BenchReport;
    const summary = summarizeBench([row(1.3, [1.2, 1.4]), row(1.0, [0.9, 1.1]), row(0.8, [0.7, 0.9])]);
    expect(summary.resolved).toEqual({ rows: 3, faster: 1, slower: 1 });
    expect(formatBenchSummary(summary)).toContain('of 3 rows in rounds, 1 faster and 1 slower beyond their 95% intervals');
    expect(summarizeBench([{ speedup: { overSequential: 1, overDecomposed: 1 }, variants: {} } as unknown as BenchReport]).resolved).toBeUndefined();
  });
});

describe('the three variants of a workload', () => {
  it.each(['ag-gemm', 'gemm-rs'] as const)('%s: sequential, decomposed and fused all verified, with their dispatches', async (workload) => {
    const seen: string[] = [];
    const r = await benchWorkload({
      workload,
      ranks: 2,
      shape: { m: 64, n: 32, k: 32 },
      dtype: 'f32',
      order: 'chunk-arrival',
      seed: 3,
      device,
      runs: 3,
      warmup: 1,
      onVariant: (v) => seen.push(v),
    });
    expect(seen).toEqual([...BENCH_VARIANTS, 'compute-only']);
    expect(r.robustness).toBe(true);
    expect(r.overlap!.computeOnlyMs.runs).toBe(3);
    // Communication timed alone where the adapter has GPU timestamps (the sequential run's tileless
    // phases), else derived as sequential minus compute.
    expect(r.overlap!.commMeasured).toBe(device.hasTimestamps);
    // How long it takes is no unit test's to judge (on lavapipe a phase's time is the CPU's, and once
    // came out above the whole sequential run's median); that it is measured, is.
    if (device.hasTimestamps) {
      expect(r.overlap!.commOnlyMs).toBeGreaterThan(0);
    } else {
      expect(r.overlap!.commOnlyMs).toBeCloseTo(Math.max(0, r.variants.sequential.ms.median - r.overlap!.computeOnlyMs.median));
    }
    for (const v of BENCH_VARIANTS) {
      expect(r.variants[v].verified).toBe(true);
      expect(r.variants[v].ms.runs).toBe(3);
      expect(r.variants[v].ms.median).toBeGreaterThan(0);
      // Every variant names the tile it ran, the same in all (the timed kernel is the checked one).
      expect(r.variants[v].block).toEqual(r.variants.fused.block);
    }
    expect(r.variants.fused.block).toEqual(defaultBlock(r.shape));
    // Fused is one dispatch; the others move chunks between dispatches, sequential in fewer of them.
    expect(r.variants.fused.phases).toEqual([1]);
    expect(r.variants.fused.backend).toBe('gpu-signal');
    expect(r.variants.decomposed.backend).toBe('peer-copy');
    expect(r.variants.decomposed.phases[0]).toBeGreaterThan(1);
    expect(r.variants.sequential.phases[0]).toBeGreaterThan(1);
    expect(r.speedup.overSequential).toBeCloseTo(r.variants.sequential.ms.median / r.variants.fused.ms.median);
    expect(r.fusedIsDecomposed).toBeUndefined();
    // On one device the fused variant's moves run inside its tiles' dispatch: no communication of its own to time.
    expect(r.overlap?.fusedCommOnlyMs).toBeUndefined();
    const table = benchTable([r]);
    expect(table.split('\n')).toHaveLength(3);
    expect(table).toContain(`| ${workload} | 64x32x32 | 2 | 1 |`);
  }, 120_000);

  it('on two devices: the variants, the communication alone and the compute alone timed in rounds, each variant checked', async () => {
    const handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
    try {
      const seen: string[] = [];
      // Where the host exposes a collector (node --expose-gc), it runs between the rounds, once each.
      let collections = 0;
      const host = globalThis as { gc?: () => void };
      const exposed = host.gc;
      host.gc = () => void collections++;
      const r = await benchWorkload({ workload: 'ag-gemm', ranks: 2, devices: 2, handles, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', order: 'chunk-arrival', seed: 3, runs: 3, warmup: 1, busyBetweenRounds: 1, onVariant: (v) => seen.push(v) }).finally(() => (host.gc = exposed));
      expect(collections).toBe(3);
      expect(seen).toEqual([...BENCH_VARIANTS, 'compute-only']);
      expect(r.devices).toBe(2);
      for (const v of BENCH_VARIANTS) {
        expect(r.variants[v].verified).toBe(true);
        expect(r.variants[v].ms.runs).toBe(3);
        expect(r.variants[v].backend).toBe('peer-copy');
        // One run in each of 3 rounds, the runs the summary was made of.
        const rounds = r.variants[v].rounds!;
        expect(rounds).toHaveLength(3);
        expect(Math.min(...rounds)).toBe(r.variants[v].ms.min);
        expect(Math.max(...rounds)).toBe(r.variants[v].ms.max);
        // Its place in each round: six parts (three variants, two communications alone, the compute alone).
        expect(r.variants[v].positions).toHaveLength(3);
        expect(r.variants[v].positions!.every((p) => p >= 0 && p < 6)).toBe(true);
      }
      // Every round had one part first, whose place no other variant shared.
      for (let round = 0; round < 3; round++) expect(new Set(BENCH_VARIANTS.map((v) => r.variants[v].positions![round])).size).toBe(3);
      // The speedups compare the runs of one round, not median with median.
      expect(r.speedup.overSequential).toBe(medianRoundRatio(r.variants.sequential.rounds!, r.variants.fused.rounds!));
      expect(r.speedup.overDecomposed).toBe(medianRoundRatio(r.variants.decomposed.rounds!, r.variants.fused.rounds!));
      // With what the rounds can resolve, printed beside the ratio.
      const [lo, hi] = r.speedup.overSequentialInterval!;
      expect(lo).toBeLessThanOrEqual(r.speedup.overSequential);
      expect(hi).toBeGreaterThanOrEqual(r.speedup.overSequential);
      expect(r.speedup.overDecomposedInterval).toEqual(roundRatioInterval(r.variants.decomposed.rounds!, r.variants.fused.rounds!));
      expect(benchTable([r])).toContain(`${r.speedup.overSequential.toFixed(2)}x (${lo.toFixed(2)}–${hi.toFixed(2)})`);
      // Timed alone on the host's clock (that those runs leave the tiles out: multi-device.test.ts).
      expect(r.overlap!.commMeasured).toBe(true);
      expect(r.overlap!.commOnlyMs).toBeGreaterThan(0);
      expect(r.overlap!.fusedCommOnlyMs).toBeGreaterThan(0);
      // One rank a device: no chunk stays on a device, so fused lowers to decomposed's very program.
      expect(r.fusedIsDecomposed).toBe(true);
      // The kernel without its transfers, timed in the same blocks as the variants.
      expect(r.overlap!.computeOnlyMs.runs).toBe(3);
      expect(r.overlap!.computeOnlyMs.median).toBeGreaterThan(0);
    } finally {
      handles.forEach((h) => h.close());
    }
  }, 120_000);

  it('on two devices, the fused variant takes a tuned sequential phasing where given, and the table says so', async () => {
    const handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
    try {
      // Two ranks a device: chunks within a device too, which the fused variant moves inside its kernel.
      const o = { workload: 'ag-gemm', ranks: 4, devices: 2, handles, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', order: 'chunk-arrival', seed: 3, runs: 2, warmup: 0 } as const;
      const tuned = await benchWorkload({ ...o, phasing: 'sequential' });
      expect([tuned.variants.sequential.phasing, tuned.variants.decomposed.phasing, tuned.variants.fused.phasing]).toEqual(['sequential', 'overlap', 'sequential']);
      // Not overlapping at all: the chunks within a device move between dispatches as well, as the tuner timed it.
      expect(tuned.variants.fused.backend).toBe(tuned.variants.sequential.backend);
      expect(tuned.variants.fused.verified).toBe(true);
      expect(benchTable([tuned])).toContain('(sequential phasing, tuned)');
      expect(tuned.fusedIsSequential).toBe(true);
      const plain = await benchWorkload(o);
      expect(plain.fusedIsSequential).toBeUndefined();
      expect(plain.variants.fused.phasing).toBe('overlap');
      expect(plain.variants.fused.backend).toBe('gpu-signal+peer-copy');
      expect(benchTable([plain])).not.toContain('sequential phasing');
      // On one device as well: the fused row then runs the sequential program, and says so.
      const one = await benchWorkload({ ...o, devices: 1, handles: [handles[0]!], phasing: 'sequential' });
      expect([one.variants.fused.phasing, one.variants.fused.backend, one.variants.fused.verified]).toEqual(['sequential', one.variants.sequential.backend, true]);
      expect(benchTable([one])).toContain('(sequential phasing, tuned)');
      expect(one.fusedIsSequential).toBe(true);
    } finally {
      handles.forEach((h) => h.close());
    }
  }, 120_000);

  it('on two devices, overlap against sequential phasing: those two alone in rounds, each checked; on one device too', async () => {
    const handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
    try {
      const seen: string[] = [];
      // A tuned sequential phasing given with the options does not turn the overlap side sequential.
      const o = { workload: 'ag-gemm', ranks: 4, devices: 2, handles, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', order: 'chunk-arrival', seed: 3, runs: 3, warmup: 1, phasing: 'sequential', onVariant: (v: string) => seen.push(v) } as const;
      const r = await benchPhasings(o);
      // Neither the decomposed variant nor a part alone ran.
      expect(seen).toEqual(['sequential', 'fused']);
      expect([r.sequential.phasing, r.overlap.phasing]).toEqual(['sequential', 'overlap']);
      expect(r.overlap.backend).toBe('gpu-signal+peer-copy');
      expect(r.sequential.verified && r.overlap.verified).toBe(true);
      expect(r.sequential.rounds).toHaveLength(3);
      expect(r.overlap.rounds).toHaveLength(3);
      expect(r.overlapRatio).toBe(medianRoundRatio(r.sequential.rounds!, r.overlap.rounds!));
      expect(r.overlapInterval).toEqual(roundRatioInterval(r.sequential.rounds!, r.overlap.rounds!));
      // On one device the overlapped side keeps every chunk on the GPU; the sequential one moves them between phases.
      const one = await benchPhasings({ ...o, devices: 1, handles: [handles[0]!] });
      expect([one.sequential.backend, one.overlap.backend]).toEqual(['peer-copy', 'gpu-signal']);
      expect(one.sequential.verified && one.overlap.verified).toBe(true);
      expect(one.overlap.rounds).toHaveLength(3);
      expect(one.overlapRatio).toBe(medianRoundRatio(one.sequential.rounds!, one.overlap.rounds!));
    } finally {
      handles.forEach((h) => h.close());
    }
  }, 120_000);

  it('on two devices with two ranks each: fused moves the chunks within a device itself, a program of its own', async () => {
    const handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
    try {
      const r = await benchWorkload({ workload: 'ag-gemm', ranks: 4, devices: 2, handles, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', order: 'chunk-arrival', seed: 3, runs: 2, warmup: 0 });
      expect(r.variants.fused.backend).toBe('gpu-signal+peer-copy');
      expect(r.variants.fused.verified).toBe(true);
      expect(r.fusedIsDecomposed).toBeUndefined();
    } finally {
      handles.forEach((h) => h.close());
    }
  }, 120_000);
});
