import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic, shardRange, SyncopateError, type Box } from '@syncopate/ir';
import { compile } from '../src/api/compile.js';
import {
  defaultBlock,
  simtGemmBlock,
  tensorCoreBlock,
  validateGemmOptions,
  wideTensorCoreBlock,
  forEachRun,
  getWorkload,
  maxAbsError,
  mulberry32,
  UsageError,
  WORKLOAD_NAMES,
  workloads,
  type TensorData,
  type WorkloadName,
  type WorkloadOptions,
} from '../src/workloads/index.js';

/** The two GEMM workloads, which the tests below check against a naive GEMM. */
const GEMM_WORKLOADS: WorkloadName[] = ['ag-gemm', 'gemm-rs'];

const SHAPES = [
  { m: 100, n: 72, k: 40 },
  { m: 64, n: 64, k: 32 },
];

function options(ranks: number, shape = SHAPES[0]!, extra: Partial<WorkloadOptions> = {}): WorkloadOptions {
  return { ranks, shape, dtype: 'f32', ...extra };
}

/** C = A·B by the textbook triple loop, in doubles; independent of the workloads' own GEMM. */
function naiveGemm(a: Float32Array, b: Float32Array, m: number, n: number, k: number): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum += a[i * k + p]! * b[p * n + j]!;
      c[i * n + j] = sum;
    }
  }
  return c;
}

/** Calls `visit(i, j)` for each element of a 2-D box. */
function eachElement(region: Box, visit: (i: number, j: number) => void): void {
  for (let i = region.lo[0]!; i < region.hi[0]!; i++) for (let j = region.lo[1]!; j < region.hi[1]!; j++) visit(i, j);
}

function rows(data: Float32Array, cols: number, lo: number, hi: number): number[] {
  return [...data.subarray(lo * cols, hi * cols)];
}

/** What the reference must be on rank r, computed here from the inputs alone. */
function expected(name: WorkloadName, o: WorkloadOptions, inputs: TensorData, rank: number): Float64Array {
  const { m, n, k } = o.shape;
  if (name === 'ag-gemm') {
    const gathered = new Float32Array(m * k);
    for (let i = 0; i < m; i++) {
      const owner = inputs.A!.findIndex((_, r) => {
        const [lo, hi] = shardRange(m, o.ranks, r);
        return lo <= i && i < hi;
      });
      for (let p = 0; p < k; p++) gathered[i * k + p] = inputs.A![owner]![i * k + p]!;
    }
    return naiveGemm(gathered, inputs.B![rank]!, m, n, k);
  }
  const sum = new Float64Array(m * n);
  for (let r = 0; r < o.ranks; r++) naiveGemm(inputs.A![r]!, inputs.B![r]!, m, n, k).forEach((v, i) => (sum[i]! += v));
  return sum;
}

describe('the workload registry', () => {
  it('holds every workload under its name, the GEMM ones first', () => {
    expect(WORKLOAD_NAMES.slice(0, 2)).toEqual(GEMM_WORKLOADS);
    for (const name of WORKLOAD_NAMES) {
      expect(getWorkload(name)).toBe(workloads[name]);
      expect(workloads[name].name).toBe(name);
    }
    for (const name of GEMM_WORKLOADS) expect(workloads[name].outputs).toEqual(['C']);
  });

  it('rejects an unknown name with a UsageError that lists the known ones', () => {
    expect(() => getWorkload('gemm-ag')).toThrow(UsageError);
    expect(() => getWorkload('gemm-ag')).toThrow(`unknown workload 'gemm-ag'; known workloads: ${WORKLOAD_NAMES.join(', ')}`);
    expect(() => getWorkload('toString')).toThrow(UsageError);
    expect(new UsageError('x')).toBeInstanceOf(SyncopateError);
    expect(new UsageError('x').name).toBe('UsageError');
  });
});

describe.each(GEMM_WORKLOADS)('%s', (name) => {
  const workload = workloads[name];

  describe.each(SHAPES)('$m x $n x $k', (shape) => {
    it.each([1, 2, 3, 4])('builds a verified kernel that compiles on %i ranks', (ranks) => {
      for (const chunksPerRank of [1, 2]) {
        const { kernel, plan } = workload.build(options(ranks, shape, { chunksPerRank }));
        expect(kernel.ranks).toBe(ranks);
        expect(plan.ranks).toBe(ranks);
        expect(plan.chunks).toHaveLength(ranks === 1 ? 0 : ranks * (ranks - 1) * Math.min(chunksPerRank, Math.floor(shape.m / ranks)));
        for (const order of ['row-major', 'grouped', 'chunk-arrival'] as const) {
          const result = compile(kernel, plan, { passOptions: { 'reorder-tiles': { order } } });
          if (E.isLeft(result)) expect.fail(result.left.map(formatDiagnostic).join('\n'));
        }
      }
    });

    it.each([1, 2, 3, 4])('has a reference equal to a naive GEMM on the checked region, %i ranks', (ranks) => {
      const o = options(ranks, shape);
      const inputs = workload.inputs(o, 7);
      const reference = workload.reference(o, inputs);
      expect(Object.keys(reference)).toEqual(['C']);
      for (let r = 0; r < ranks; r++) {
        const want = expected(name, o, inputs, r);
        const region = workload.checkedRegion(o, 'C', r) as Box;
        let checked = 0;
        eachElement(region, (i, j) => {
          checked++;
          if (reference.C![r]![i * shape.n + j] !== want[i * shape.n + j]) expect.fail(`rank ${r} C[${i},${j}]`);
        });
        expect(checked).toBeGreaterThan(0);
        expect(maxAbsError(reference.C![r]!, Float32Array.from(want), region, [shape.m, shape.n])).toBe(0);
      }
    });
  });

  it('checks all of C (ag-gemm) or the rank\'s own row shard of C (gemm-rs)', () => {
    const o = options(3);
    for (let r = 0; r < 3; r++) {
      const [lo, hi] = shardRange(100, 3, r);
      expect(workload.checkedRegion(o, 'C', r)).toEqual(name === 'ag-gemm' ? { lo: [0, 0], hi: [100, 72] } : { lo: [lo, 0], hi: [hi, 72] });
    }
    expect(() => workload.checkedRegion(o, 'A', 0)).toThrow(UsageError);
    expect(() => workload.checkedRegion(o, 'C', 3)).toThrow(UsageError);
  });

  it('makes the same inputs for the same seed, and different ones across seeds and ranks', () => {
    const o = options(3);
    const a = workload.inputs(o, 1);
    expect(workload.inputs(o, 1)).toEqual(a);
    const b = workload.inputs(o, 2);
    expect(Object.keys(a).sort()).toEqual(['A', 'B', 'C']);
    for (const t of ['A', 'B']) {
      expect(a[t]).toHaveLength(3);
      expect(a[t]![0]).not.toEqual(b[t]![0]);
      expect(a[t]![0]).not.toEqual(a[t]![1]);
    }
    // B is each rank's own random matrix
    expect(a.B![1]).not.toEqual(a.B![2]);
  });

  it('fills inputs with small integers in [-2, 2] of the full logical shape, and outputs with zeros', () => {
    const o = options(2);
    const inputs = workload.inputs(o, 3);
    const sizes = { A: 100 * 40, B: 40 * 72, C: 100 * 72 };
    for (const [t, size] of Object.entries(sizes)) {
      for (const data of inputs[t]!) {
        expect(data).toBeInstanceOf(Float32Array);
        expect(data).toHaveLength(size);
        expect(data.every((v) => Number.isInteger(v) && v >= -2 && v <= 2)).toBe(true);
      }
    }
    for (const data of inputs.C!) expect(data.every((v) => v === 0)).toBe(true);
    const values = new Set(inputs.B![0]);
    expect([...values].sort((x, y) => x - y)).toEqual([-2, -1, 0, 1, 2]);
  });

  it('shrinks blocks for small shapes and rejects blocks codegen cannot use', () => {
    const tiny = options(2, { m: 8, n: 20, k: 5 });
    const { kernel } = workload.build(tiny);
    expect(kernel.kernel.grid).toEqual([1, 1]);
    expect(JSON.stringify(kernel)).toContain('"shape":[16,32]');
    expect(() => workload.build(options(2, SHAPES[0], { block: { m: 48, n: 64, k: 32 } }))).toThrow(UsageError);
    expect(() => workload.build(options(2, SHAPES[0], { block: { m: 64, n: 64, k: 64 } }))).toThrow(UsageError);
    const custom = workload.build(options(2, SHAPES[0], { block: { m: 32, n: 16, k: 8 } }));
    expect(custom.kernel.kernel.grid).toEqual([4, 5]);
  });

  it('rejects options it cannot be built with', () => {
    expect(() => workload.build(options(0))).toThrow('ranks must be a positive integer, got 0');
    expect(() => workload.build(options(2, { m: 10, n: 0, k: 4 }))).toThrow(UsageError);
    expect(() => workload.build(options(2, { m: 10, n: 1.5, k: 4 }))).toThrow(UsageError);
    expect(() => workload.build(options(8, { m: 4, n: 4, k: 4 }))).toThrow(`${name}: M = 4 is smaller than the 8 ranks`);
    expect(() => workload.build(options(2, SHAPES[0], { chunksPerRank: 0 }))).toThrow(UsageError);
    expect(() => workload.inputs({ ...options(2), dtype: 'f64' as 'f32' }, 1)).toThrow(UsageError);
  });

  it('builds f16 kernels whose inputs are still exact small integers', () => {
    const o = options(2, SHAPES[1], { dtype: 'f16' });
    const { kernel } = workload.build(o);
    expect(kernel.tensors.map((t) => t.dtype)).toEqual(['f16', 'f16', 'f32']);
    const inputs = workload.inputs(o, 5);
    expect(Float32Array.from(inputs.A![0]!, (v) => Math.fround(v))).toEqual(inputs.A![0]);
  });
});

describe('ag-gemm inputs', () => {
  it('hold A only in the rank\'s own row shard', () => {
    const o = options(3);
    const inputs = workloads['ag-gemm'].inputs(o, 11);
    for (let r = 0; r < 3; r++) {
      const [lo, hi] = shardRange(100, 3, r);
      const A = inputs.A![r]!;
      expect(rows(A, 40, 0, lo).every((v) => v === 0)).toBe(true);
      expect(rows(A, 40, hi, 100).every((v) => v === 0)).toBe(true);
      expect(rows(A, 40, lo, hi).some((v) => v !== 0)).toBe(true);
    }
  });
});

describe('gemm-rs reference', () => {
  it('is zero outside the rank\'s shard', () => {
    const o = options(4);
    const w = workloads['gemm-rs'];
    const ref = w.reference(o, w.inputs(o, 2));
    const [lo, hi] = shardRange(100, 4, 1);
    expect(rows(ref.C![1]!, 72, 0, lo).every((v) => v === 0)).toBe(true);
    expect(rows(ref.C![1]!, 72, hi, 100).every((v) => v === 0)).toBe(true);
  });

  it('rejects inputs of the wrong shape', () => {
    const o = options(2);
    const w = workloads['gemm-rs'];
    expect(() => w.reference(o, { A: [new Float32Array(3)], B: [] })).toThrow(UsageError);
  });
});

describe('maxAbsError', () => {
  const shape = [3, 4];
  const expectedData = new Float32Array(12);
  it('measures only the region', () => {
    const actual = new Float32Array(12);
    actual[0] = 5; // [0,0]: outside
    actual[1 * 4 + 2] = -1.5; // [1,2]: inside
    expect(maxAbsError(actual, expectedData, { lo: [1, 1], hi: [3, 4] }, shape)).toBe(1.5);
    expect(maxAbsError(actual, expectedData, { lo: [0, 0], hi: [3, 4] }, shape)).toBe(5);
    expect(maxAbsError(actual, expectedData, { lo: [2, 0], hi: [2, 4] }, shape)).toBe(0);
  });

  it('reports NaN as NaN, and rejects mismatched sizes and regions', () => {
    const actual = new Float32Array(12);
    actual[5] = NaN;
    actual[6] = 3;
    expect(maxAbsError(actual, expectedData, { lo: [0, 0], hi: [3, 4] }, shape)).toBeNaN();
    expect(() => maxAbsError(new Float32Array(11), expectedData, { lo: [0, 0], hi: [3, 4] }, shape)).toThrow(RangeError);
    expect(() => maxAbsError(actual, expectedData, { lo: [0, 0], hi: [4, 4] }, shape)).toThrow(RangeError);
  });

  it('walks a 3-D region run by run in row-major order', () => {
    const runs: [number, number][] = [];
    forEachRun([2, 3, 4], { lo: [0, 1, 1], hi: [2, 3, 3] }, (o, n) => runs.push([o, n]));
    expect(runs).toEqual([[5, 2], [9, 2], [17, 2], [21, 2]]);
  });
});

describe('helpers', () => {
  it('mulberry32 is deterministic and uniform-ish in [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
  });

  it('defaultBlock is 64x64x32, shrunk to the shape rounded up to a power of two', () => {
    expect(defaultBlock({ m: 4096, n: 4096, k: 4096 })).toEqual({ m: 64, n: 64, k: 32 });
    expect(defaultBlock({ m: 100, n: 72, k: 40 })).toEqual({ m: 64, n: 64, k: 32 });
    expect(defaultBlock({ m: 30, n: 1, k: 12 })).toEqual({ m: 32, n: 16, k: 16 });
    expect(defaultBlock({ m: 1, n: 17, k: 1 })).toEqual({ m: 16, n: 32, k: 8 });
  });

  it('simtGemmBlock is 128x128x8 in f32 where the output is at least 1024 x 512, else defaultBlock; the GEMM workloads build with it', () => {
    expect(simtGemmBlock({ m: 4096, n: 512, k: 4096 }, 'f32')).toEqual({ m: 128, n: 128, k: 8 });
    expect(simtGemmBlock({ m: 1024, n: 512, k: 4 }, 'f32')).toEqual({ m: 128, n: 128, k: 8 });
    expect(simtGemmBlock({ m: 1023, n: 4096, k: 4096 }, 'f32')).toEqual(defaultBlock({ m: 1023, n: 4096, k: 4096 }));
    expect(simtGemmBlock({ m: 4096, n: 511, k: 4096 }, 'f32')).toEqual(defaultBlock({ m: 4096, n: 511, k: 4096 }));
    expect(simtGemmBlock({ m: 4096, n: 4096, k: 4096 }, 'f16')).toEqual(defaultBlock({ m: 4096, n: 4096, k: 4096 }));
    const shape = { m: 2048, n: 1024, k: 256 };
    expect(validateGemmOptions('ag-gemm', { ranks: 2, shape, dtype: 'f32' })).toEqual({ m: 128, n: 128, k: 8 });
    // f16 without tensor cores keeps the SIMT default: 128x128x8 was measured in f32 only.
    expect(validateGemmOptions('ag-gemm', { ranks: 2, shape, dtype: 'f16' })).toEqual(defaultBlock(shape));
  });

  it('tensorCoreBlock is 128x128x64 (the GEMM workloads take wideTensorCoreBlock, 128x256x32), shrunk likewise, K at least one 16-deep matrix; the GEMM workloads accept theirs; 256-wide tiles in f16 only', () => {
    expect(tensorCoreBlock({ m: 4096, n: 512, k: 4096 })).toEqual({ m: 128, n: 128, k: 64 });
    expect(tensorCoreBlock({ m: 100, n: 40, k: 8 })).toEqual({ m: 128, n: 64, k: 16 });
    expect(wideTensorCoreBlock({ m: 4096, n: 512, k: 4096 })).toEqual({ m: 128, n: 256, k: 32 });
    expect(wideTensorCoreBlock({ m: 100, n: 40, k: 8 })).toEqual({ m: 128, n: 64, k: 16 });
    expect(() => getWorkload('gemm-rs').build({ ranks: 2, shape: { m: 4096, n: 512, k: 4096 }, dtype: 'f16', block: { m: 128, n: 256, k: 16 } })).not.toThrow();
    expect(() => getWorkload('gemm-rs').build({ ranks: 2, shape: { m: 4096, n: 512, k: 4096 }, dtype: 'f32', block: { m: 128, n: 256, k: 16 } })).toThrow(/m and n must be one of 16, 32, 64, 128,/);
    for (const [w, tile] of [
      [getWorkload('ag-gemm'), { m: 128, n: 256, k: 32 }],
      [getWorkload('gemm-rs'), { m: 128, n: 256, k: 32 }],
    ] as const) {
      const o = { ranks: 2, shape: { m: 4096, n: 512, k: 4096 }, dtype: 'f16' as const };
      expect(w.tensorCoreBlock?.(o)).toEqual(tile);
      expect(() => w.build({ ...o, block: w.tensorCoreBlock!(o) })).not.toThrow();
    }
  });
});
