// Embedding lookup + All-to-All (DLRM): the gather op on the software adapter, the workload's
// reference, its plan as the analyses see it, and the workload run fused, on one and two devices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModule, mul, scheduleTable, sharded, type Module } from '@syncopate/ir';
import { alignChunks, chunksProducedBy, chunksWaitedBy, oneShotAllGather } from '@syncopate/passes';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { BENCH_VARIANTS, benchWorkload } from '../src/tools/bench.js';
import { compileOrThrow } from '../src/api/compile.js';
import { CompileError } from '../src/api/compile-error.js';
import { lowerToWgsl, runFused, runWorkload } from '../src/tools/run.js';
import { embedA2a, gatherRow, getWorkload, UsageError, type WorkloadOptions } from '../src/workloads/index.js';
import { type RunOptions } from '../src/tools/run-report.js';

// Two devices from the software adapter for the whole file; most tests use the first.
let handles: DeviceHandle[];
beforeAll(async () => {
  handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
});
afterAll(() => handles?.forEach((h) => h.close()));

const options = (ranks: number, shape: WorkloadOptions['shape'], extra: Partial<WorkloadOptions> = {}): WorkloadOptions => ({ ranks, shape, dtype: 'f32', ...extra });

/** One rank: G = gather(E, I[:, 0]) over a [rows, cols] table, `bm` x `bn` tiles. */
function gatherKernel(rows: number, cols: number, batch: number, bm: number, bn: number): Module {
  return buildModule('gather', { ranks: 1 }, (mb) => {
    const E = mb.tensor('E', [rows, cols], 'f32');
    const I = mb.tensor('I', [batch, 1], 'f32');
    const G = mb.tensor('G', [batch, cols], 'f32');
    mb.kernel('gather', [Math.ceil(batch / bm), Math.ceil(cols / bn)], (kb) => {
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const idx = kb.load(I, [mul(pm, bm), 0], [bm, 1], 'idx');
      kb.store(G, [mul(pm, bm), mul(pn, bn)], kb.gather(E, idx, mul(pn, bn), bn, 'rows'));
    });
  });
}

describe('gather on the software adapter', () => {
  it('reads the indexed rows, clamps out-of-range indices, masks columns past the edge', async () => {
    const rows = 13;
    const cols = 40; // not a multiple of the 16-wide tiles: the last column tile is masked
    const indices = [0, 12, 5, -1, 13, 1e9, -1e9, 3.7, 7, 2, 11, 4, 0.2, 9, 6, 8, 12.99, 1, 10, NaN, 3];
    const batch = indices.length; // not a multiple of the 8-row tiles either
    const E = Float32Array.from({ length: rows * cols }, (_, i) => (i % 97) - 48);
    const I = Float32Array.from(indices);
    const fused = lowerToWgsl(compileOrThrow(gatherKernel(rows, cols, batch, 8, 16), { ranks: 1, chunks: [] }));
    const { tensors } = await runFused(handles[0]!, fused, { E: [E], I: [I], G: [new Float32Array(batch * cols)] }, ['G']);
    const G = tensors.G![0]!;
    const expected = new Float32Array(batch * cols);
    indices.forEach((x, b) => expected.set(E.subarray(gatherRow(x, rows) * cols, (gatherRow(x, rows) + 1) * cols), b * cols));
    // WGSL lets an adapter assume there are no NaNs: a NaN index reads row 0 or, at worst, zeros.
    const nan = indices.findIndex(Number.isNaN);
    const nanRow = Array.from(G.subarray(nan * cols, (nan + 1) * cols));
    expect([Array.from(E.subarray(0, cols)), Array<number>(cols).fill(0)]).toContainEqual(nanRow);
    G.fill(0, nan * cols, (nan + 1) * cols);
    expected.fill(0, nan * cols, (nan + 1) * cols);
    expect(Array.from(G)).toEqual(Array.from(expected));
    // The clamps, spelled out: -1 and -1e9 read row 0, 13 and 1e9 the last row, 3.7 row 3.
    expect([-1, 13, 1e9, -1e9, 3.7, 12.99].map((x) => gatherRow(x, rows))).toEqual([0, 12, 12, 0, 3, 12]);
    expect(gatherRow(NaN, rows)).toBe(0);
  });

  it('refuses a rank-1 index tile, which the WGSL layout cannot hold in registers', () => {
    const kernel = buildModule('gather1d', { ranks: 1 }, (mb) => {
      const E = mb.tensor('E', [8, 16], 'f32');
      const G = mb.tensor('G', [4, 16], 'f32');
      mb.kernel('k', [1], (kb) => {
        const idx = kb.constant(2, [4], 'f32', 'idx');
        kb.store(G, [0, 0], kb.gather(E, idx, 0, 16, 'rows'));
      });
    });
    expect(() => lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }))).toThrow(CompileError);
    expect(() => lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }))).toThrow(/gather's index as a \[BM, 1\] tile; %idx is \[4\]/);
  });
});

describe('gather in the analyses: it reads every row of its columns', () => {
  /** Two ranks; E [8, 32] sharded on rows and gathered 16 columns at a time. */
  const kernel = buildModule('gather_sharded', { ranks: 2 }, (mb) => {
    const E = mb.tensor('E', [8, 32], 'f32', sharded(0));
    const I = mb.tensor('I', [4, 1], 'f32');
    const G = mb.tensor('G', [4, 32], 'f32');
    mb.kernel('k', [1, 2], (kb) => {
      const pn = kb.programId(1, 'pn');
      const idx = kb.load(I, [0, 0], [4, 1], 'idx');
      kb.store(G, [0, mul(pn, 16)], kb.gather(E, idx, mul(pn, 16), 16, 'rows'));
    });
  });

  it('waits for every chunk landing in its columns, whatever rows it lands in', () => {
    const plan = oneShotAllGather({ ranks: 2, tensor: { name: 'E', shape: [8, 32] }, axis: 0, chunksPerRank: 2 });
    const module = compileOrThrow(kernel, plan).module;
    const uses = alignChunks(module).waits;
    expect(uses.every((u) => u.site.op.op === 'gather')).toBe(true);
    for (const rank of [0, 1]) {
      for (const tile of [[0, 0], [0, 1]]) {
        expect(chunksWaitedBy(module, rank, tile).map((c) => c.src)).toEqual([1 - rank, 1 - rank]);
      }
    }
  });

  it('waits only for chunks that meet the cache lines of its columns', () => {
    // Column halves of 128 bytes, each a cache line of its own: the tile of columns 0..32 needs only
    // the left halves. (Halves of the 32-column E above share their rows' lines: a tile waits for both,
    // passes' cache-lines.ts.)
    const wide = buildModule('gather_wide', { ranks: 2 }, (mb) => {
      const E = mb.tensor('E', [8, 64], 'f32', sharded(0));
      const I = mb.tensor('I', [4, 1], 'f32');
      const G = mb.tensor('G', [4, 64], 'f32');
      mb.kernel('k', [1, 2], (kb) => {
        const pn = kb.programId(1, 'pn');
        const idx = kb.load(I, [0, 0], [4, 1], 'idx');
        kb.store(G, [0, mul(pn, 32)], kb.gather(E, idx, mul(pn, 32), 32, 'rows'));
      });
    });
    const chunks = [0, 1].flatMap((src) => [0, 32].map((c) => ({ tensor: 'E', region: { lo: [src * 4, c], hi: [src * 4 + 4, c + 32] }, src, dst: 1 - src, step: 0 })));
    const module = compileOrThrow(wide, { ranks: 2, chunks }).module;
    expect(chunksWaitedBy(module, 1, [0, 0]).map((c) => c.region.lo)).toEqual([[0, 0]]);
    expect(chunksWaitedBy(module, 1, [0, 1]).map((c) => c.region.lo)).toEqual([[0, 32]]);
    const narrow = [0, 1].flatMap((src) => [0, 16].map((c) => ({ tensor: 'E', region: { lo: [src * 4, c], hi: [src * 4 + 4, c + 16] }, src, dst: 1 - src, step: 0 })));
    expect(chunksWaitedBy(compileOrThrow(kernel, { ranks: 2, chunks: narrow }).module, 1, [0, 0]).map((c) => c.region.lo)).toEqual([[0, 0], [0, 16]]);
  });

  it('is reported, as a gather, when some row of its columns never arrives', () => {
    // Rank 0's rows 0..2 only: rows 2..4 never reach rank 1, though no index may name them.
    const plan = { ranks: 2, chunks: [{ tensor: 'E', region: { lo: [0, 0], hi: [2, 32] }, src: 0, dst: 1, step: 0 }, { tensor: 'E', region: { lo: [4, 0], hi: [8, 32] }, src: 1, dst: 0, step: 0 }] };
    let thrown: unknown;
    try {
      compileOrThrow(kernel, plan);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CompileError);
    const uncovered = (thrown as CompileError).diagnostics.find((d) => d.code === 'align/uncovered');
    expect(uncovered).toMatchObject({ op: 'gather', value: 'rows' });
    expect(uncovered!.message).toMatch(/of rank 1 reads @E\[2:4, 0:16\]/);
  });
});

describe('embed-a2a: plan and reference', () => {
  it('pools a hand-checked case: 2 ranks, B = 2, D = 2, 3 rows, L = 2', () => {
    const o = options(2, { m: 2, n: 2, k: 3 }, { pooling: 2, block: { m: 1, n: 16, k: 1 } });
    // Table r: row i is [10r + i, -(10r + i)]; rank 0 looks up rows (0, 1) for sample 0 and (2, 2)
    // for sample 1; rank 1 (1, 1) and (0, 2).
    const E = [0, 1].map((r) => Float32Array.from([0, 1, 2].flatMap((i) => [10 * r + i, -(10 * r + i)])));
    const I = [Float32Array.from([0, 1, 2, 2]), Float32Array.from([1, 1, 0, 2])];
    const { P } = embedA2a.reference(o, { E, I, P: [new Float32Array(8), new Float32Array(8)] });
    // Rank 0 owns sample 0: from table 0 rows 0 + 1 = 1, from table 1 rows 11 + 11 = 22.
    expect(Array.from(P![0]!)).toEqual([1, -1, 22, -22, 0, 0, 0, 0]);
    // Rank 1 owns sample 1: from table 0 rows 2 + 2 = 4, from table 1 rows 10 + 12 = 22.
    expect(Array.from(P![1]!)).toEqual([0, 0, 0, 0, 4, -4, 22, -22]);
    expect(embedA2a.checkedRegion(o, 'P', 1)).toEqual({ lo: [2, 0], hi: [4, 2] });
  });

  it('builds a 3-D grid whose tiles of one batch shard complete the chunk to its owner', () => {
    const o = options(4, { m: 64, n: 32, k: 50 }, { pooling: 3, chunksPerRank: 2 });
    const { kernel, plan } = embedA2a.build(o);
    expect(kernel.kernel.grid).toEqual([4, 1, 1]); // 16 samples a shard: one 16-row tile
    expect(plan.chunks).toHaveLength(4 * 3 * 2);
    const module = compileOrThrow(kernel, plan).module;
    for (let r = 0; r < 4; r++) {
      for (let d = 0; d < 4; d++) {
        const sent = chunksProducedBy(module, r, [d, 0, 0]);
        expect(sent.every((c) => c.src === r && c.dst === d)).toBe(true);
        expect(sent).toHaveLength(d === r ? 0 : 2);
        // Each lands in slot (d, r): rows d·B + r·B/R onwards.
        for (const c of sent) expect(c.region.lo[0]).toBeGreaterThanOrEqual(d * 64 + r * 16);
      }
    }
    expect(alignChunks(module).waits).toEqual([]);
  });

  it('in chunk-arrival order, rank r computes the shard sent at step 0 first and its own last', () => {
    const R = 4;
    const { kernel, plan } = embedA2a.build(options(R, { m: 128, n: 32, k: 50 }, { block: { m: 8, n: 16, k: 1 } }));
    const module = compileOrThrow(kernel, plan, { passOptions: { 'reorder-tiles': { order: 'chunk-arrival' } } }).module;
    const tilesPerShard = 4 * 2; // 32 samples in 8-row tiles, 32 columns in 16-wide tiles
    for (let r = 0; r < R; r++) {
      // The shards' destinations in visiting order: step s sends to r + s + 1, so r + 1, r + 2, ..., then r.
      const dsts = scheduleTable(module.kernel.scheduler, module.kernel.grid, r).map((tile) => tile[0]!);
      const runs = Array.from({ length: R }, (_, i) => dsts.slice(i * tilesPerShard, (i + 1) * tilesPerShard));
      expect(runs.map((run) => new Set(run).size)).toEqual([1, 1, 1, 1]);
      expect(runs.map((run) => run[0])).toEqual([1, 2, 3, 0].map((s) => (r + s) % R));
    }
  });

  it('rejects bad options with a UsageError that says what is wrong', () => {
    const bad: [Partial<WorkloadOptions> & { shape?: WorkloadOptions['shape'] }, RegExp][] = [
      [{ shape: { m: 30, n: 32, k: 16 } }, /B = 30 is not a multiple of the 4 ranks/],
      [{ pooling: 0 }, /pooling must be a positive integer, got 0/],
      [{ pooling: 2.5 }, /pooling must be a positive integer, got 2.5/],
      [{ ranks: 0 }, /ranks must be a positive integer, got 0/],
      [{ shape: { m: 32, n: 0, k: 16 } }, /D \(shape n\) must be a positive integer/],
      [{ block: { m: 16, n: 32, k: 1 }, shape: { m: 32, n: 32, k: 16 } }, /block m = 16 must be one of .* and divide the 8 samples/],
      [{ block: { m: 3, n: 32, k: 1 } }, /block m = 3 must be one of 1, 2, 4/],
      [{ block: { m: 8, n: 24, k: 1 } }, /block n = 24 must be one of 16, 32, 64, 128/],
      [{ chunksPerRank: 9, shape: { m: 32, n: 32, k: 16 } }, /chunksPerRank 9 is more than the 8 samples/],
      [{ shape: { m: 32, n: 32, k: 2 ** 24 + 1 } }, /more than the 2\^24/],
      [{ dtype: 'f16', pooling: 1025 }, /pooling 1025 is too large for exact f16 sums/],
      [{ dtype: 'f64' as 'f32' }, /dtype must be f32 or f16, got f64/],
    ];
    for (const [patch, message] of bad) {
      const o = { ...options(4, { m: 64, n: 32, k: 16 }), ...patch };
      expect(() => embedA2a.build(o), message.source).toThrow(UsageError);
      expect(() => embedA2a.build(o)).toThrow(message);
      expect(() => embedA2a.inputs(o, 1)).toThrow(UsageError);
    }
    const o = options(2, { m: 32, n: 32, k: 16 });
    expect(() => embedA2a.checkedRegion(o, 'E', 0)).toThrow(/E is not an output; the output is P/);
    expect(() => embedA2a.checkedRegion(o, 'P', 2)).toThrow(/rank 2 is out of range for 2 ranks/);
    expect(() => embedA2a.reference(o, { E: [], I: [], P: [] })).toThrow(/tensor E needs 2 arrays/);
    expect(getWorkload('embed-a2a')).toBe(embedA2a);
  });
});

describe('embed-a2a fused on the software adapter, against the CPU reference', () => {
  const base = { workload: 'embed-a2a', dtype: 'f32', seed: 5, order: 'chunk-arrival', backend: 'auto' } as const;
  const shape = { m: 64, n: 32, k: 96 };
  const cases: RunOptions[] = [];
  for (const backend of ['auto', 'gpu-signal', 'peer-copy'] as const) {
    for (const ranks of [2, 4]) cases.push({ ...base, backend, ranks, shape });
  }
  // Chunks cut in two, several tiles per shard and per row (D = 40: a masked edge), f16, L = 3.
  cases.push({ ...base, ranks: 4, chunksPerRank: 2, shape: { m: 128, n: 40, k: 64 }, block: { m: 8, n: 16, k: 1 }, pooling: 3 });
  cases.push({ ...base, ranks: 2, dtype: 'f16', shape });
  cases.push({ ...base, ranks: 2, order: 'row-major', shape });

  it.each(cases)('ranks=$ranks backend=$backend chunks=$chunksPerRank dtype=$dtype pooling=$pooling order=$order', async (o) => {
    const report = await runWorkload({ ...o, device: handles[0]!, timeoutMs: 120_000, codegen: { spinLimit: 1 << 16 } });
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
    expect(report.backend).toBe(o.backend === 'auto' ? 'gpu-signal' : o.backend);
  }, 300_000);

  // A cold shader cache on a busy 2-core CPU: the first phase's pipelines can take most of 30 s.
  it.each([2, 4])('%i ranks on two devices: peer-copy between them', async (ranks) => {
    const report = await runWorkload({ ...base, ranks, shape, devices: 2, handles, timeoutMs: 120_000, codegen: { spinLimit: 1 << 16 } });
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
    expect(report.devices).toBe(2);
    expect(report.backend).toBe(ranks === 2 ? 'peer-copy' : 'gpu-signal+peer-copy');
  }, 300_000);

  it('sequential, decomposed and fused all verified, and the compute alone timed', async () => {
    const r = await benchWorkload({ ...base, ranks: 2, shape, device: handles[0]!, runs: 2, warmup: 0, timeoutMs: 120_000 });
    for (const v of BENCH_VARIANTS) {
      expect(r.variants[v].verified, v).toBe(true);
      expect(r.variants[v].maxAbsError, v).toBe(0);
    }
    expect(r.variants.fused.backend).toBe('gpu-signal');
    expect(r.variants.fused.phases).toEqual([1]);
    expect(r.variants.decomposed.backend).toBe('peer-copy');
    expect(r.variants.sequential.phases[0]).toBeGreaterThan(1);
    // The kernel alone (no chunk moves), for the overlap figures.
    expect(r.overlap!.computeOnlyMs.runs).toBe(2);
  }, 300_000);

  it('runs its defaults, verified', async () => {
    const report = await runWorkload({ ...base, ranks: embedA2a.defaultRanks, shape: embedA2a.defaults, device: handles[0]!, timedRuns: 1, timeoutMs: 120_000 });
    expect(report.verified).toBe(true);
  }, 300_000);
});
