import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tuneKey, type TuneResult } from '../src/autotune.js';
import { defaultTuneCacheFile, TuneCache } from '../src/cli/tune-cache.js';
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
    ]);
    expect(keys.size).toBe(6);
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
    expect(r!.trials).toHaveLength(4);
    expect(r!.trials.every((t) => t.verified)).toBe(true);
    expect(r!.best.ms).toBe(Math.min(...r!.trials.map((t) => t.ms)));
    const stored = JSON.parse(readFileSync(cache, 'utf8'));
    expect(stored[r!.key].best).toEqual(r!.best);

    const bench = await cli('bench', ...args, '--tuned', '--json');
    expect(bench.code).toBe(0);
    const report = JSON.parse(bench.out).reports[0];
    expect({ order: report.order, chunksPerRank: report.chunksPerRank }).toEqual({ order: r!.best.order, chunksPerRank: r!.best.chunksPerRank });
  }, 180_000);

  it('refuses --tuned together with the lists it would replace', async () => {
    const r = await cli('bench', 'ag-gemm', '--tuned', '--order', 'row-major');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--tuned takes the order and chunk count from the tune cache; leave out --order/);
  });
});
