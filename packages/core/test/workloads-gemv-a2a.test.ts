// The gemv-ar (GEMV + all-reduce) and a2a-gemm (MoE: all-to-all, expert GEMM, all-to-all) workloads:
// their CPU references on cases worked out by hand, their plans, their options, and runs on the
// software adapter (every backend, two devices, the three bench variants), exact against the reference.
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDiagnostic, type Box } from '@syncopate/ir';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { BENCH_VARIANTS, benchWorkload } from '../src/tools/bench.js';
import { compile } from '../src/api/compile.js';
import { runWorkload } from '../src/tools/run.js';
import {
  a2aLayout,
  defaultSplits,
  getWorkload,
  maxAbsError,
  regionBoxes,
  UsageError,
  workloads,
  type WorkloadOptions,
  type WorkloadShape,
} from '../src/workloads/index.js';

const gemvAr = workloads['gemv-ar'];
const a2aGemm = workloads['a2a-gemm'];
const options = (ranks: number, shape: WorkloadShape, extra: Partial<WorkloadOptions> = {}): WorkloadOptions => ({ ranks, shape, dtype: 'f32', ...extra });
const rowsOf = (boxes: readonly Box[]) => boxes.map((b) => [b.lo[0], b.hi[0]]);

describe('gemv-ar: Y = Σ_r X_r · W_r on every rank', () => {
  it('has a reference equal to a sum worked out by hand (2 ranks, M 1, N 2, K 4)', () => {
    const o = options(2, { m: 1, n: 2, k: 4 });
    // Rank 0: X_0 = [1 2], W_0 = I → [1 2]. Rank 1: X_1 = [3 -1], W_1 = [[2 1], [1 1]] → [5 2].
    const inputs = {
      X: [Float32Array.of(1, 2), Float32Array.of(3, -1)],
      W: [Float32Array.of(1, 0, 0, 1), Float32Array.of(2, 1, 1, 1)],
      Y: [new Float32Array(2), new Float32Array(2)],
    };
    const { Y } = gemvAr.reference(o, inputs);
    expect(Y).toEqual([Float32Array.of(6, 4), Float32Array.of(6, 4)]);
    expect(gemvAr.checkedRegion(o, 'Y', 1)).toEqual({ lo: [0, 0], hi: [1, 2] });
  });

  it('gives each rank its own K/R slices of X and W, seeded, small integers', () => {
    const o = options(4, { m: 3, n: 8, k: 32 });
    const inputs = gemvAr.inputs(o, 9);
    expect(inputs.X!.map((x) => x.length)).toEqual([24, 24, 24, 24]);
    expect(inputs.W!.map((w) => w.length)).toEqual([64, 64, 64, 64]);
    expect(inputs.X![0]).not.toEqual(inputs.X![1]);
    expect(gemvAr.inputs(o, 9)).toEqual(inputs);
    expect(inputs.W!.every((w) => w.every((v) => Number.isInteger(v) && v >= -2 && v <= 2))).toBe(true);
    expect(inputs.Y!.every((y) => y.every((v) => v === 0))).toBe(true);
  });

  it('splits K unevenly where it must: every slice ⌈K/R⌉ wide, a shorter share padded with zeros', () => {
    // K = 64 over 3 ranks: shares of 21, 21 and 22 columns (shardRange's split) in slices of 22.
    const o = options(3, { m: 8, n: 8, k: 64 });
    expect(gemvAr.build(o).kernel.tensors.map((t) => t.shape)).toEqual([[8, 22], [22, 8], [8, 8]]);
    const { X, W } = gemvAr.inputs(o, 2);
    const column = (x: Float32Array, j: number) => Array.from({ length: 8 }, (_, i) => x[i * 22 + j]!);
    const row = (w: Float32Array, p: number) => [...w.subarray(p * 8, p * 8 + 8)];
    const zero = (xs: number[]) => xs.every((v) => v === 0);
    expect(X!.map((x) => zero(column(x, 21)))).toEqual([true, true, false]);
    expect(W!.map((w) => zero(row(w, 21)))).toEqual([true, true, false]);
    expect(X!.map((x) => zero(column(x, 20)))).toEqual([false, false, false]);
    // The reference: each rank's share of the sum, by the textbook loop.
    const want = Array.from({ length: 64 }, (_, e) => {
      const [i, j] = [Math.floor(e / 8), e % 8];
      let sum = 0;
      [21, 21, 22].forEach((share, r) => {
        for (let p = 0; p < share; p++) sum += X![r]![i * 22 + p]! * W![r]![p * 8 + j]!;
      });
      return sum;
    });
    expect(gemvAr.reference(o, gemvAr.inputs(o, 2)).Y!.map((y) => [...y])).toEqual([want, want, want]);
  });

  it('builds an all-reduce of column slabs of Y that compiles (ranks 1-4, 1-2 chunks a rank)', () => {
    for (const ranks of [1, 2, 3, 4]) {
      for (const chunksPerRank of [1, 2]) {
        const { kernel, plan } = gemvAr.build(options(ranks, { m: 5, n: 40, k: 48 }, { chunksPerRank }));
        // Reduce-scatter then all-gather: R − 1 steps each, every rank sending each of its pieces once a step.
        expect(plan.chunks).toHaveLength(2 * ranks * (ranks - 1) * chunksPerRank);
        expect(plan.chunks.every((c) => c.tensor === 'Y' && c.region.lo[0] === 0 && c.region.hi[0] === 5)).toBe(true);
        expect(kernel.tensors.map((t) => [t.name, t.shape])).toEqual([['X', [5, 48 / ranks]], ['W', [48 / ranks, 40]], ['Y', [5, 40]]]);
        const result = compile(kernel, plan);
        if (E.isLeft(result)) expect.fail(result.left.map(formatDiagnostic).join('\n'));
      }
    }
  });

  it('rejects options it cannot be built with, naming the problem', () => {
    const shape = { m: 4, n: 64, k: 64 };
    expect(() => gemvAr.build(options(4, { m: 4, n: 2, k: 64 }))).toThrow(/gemv-ar: N = 2 is smaller than the 4 ranks/);
    expect(() => gemvAr.build(options(0, shape))).toThrow(UsageError);
    expect(() => gemvAr.build(options(2, { m: 0, n: 64, k: 64 }))).toThrow('gemv-ar: M must be a positive integer, got 0');
    expect(() => gemvAr.build(options(2, shape, { block: { m: 3, n: 64, k: 32 } }))).toThrow(/block 3x64x32: m must be one of 1, 2, 4/);
    expect(() => gemvAr.build(options(2, shape, { chunksPerRank: 1.5 }))).toThrow(UsageError);
    expect(() => gemvAr.inputs({ ...options(2, shape), dtype: 'f64' as 'f32' }, 1)).toThrow(UsageError);
    expect(() => gemvAr.checkedRegion(options(2, shape), 'X', 0)).toThrow(new UsageError('gemv-ar: X is not an output; the output is Y'));
    expect(() => gemvAr.checkedRegion(options(2, shape), 'Y', 2)).toThrow(UsageError);
    expect(() => gemvAr.reference(options(2, shape), { X: [new Float32Array(3)], W: [] })).toThrow(UsageError);
  });
});

describe('a2a-gemm: tokens to experts and back', () => {
  // Rank 0 sends one token to each expert; rank 1 sends two to expert 0 and none to itself.
  const splits = [
    [1, 1],
    [2, 0],
  ];
  const tiny = options(2, { m: 2, n: 2, k: 1 }, { splits });

  it('lays each expert\'s tokens out in a block of the capacity, its padding after its own', () => {
    const layout = a2aLayout(tiny);
    // Expert 0 receives 3 tokens, expert 1 one: capacity is one 16-row tile. Block 0 is rank 0's 1
    // token, its 13 padding rows, rank 1's 2 tokens; block 1 is rank 0's token and 15 padding rows.
    expect(layout.capacity).toBe(16);
    expect(layout.rows).toBe(32);
    expect(layout.offsets).toEqual([
      [0, 16],
      [14, 17],
    ]);
    // Only tokens move: rank 0 → 1 (row 16) and rank 1 → 0 (rows 14:16), then their results back.
    const { plan } = a2aGemm.build(tiny);
    expect(plan.chunks.map((c) => [c.tensor, c.src, c.dst, c.step, c.region.lo[0], c.region.hi[0]])).toEqual([
      ['T', 0, 1, 0, 16, 17],
      ['T', 1, 0, 0, 14, 16],
      ['Y', 1, 0, 1, 16, 17],
      ['Y', 0, 1, 1, 14, 16],
    ]);
  });

  it('has a reference equal to results worked out by hand, checked on exactly the defined rows', () => {
    const T = [new Float32Array(32), new Float32Array(32)];
    T[0]![0] = 2; // rank 0's token for expert 0
    T[0]![16] = -1; // rank 0's token for expert 1
    T[1]![14] = 1; // rank 1's tokens for expert 0
    T[1]![15] = 3;
    const W = [Float32Array.of(1, 2), Float32Array.of(-2, 1)];
    const { Y } = a2aGemm.reference(tiny, { T, W, Y: [new Float32Array(64), new Float32Array(64)] });
    const row = (y: Float32Array, i: number) => [y[2 * i], y[2 * i + 1]];
    // Rank 0: its two results (2·W_0, −1·W_1) and what it computed as expert 0 for rank 1 (1·W_0, 3·W_0).
    expect([0, 16, 14, 15].map((i) => row(Y![0]!, i))).toEqual([[2, 4], [2, -1], [1, 2], [3, 6]]);
    // Rank 1: its results (rows 14, 15, from expert 0) and what it computed as expert 1 for rank 0.
    expect([16, 14, 15].map((i) => row(Y![1]!, i))).toEqual([[2, -1], [1, 2], [3, 6]]);
    expect(Y![1]![0]).toBe(0);
    // Rows in pairs (source, expert) that involve the rank; padding and others' pairs excluded.
    expect(rowsOf(regionBoxes(a2aGemm.checkedRegion(tiny, 'Y', 0)))).toEqual([[0, 1], [16, 17], [14, 16]]);
    expect(rowsOf(regionBoxes(a2aGemm.checkedRegion(tiny, 'Y', 1)))).toEqual([[16, 17], [14, 16]]);
  });

  it('fills only the rows a rank sends, seeded', () => {
    // Hidden size 8: the layout is the tiny case's; a row is sent when any of its 8 values is not 0.
    const inputs = a2aGemm.inputs({ ...tiny, shape: { m: 2, n: 2, k: 8 } }, 4);
    const sentRows = (t: Float32Array) => Array.from({ length: 32 }, (_, i) => i).filter((i) => t.subarray(8 * i, 8 * i + 8).some((v) => v !== 0));
    expect(inputs.T!.map(sentRows)).toEqual([[0, 16], [14, 15]]);
    const o = options(3, { m: 40, n: 16, k: 24 });
    const a = a2aGemm.inputs(o, 1);
    expect(a2aGemm.inputs(o, 1)).toEqual(a);
    expect(a2aGemm.inputs(o, 2).T![0]).not.toEqual(a.T![0]);
  });

  it('routes uneven, seeded loads by default: every rank its M tokens, experts loaded differently', () => {
    for (const [ranks, m] of [[2, 10], [3, 40], [4, 128]] as const) {
      const s = defaultSplits(ranks, m);
      expect(defaultSplits(ranks, m)).toEqual(s);
      expect(s.every((row) => row.reduce((a, b) => a + b, 0) === m && row.every((x) => Number.isInteger(x) && x >= 0))).toBe(true);
      const loads = s[0]!.map((_, d) => s.reduce((n, row) => n + row[d]!, 0));
      expect(new Set(loads).size).toBeGreaterThan(1);
      expect(new Set(s.flat()).size).toBeGreaterThan(ranks);
    }
  });

  it('builds plans that compile, and chunks cut finer with chunksPerRank (ranks 1-4)', () => {
    for (const ranks of [1, 2, 3, 4]) {
      for (const chunksPerRank of [1, 3]) {
        const o = options(ranks, { m: 24, n: 16, k: 16 }, { chunksPerRank });
        const { kernel, plan } = a2aGemm.build(o);
        const s = defaultSplits(ranks, 24);
        const pairs = s.flatMap((row, r) => row.map((x, d) => (r === d ? 0 : Math.min(x, chunksPerRank)))).reduce((a, b) => a + b, 0);
        expect(plan.chunks).toHaveLength(2 * pairs);
        expect(kernel.ranks).toBe(ranks);
        const result = compile(kernel, plan);
        if (E.isLeft(result)) expect.fail(result.left.map(formatDiagnostic).join('\n'));
      }
    }
  });

  it('checks what it claims: one spoiled element of a defined row is an error on that rank only', () => {
    // runWorkload's check: maxAbsError over each box of the checked region.
    const o = options(2, { m: 10, n: 16, k: 16 });
    const inputs = a2aGemm.inputs(o, 3);
    const want = a2aGemm.reference(o, inputs).Y!;
    const got = want.map((y) => y.slice());
    const [first] = regionBoxes(a2aGemm.checkedRegion(o, 'Y', 1));
    got[1]![first!.lo[0]! * 16 + 5]! += 1;
    const shape = [a2aLayout(o).rows, 16];
    const error = (r: number) => Math.max(...regionBoxes(a2aGemm.checkedRegion(o, 'Y', r)).map((b) => maxAbsError(got[r]!, want[r]!, b, shape)));
    expect([error(0), error(1)]).toEqual([0, 1]);
  });

  it('rejects options it cannot be built with, naming the problem', () => {
    const shape = { m: 4, n: 16, k: 16 };
    expect(() => a2aGemm.build(options(2, shape, { splits: [[4, 0]] }))).toThrow(/a2a-gemm: splits must be a 2x2 matrix of non-negative integers/);
    expect(() => a2aGemm.build(options(2, shape, { splits: [[4, 0], [-1, 5]] }))).toThrow(UsageError);
    expect(() => a2aGemm.build(options(2, shape, { splits: [[4, 0], [1, 2]] }))).toThrow(
      new UsageError('a2a-gemm: rank 1 routes 3 tokens, not M = 4; each row of splits must sum to M'),
    );
    expect(() => a2aGemm.build(options(2, { m: 4, n: -1, k: 16 }))).toThrow('a2a-gemm: N must be a positive integer, got -1');
    expect(() => a2aGemm.build(options(2, shape, { block: { m: 8, n: 16, k: 16 } }))).toThrow(/block 8x16x16/);
    expect(() => a2aGemm.build(options(2.5, shape))).toThrow(UsageError);
    expect(() => a2aGemm.checkedRegion(options(2, shape), 'T', 0)).toThrow(new UsageError('a2a-gemm: T is not an output; the output is Y'));
    expect(() => a2aGemm.checkedRegion(options(2, shape), 'Y', -1)).toThrow(UsageError);
    expect(() => a2aGemm.reference(options(2, shape), { T: [], W: [] })).toThrow(UsageError);
  });
});

describe('both registered', () => {
  it('under their names, with shapes and ranks that run in seconds by default', () => {
    expect(getWorkload('gemv-ar')).toBe(gemvAr);
    expect(getWorkload('a2a-gemm')).toBe(a2aGemm);
    expect(gemvAr.defaults).toEqual({ m: 16, n: 256, k: 1024 });
    expect(gemvAr.description).toMatch(/M batch rows, N outputs, K hidden/);
    for (const w of [gemvAr, a2aGemm]) expect(() => w.build(options(w.defaultRanks, w.defaults))).not.toThrow();
  });
});

describe('on the software adapter, exact against the reference', () => {
  let handles: DeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
  });
  afterAll(() => handles?.forEach((h) => h.close()));

  // A busy 2-core machine can take tens of seconds to compile a new shader on its first dispatch.
  const slow = { timeoutMs: 240_000, timedRuns: 1 } as const;
  const base = { dtype: 'f32', seed: 5, order: 'chunk-arrival' } as const;
  const cases = [
    { workload: 'gemv-ar', ranks: 3, shape: { m: 3, n: 48, k: 40 } },
    { workload: 'a2a-gemm', ranks: 3, shape: { m: 40, n: 32, k: 32 } },
  ] as const;

  it.each(cases)('$workload on one device: auto, gpu-signal and peer-copy', async (c) => {
    for (const backend of ['auto', 'gpu-signal', 'peer-copy'] as const) {
      const report = await runWorkload({ ...base, ...c, ...slow, backend, handles: handles.slice(0, 1) });
      expect(report.maxAbsError, backend).toBe(0);
      expect(report.verified).toBe(true);
      expect(report.backend).toBe(backend === 'auto' ? 'gpu-signal' : backend);
    }
  }, 900_000);

  it.each(cases)('$workload on two devices: peer-copy between them, gpu-signal within', async (c) => {
    for (const ranks of [2, 4]) {
      const report = await runWorkload({ ...base, ...c, ...slow, ranks, backend: 'auto', handles, codegen: { spinLimit: 1 << 16 } });
      expect(report.maxAbsError, `${ranks} ranks`).toBe(0);
      expect(report.devices).toBe(2);
      expect(report.backend).toBe(ranks === 2 ? 'peer-copy' : 'gpu-signal+peer-copy');
    }
  }, 900_000);

  it.each(cases)('$workload: the three bench variants, each verified', async (c) => {
    const r = await benchWorkload({ ...base, ...c, timeoutMs: slow.timeoutMs, handles: handles.slice(0, 1), runs: 1, warmup: 0 });
    for (const v of BENCH_VARIANTS) expect(r.variants[v].verified, v).toBe(true);
    expect(r.variants.fused.backend).toBe('gpu-signal');
    expect(r.variants.sequential.phases[0]).toBeGreaterThan(1);
  }, 900_000);
});
