import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceHandle } from '@syncopate/runtime';
import { ChunkTimeoutError, openDevice, runWorkload } from '../src/tools/run.js';
import type { RunOptions } from '../src/tools/run-report.js';

// One device for the whole file: opening one per test costs more than the small runs themselves.
let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

const base = { dtype: 'f32', backend: 'auto', seed: 7, order: 'chunk-arrival' } as const;

describe('fused kernels on the software adapter, against the CPU reference', () => {
  const cases: RunOptions[] = [];
  for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
    for (const ranks of [1, 2, 3, 4]) cases.push({ ...base, workload, ranks, shape: { m: 64, n: 64, k: 32 } });
    // 16-wide tiles: one element per thread along N.
    cases.push({ ...base, workload, ranks: 2, shape: { m: 32, n: 16, k: 16 } });
    // Not multiples of the tile: edge tiles are masked, shards uneven.
    cases.push({ ...base, workload, ranks: 3, shape: { m: 100, n: 72, k: 40 } });
    for (const order of ['row-major', 'grouped'] as const) cases.push({ ...base, workload, ranks: 2, order, shape: { m: 96, n: 64, k: 32 } });
    cases.push({ ...base, workload, ranks: 4, chunksPerRank: 2, shape: { m: 128, n: 64, k: 32 } });
  }
  // One-shot reductions: the adds into each shard merge into one pass (gpu-signal chunk-table.ts); a
  // dropped partial is off by a whole product.
  cases.push({ ...base, workload: 'gemm-rs', ranks: 3, reduction: 'one-shot', shape: { m: 100, n: 72, k: 40 } });
  cases.push({ ...base, workload: 'gemm-rs', ranks: 4, reduction: 'one-shot', chunksPerRank: 2, shape: { m: 128, n: 64, k: 32 } });
  cases.push({ ...base, workload: 'gemv-ar', ranks: 3, reduction: 'one-shot', shape: { m: 4, n: 96, k: 64 } });
  // Six ranks: parts of 16x16 = 256 elements end inside the first of four lanes a round. Ten: a merged
  // add reads its nine members in two rounds of up to eight (emit-signal.ts), the second partial.
  cases.push({ ...base, workload: 'gemm-rs', ranks: 6, reduction: 'one-shot', shape: { m: 96, n: 48, k: 48 } });
  cases.push({ ...base, workload: 'gemm-rs', ranks: 10, reduction: 'one-shot', shape: { m: 160, n: 32, k: 16 } });
  // gemm-rs reduces one-shot by default on one device: the ring, named.
  cases.push({ ...base, workload: 'gemm-rs', ranks: 4, reduction: 'ring', shape: { m: 64, n: 64, k: 32 } });
  cases.push({ ...base, workload: 'gemm-rs', ranks: 3, reduction: 'ring', shape: { m: 100, n: 72, k: 40 } });
  // gemv-ar's all-reduce as a ring (its default is one-shot): the all-gather forwards what it wrote, in row parts.
  cases.push({ ...base, workload: 'gemv-ar', ranks: 3, reduction: 'ring', shape: { m: 4, n: 96, k: 64 } });

  it.each(cases)('$workload ranks=$ranks $shape.m x $shape.n x $shape.k order=$order chunks=$chunksPerRank reduction=$reduction', async (o) => {
    // With an empty shader cache lavapipe compiles a kernel at its first dispatch, 20-40 s on a busy
    // 2-core machine: the GPU wait is bounded at 100 s, not the default 30.
    const report = await runWorkload({ ...o, device, timeoutMs: 100_000 });
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
    expect(report.fusedMs).toBeGreaterThan(0);
  }, 120_000);
});

describe('the f32 GEMM default tile on GPU-scale outputs (simtGemmBlock; ag-gemm, gemm-rs, a2a-gemm)', () => {
  // 128x128x8 where C is at least 1024 x 512: whole tiles, then edges in M, N and K (1100 = 8·128 + 76,
  // 520 = 4·128 + 8) with uneven shards.
  const cases: RunOptions[] = [];
  for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
    cases.push({ ...base, workload, ranks: 2, shape: { m: 1024, n: 512, k: 32 } });
    cases.push({ ...base, workload, ranks: 3, shape: { m: 1100, n: 520, k: 24 } });
  }
  // Parts of one 128x128 tile are whole rounds of the moves (8 elements x 256 invocations), which then
  // test no lane for a part's end: the copies and adds above, and here merged adds of three members.
  cases.push({ ...base, workload: 'gemm-rs', ranks: 4, reduction: 'one-shot', shape: { m: 1024, n: 512, k: 32 } });
  // a2a-gemm's experts: 1024 tokens a rank routed unevenly, so each expert's block is padded to whole 128-row tiles.
  cases.push({ ...base, workload: 'a2a-gemm', ranks: 2, shape: { m: 1024, n: 512, k: 16 } });
  it.each(cases)('$workload ranks=$ranks $shape.m x $shape.n x $shape.k runs 128x128x8, exact', async (o) => {
    // Lavapipe takes up to about 25 s over the 4-rank one-shot kernel on a busy 2-core machine.
    const report = await runWorkload({ ...o, device, timeoutMs: 100_000 });
    expect(report.block).toEqual({ m: 128, n: 128, k: 8 });
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
  }, 120_000);
});

describe('chunks moved in many parts', () => {
  // 64-element parts: shards of 16 to 40 rows move as many row slices, which tiles straddle.
  const cases: RunOptions[] = [];
  for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
    cases.push({ ...base, workload, ranks: 3, shape: { m: 100, n: 24, k: 40 } });
    cases.push({ ...base, workload, ranks: 4, chunksPerRank: 2, shape: { m: 128, n: 32, k: 32 } });
  }
  it.each(cases)('$workload ranks=$ranks $shape.m x $shape.n x $shape.k chunks=$chunksPerRank', async (o) => {
    const report = await runWorkload({ ...o, device, codegen: { partElements: 64 } });
    expect(report.maxAbsError).toBe(0);
  }, 120_000);
});

describe('without Dawn bounds checks', () => {
  it('opens its own device with disable_robustness, stays exact on edge tiles and says so in the report', async () => {
    const checked = await runWorkload({ ...base, workload: 'gemm-rs', ranks: 3, shape: { m: 100, n: 72, k: 40 }, device });
    expect(checked.robustness).toBe(true);
    const report = await runWorkload({ ...base, workload: 'gemm-rs', ranks: 3, shape: { m: 100, n: 72, k: 40 }, robustness: false });
    expect(report.robustness).toBe(false);
    expect(report.maxAbsError).toBe(0);
  }, 120_000);
});

describe('faults', () => {
  it('a chunk that is never published ends in a typed timeout naming it and the rank, not a hang', async () => {
    const run = runWorkload({
      ...base,
      workload: 'ag-gemm',
      ranks: 2,
      shape: { m: 64, n: 32, k: 32 },
      device,
      codegen: { spinLimit: 1 << 16, unpublished: ['c0'] },
    });
    await expect(run).rejects.toThrow(ChunkTimeoutError);
    await expect(run).rejects.toThrow(/rank 1 timed out waiting for chunk %c0/);
  }, 120_000);
});
