import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDevices, type DeviceHandle, type PlacedDeviceHandle } from '@syncopate/runtime';
import { tune, tuneBlocks, tuneKey, type TuneProgress, type TuneResult, type TuneTrial } from '../src/tools/autotune.js';
import { defaultTuneCacheFile, TuneCache } from '../src/tools/cli/tune-cache.js';
import { tunedRun } from '../src/tools/cli/tune-command.js';
import { adapterLabel, openDevice } from '../src/tools/run.js';
import { defaultBlock, type BlockShape } from '../src/workloads/index.js';
import { type RunOrder } from '../src/tools/run-report.js';
import { cli } from './cli-harness.js';

const shape = { m: 64, n: 32, k: 32 };
const result = (key: string, order: TuneResult['best']['order'], chunksPerRank: number): TuneResult => ({
  key,
  best: { order, chunksPerRank, ms: 1 },
  trials: [{ order, chunksPerRank, ms: 1, verified: true }],
  adapter: 'a',
  date: '2026-11-23T00:00:00.000Z',
});

afterEach(() => vi.unstubAllEnvs());

describe('the tune cache', () => {
  it('lives where the environment says', () => {
    expect(defaultTuneCacheFile({ SYNCOPATE_CACHE_DIR: '/x' })).toBe('/x/tune.json');
    expect(defaultTuneCacheFile({ XDG_CACHE_HOME: '/y' })).toBe('/y/syncopate/tune.json');
  });

  it('keys on everything that changes the best choice', () => {
    const base = { workload: 'ag-gemm' as const, shape, dtype: 'f32' as const, ranks: 2 };
    const keys = new Set([
      tuneKey('gpu A', base),
      tuneKey('gpu B', base),
      tuneKey('gpu A', { ...base, ranks: 4 }),
      tuneKey('gpu A', { ...base, devices: 2 }),
      tuneKey('gpu A', { ...base, dtype: 'f16' }),
      tuneKey('gpu A', { ...base, shape: { ...shape, k: 64 } }),
      tuneKey('gpu A', { ...base, gather: 'one-shot' }),
      tuneKey('gpu A', { ...base, workload: 'gemm-rs', reduction: 'one-shot' }),
      tuneKey('gpu A', { ...base, workload: 'gemm-rs' }),
    ]);
    expect(keys.size).toBe(9);
  });

  it('keeps entries across opens and treats a corrupt file as empty', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tune-')), 'sub', 'tune.json');
    TuneCache.open(file).put(result('k1', 'grouped', 2));
    TuneCache.open(file).put(result('k2', 'row-major', 1));
    const again = TuneCache.open(file);
    expect(again.get('k1')?.best).toMatchObject({ order: 'grouped', chunksPerRank: 2 });
    expect(again.get('k2')?.best.order).toBe('row-major');
    expect(again.get('constructor')).toBeUndefined();
    writeFileSync(file, '{ not json');
    expect(TuneCache.open(file).get('k1')).toBeUndefined();
  });
});

describe('tuneBlocks', () => {
  const big = { m: 4096, n: 4096, k: 4096 };
  const tile = (m: number, n: number, k: number): BlockShape => ({ m, n, k });

  it('lists the workload default, then the tiles measured fastest on the H100', () => {
    expect(tuneBlocks('ag-gemm', big, 'f16')).toEqual([undefined, tile(128, 128, 64), tile(128, 256, 16), tile(128, 256, 32), tile(128, 128, 32), tile(64, 64, 32)]);
    expect(tuneBlocks('gemm-rs', big, 'f32')).toEqual([undefined, tile(128, 128, 8), tile(128, 128, 16), tile(64, 64, 32)]);
  });

  it('leaves the tile of other workloads to them', () => {
    for (const w of ['gemv-ar', 'a2a-gemm', 'embed-a2a', 'ring-attn'] as const) expect(tuneBlocks(w, big, 'f32')).toEqual([undefined]);
  });

  it('shrinks each tile to the shape like defaultBlock, and drops those that become the same', () => {
    expect(tuneBlocks('ag-gemm', { m: 64, n: 32, k: 32 }, 'f32')).toEqual([undefined, tile(64, 32, 8), tile(64, 32, 16), tile(64, 32, 32)]);
    expect(tuneBlocks('ag-gemm', { m: 100, n: 72, k: 40 }, 'f16')).toEqual([undefined, tile(128, 128, 64), tile(128, 128, 16), tile(128, 128, 32), tile(64, 64, 32)]);
    // K at least one 16-deep matrix for f16, 8 for f32; M and N at least 16
    expect(tuneBlocks('gemm-rs', { m: 4, n: 8, k: 4 }, 'f16')).toEqual([undefined, tile(16, 16, 16)]);
    expect(tuneBlocks('gemm-rs', { m: 4, n: 8, k: 4 }, 'f32')).toEqual([undefined, tile(16, 16, 8)]);
    expect(tuneBlocks('ag-gemm', { m: 32, n: 4096, k: 16 }, 'f16')).toEqual([undefined, tile(32, 128, 16), tile(32, 256, 16), tile(32, 64, 16)]);
  });
});

/**
 * The trials before the last, which on one device too is the phasing trial: the fastest of them at
 * sequential phasing, kept where its rounds had overlap slower.
 */
function overlapped(result: TuneResult): TuneTrial[] {
  const trials = result.trials.slice(0, -1);
  const last = result.trials.at(-1)!;
  const fastest = trials.filter((t) => t.verified).sort((a, b) => a.ms - b.ms)[0]!;
  expect(last).toMatchObject({ phasing: 'sequential', order: fastest.order, chunksPerRank: fastest.chunksPerRank, verified: true });
  expect(last.block).toEqual(fastest.block);
  expect(result.best.phasing).toBe(last.overlapRatio! < 1 ? 'sequential' : undefined);
  // four rounds for each timed run of a candidate (the tests' two)
  expect(last.rounds).toBe(8);
  return trials;
}

describe('tune searches the tile first, then the order and chunk count', () => {
  let device: DeviceHandle;
  beforeAll(async () => {
    device = await openDevice();
  });
  afterAll(() => device?.close());

  const shape = { m: 32, n: 32, k: 32 };
  const base = { workload: 'ag-gemm', ranks: 2, shape, dtype: 'f32', seed: 1, timedRuns: 2, warmupRuns: 0 } as const;
  const small: BlockShape = { m: 16, n: 16, k: 8 };
  const medium: BlockShape = { m: 32, n: 32, k: 16 };
  const rejected: BlockShape = { m: 48, n: 64, k: 32 };

  async function tuneWithProgress(o: Omit<Parameters<typeof tune>[0], 'onTrial'>): Promise<{ result: TuneResult; progress: TuneProgress[] }> {
    const progress: TuneProgress[] = [];
    const result = await tune({ ...o, onTrial: (_t, p) => progress.push(p) });
    return { result, progress };
  }


  it('times each tile at the first order and chunk count, then the others at the fastest tile; a tile that throws is a failed trial', async () => {
    const { result, progress } = await tuneWithProgress({ ...base, device, orders: ['row-major', 'chunk-arrival'], chunksPerRank: [1], blocks: [small, rejected, medium] });
    const at = (t: TuneTrial): unknown => [t.block, t.order, t.chunksPerRank];
    const trials = overlapped(result);
    const phase1 = trials.slice(0, 3);
    expect(phase1.map(at)).toEqual([
      [small, 'row-major', 1],
      [rejected, 'row-major', 1],
      [medium, 'row-major', 1],
    ]);
    expect(phase1[1]).toMatchObject({ verified: false, error: expect.stringMatching(/block 48x64x32/) });
    expect([phase1[0]!.verified, phase1[2]!.verified]).toEqual([true, true]);
    const tile = phase1[0]!.ms <= phase1[2]!.ms ? small : medium;
    expect(trials.slice(3).map(at)).toEqual([[tile, 'chunk-arrival', 1]]);
    expect(trials[3]!.verified).toBe(true);
    expect(trials[3]).not.toHaveProperty('error');
    expect(progress).toEqual([1, 2, 3, 4, 5].map((done) => ({ done, total: 5 })));

    const best = result.best.phasing ? result.trials.at(-1)! : trials.filter((t) => t.verified).sort((a, b) => a.ms - b.ms)[0]!;
    expect(result.best).toEqual({ order: best.order, chunksPerRank: best.chunksPerRank, block: best.block, ms: best.ms, ...(best.phasing && { phasing: best.phasing }) });
    expect(result.best.block).toEqual(tile);
  }, 180_000);

  it('skips a tile the workload default already ran, and counts it out of the total', async () => {
    const { result, progress } = await tuneWithProgress({ ...base, device, orders: ['row-major'], chunksPerRank: [1], blocks: [undefined, defaultBlock(shape), small] });
    expect(overlapped(result).map((t) => t.block)).toEqual([undefined, small]);
    expect(progress).toEqual([
      { done: 1, total: 3 },
      { done: 2, total: 3 },
      { done: 3, total: 3 },
    ]);
  }, 120_000);

  // Over more than two ranks, with the plan not named: the other one at the fastest candidate.
  it.each([
    { workload: 'ag-gemm', plan: 'gather', other: 'one-shot', named: 'ring' },
    // gemm-rs reduces one-shot on one device: the trial is the ring.
    { workload: 'gemm-rs', plan: 'reduction', other: 'ring', named: 'one-shot' },
  ] as const)('$workload: times the $plan the other way too ($other), at the fastest candidate, and keeps the faster; not when named or two ranks', async ({ workload, plan, other, named }) => {
    const four = { ...base, workload, ranks: 4, shape: { m: 64, n: 32, k: 32 }, device, orders: ['row-major', 'chunk-arrival'] as RunOrder[], chunksPerRank: [1], blocks: [undefined] };
    const { result, progress } = await tuneWithProgress(four);
    const trials = overlapped(result);
    expect(trials.map((t) => [t.order, t[plan]])).toEqual([
      ['row-major', undefined],
      ['chunk-arrival', undefined],
      [expect.any(String), other],
    ]);
    const [a, b, trial] = trials as [TuneTrial, TuneTrial, TuneTrial];
    expect(trials.every((t) => t.verified)).toBe(true);
    expect(trial.order).toBe(a.ms <= b.ms ? a.order : b.order);
    // the phasing trial runs the faster plan, which the best keeps either way
    expect(result.best[plan]).toBe(trial.ms < Math.min(a.ms, b.ms) ? other : undefined);
    expect(progress.map((p) => p.total)).toEqual([4, 4, 4, 4]);
    for (const o of [{ ...four, [plan]: named }, { ...four, ranks: 2 }]) {
      const untried = await tune({ ...o, orders: ['row-major'] });
      expect(overlapped(untried).map((t) => [t.gather, t.reduction])).toEqual([[undefined, undefined]]);
    }
  }, 120_000);

  it('throws when no candidate ran, with the error of the configuration itself', async () => {
    await expect(tune({ ...base, device, orders: ['row-major'], chunksPerRank: [1], blocks: [rejected] })).rejects.toThrow(/block 48x64x32/);
  });
});

describe('tune where the ranks span devices', () => {
  let handles: PlacedDeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
  });
  afterAll(() => handles?.forEach((h) => h.close()));

  it('times the fastest candidate against sequential phasing in rounds, and keeps sequential where overlap is slower in them', async () => {
    const trials: TuneTrial[] = [];
    const progress: TuneProgress[] = [];
    const result = await tune({
      workload: 'ag-gemm', ranks: 2, devices: 2, handles, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', seed: 1, timedRuns: 2, warmupRuns: 0,
      orders: ['row-major', 'chunk-arrival'], chunksPerRank: [1], blocks: [undefined], phasingRounds: 5,
      onTrial: (t, p) => (trials.push(t), progress.push(p)),
    });
    expect(result.trials.map((t) => [t.order, t.phasing])).toEqual([
      ['row-major', undefined],
      ['chunk-arrival', undefined],
      [expect.any(String), 'sequential'],
    ]);
    expect(result.trials.every((t) => t.verified)).toBe(true);
    const [a, b, sequential] = result.trials as [TuneTrial, TuneTrial, TuneTrial];
    // the sequential trial repeats the fastest overlapped candidate, in rounds beside it
    expect(sequential.order).toBe(a.ms <= b.ms ? a.order : b.order);
    expect(sequential.rounds).toBe(5);
    const [lo, hi] = sequential.overlapInterval!;
    expect(lo).toBeLessThanOrEqual(sequential.overlapRatio!);
    expect(hi).toBeGreaterThanOrEqual(sequential.overlapRatio!);
    const keptSequential = sequential.overlapRatio! < 1;
    expect(result.best.phasing).toBe(keptSequential ? 'sequential' : undefined);
    expect(result.best.ms).toBe(keptSequential ? sequential.ms : Math.min(a.ms, b.ms));
    expect(progress.map((p) => p.total)).toEqual([3, 3, 3]);
  }, 180_000);
});

describe('tunedRun', () => {
  let device: DeviceHandle;
  beforeAll(async () => {
    device = await openDevice();
  });
  afterAll(() => device?.close());

  const run = { workload: 'gemm-rs', ranks: 2, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 1 } as const;
  const io = { out: () => {}, err: () => {} };

  function cacheHolding(entry: TuneResult): void {
    const dir = mkdtempSync(join(tmpdir(), 'tuned-run-'));
    vi.stubEnv('SYNCOPATE_CACHE_DIR', dir);
    TuneCache.open(join(dir, 'tune.json')).put(entry);
  }

  it('runs at the cached tile, order and chunk count', async () => {
    const key = tuneKey(adapterLabel(device), run);
    cacheHolding({ ...result(key, 'grouped', 2), best: { order: 'grouped', chunksPerRank: 2, block: { m: 32, n: 16, k: 8 }, ms: 1 } });
    expect(await tunedRun(run, [device], { warmup: 0 }, io)).toEqual({ ...run, order: 'grouped', chunksPerRank: 2, block: { m: 32, n: 16, k: 8 } });
  });

  it('runs with the cached phasing where tuning chose sequential', async () => {
    const key = tuneKey(adapterLabel(device), run);
    cacheHolding({ ...result(key, 'grouped', 1), best: { order: 'grouped', chunksPerRank: 1, phasing: 'sequential', ms: 1 } });
    expect(await tunedRun(run, [device], { warmup: 0 }, io)).toEqual({ ...run, order: 'grouped', chunksPerRank: 1, phasing: 'sequential' });
  });

  it('runs with the cached gather where tuning chose one-shot', async () => {
    const ag = { ...run, workload: 'ag-gemm', ranks: 4 } as const;
    cacheHolding({ ...result(tuneKey(adapterLabel(device), ag), 'grouped', 1), best: { order: 'grouped', chunksPerRank: 1, gather: 'one-shot', ms: 1 } });
    expect(await tunedRun(ag, [device], { warmup: 0 }, io)).toEqual({ ...ag, order: 'grouped', chunksPerRank: 1, gather: 'one-shot' });
  });

  it('runs with the cached reduction where tuning chose the other', async () => {
    const rs = { ...run, workload: 'gemm-rs', ranks: 4 } as const;
    cacheHolding({ ...result(tuneKey(adapterLabel(device), rs), 'grouped', 1), best: { order: 'grouped', chunksPerRank: 1, reduction: 'ring', ms: 1 } });
    expect(await tunedRun(rs, [device], { warmup: 0 }, io)).toEqual({ ...rs, order: 'grouped', chunksPerRank: 1, reduction: 'ring' });
  });

  it('keeps the workload tile for an entry cached before tiles were tuned', async () => {
    const key = tuneKey(adapterLabel(device), run);
    cacheHolding(result(key, 'row-major', 4));
    const tuned = await tunedRun(run, [device], { warmup: 0 }, io);
    expect(tuned).toEqual({ ...run, order: 'row-major', chunksPerRank: 4 });
    expect('block' in tuned).toBe(false);
  });
});

describe('syncopate tune and bench --tuned on the software adapter', () => {
  it('times every candidate, stores the fastest, and bench --tuned runs at that choice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tune-cli-'));
    vi.stubEnv('SYNCOPATE_CACHE_DIR', dir);
    const args = ['ag-gemm', '--ranks', '2', '--m', '64', '--n', '32', '--k', '32', '--runs', '2', '--warmup', '0'];
    const tuned = await cli('tune', ...args, '--order', 'row-major,chunk-arrival', '--chunks-per-rank', '1,2', '--json');
    expect(tuned.code).toBe(0);
    const { results, cache } = JSON.parse(tuned.out);
    expect(cache).toBe(join(dir, 'tune.json'));
    const [r] = results as TuneResult[];
    // tiles 64x32x8 and 64x32x16 besides the default (64x32x32, so that one is not timed twice), then 3
    // more pairs, then the phasing trial
    const trials = overlapped(r!);
    expect(trials.map((t) => t.block)).toEqual([undefined, { m: 64, n: 32, k: 8 }, { m: 64, n: 32, k: 16 }, ...Array(3).fill(r!.trials[3]!.block)]);
    expect(r!.trials.every((t) => t.verified)).toBe(true);
    expect(r!.best.ms).toBe(r!.best.phasing ? r!.trials.at(-1)!.ms : Math.min(...trials.map((t) => t.ms)));
    const stored = JSON.parse(readFileSync(cache, 'utf8'));
    expect(stored[r!.key].best).toEqual(r!.best);

    const bench = await cli('bench', ...args, '--tuned', '--json');
    expect(bench.code).toBe(0);
    const report = JSON.parse(bench.out).reports[0];
    expect({ order: report.order, chunksPerRank: report.chunksPerRank }).toEqual({ order: r!.best.order, chunksPerRank: r!.best.chunksPerRank });
    expect(report.variants.fused.phasing).toBe(r!.best.phasing);
  }, 180_000);

  it('prints the tile of each trial, default where the workload chose it', async () => {
    vi.stubEnv('SYNCOPATE_CACHE_DIR', mkdtempSync(join(tmpdir(), 'tune-cli-')));
    const tuned = await cli('tune', 'gemv-ar', '--ranks', '2', '--m', '4', '--n', '32', '--k', '32', '--runs', '1', '--warmup', '0', '--order', 'row-major', '--chunks-per-rank', '1');
    expect(tuned.code).toBe(0);
    const lines = tuned.out.split('\n');
    expect(lines[1]).toMatch(/^ {2}tile +order +chunks\/rank +phasing +fused$/);
    expect(lines[2]).toMatch(/^ {2}default +row-major +1 +overlap +[\d.]+ ms( {2}<- best)?$/);
    // the phasing trial, the best where it kept sequential
    expect(lines[3]).toMatch(/^ {2}default +row-major +1 +sequential +[\d.]+ ms {2}\(overlap vs this in 4 rounds [\d.]+x, [\d.]+–[\d.]+\)/);
    expect(lines.filter((l) => l.endsWith('<- best'))).toHaveLength(1);
  }, 60_000);

  it('refuses --tuned together with the lists it would replace', async () => {
    const r = await cli('bench', 'ag-gemm', '--tuned', '--order', 'row-major');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--tuned takes the order and chunk count from the tune cache; leave out --order/);
  });
});
