import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { gemmKernel, parse, scheduleTable, tileCount, verify, type ChunkPlan, type ChunkSpec, type Module, type TileOrder } from '@syncopate/ir';
import { attachPlan } from '../src/attach-plan.js';
import { chunksProducedBy, chunksWaitedBy } from '../src/analysis/align.js';
import { chooseTileOrder, reorderTiles, tileArrivals } from '../src/reorder-tiles.js';
import { oneShotReduceScatter, ringAllGather, ringReduceScatter } from '../src/templates/index.js';

function withPlan(module: Module, plan: ChunkPlan): Module {
  const r = attachPlan.run(module, { plan, options: {} });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  return r.right;
}

/**
 * The chunk-arrival key of a tile, from the alignment queries rather than the pass's own arrays: the
 * (step, plan index) of the chunk that arrives last for it, then the earliest step it sends at.
 */
function oracleKey(module: Module, rank: number, tile: readonly number[]): [number, number, number] {
  const waited = chunksWaitedBy(module, rank, tile).map((c) => [c.step + 1, module.chunks.indexOf(c)] as const);
  const [step, chunk] = waited.reduce<readonly [number, number]>((a, b) => (b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? b : a), [0, -1]);
  const sends = Math.min(...chunksProducedBy(module, rank, tile).map((c) => c.step));
  return [step, chunk, sends];
}

/** Lexicographic; Infinity (no send) sorts last. */
const compareKeys = (a: readonly number[], b: readonly number[]) => a.reduce((d, x, i) => d || (x === b[i] ? 0 : x < b[i]! ? -1 : 1), 0);

/** Every rank's schedule lists each tile once, with keys that never decrease. */
function expectChunkArrival(module: Module, order: TileOrder): void {
  const grid = module.kernel.grid;
  for (let rank = 0; rank < module.ranks; rank++) {
    const tiles = scheduleTable(order, grid, rank);
    expect(new Set(tiles.map((t) => t.join())).size).toBe(tileCount(grid));
    const keys = tiles.map((t) => oracleKey(module, rank, t));
    keys.slice(1).forEach((key, i) => expect(compareKeys(keys[i]!, key), `rank ${rank}, ticket ${i + 1}`).toBeLessThanOrEqual(0));
  }
}

/** The tile-by-tile order chunk-arrival wrote before segments: a stable sort of the grouped order by key. */
function tableOrder(module: Module, rank: number, groupSize: number): number[][] {
  const grid = module.kernel.grid;
  const { step, chunk, sends } = tileArrivals(module, rank);
  const index = (t: readonly number[]) => t.reduce((at, x, axis) => at * grid[axis]! + x, 0);
  const key = (t: readonly number[]) => [step[index(t)]!, chunk[index(t)]!, sends[index(t)]!];
  return scheduleTable({ kind: 'grouped', groupSize }, grid)
    .map((t, i) => ({ t, i }))
    .sort((a, b) => compareKeys(key(a.t), key(b.t)) || a.i - b.i)
    .map(({ t }) => t);
}

const ag = (ranks: number, m: number, chunksPerRank = 1) =>
  withPlan(
    gemmKernel({ m, n: 256, k: 64 }, { ranks, distribute: 'ag', name: 'ag_gemm' }),
    ringAllGather({ ranks, tensor: { name: 'A', shape: [m, 64] }, axis: 0, chunksPerRank }),
  );
const rs = (ranks: number, m: number) =>
  withPlan(
    gemmKernel({ m, n: 256, k: 64 }, { ranks, distribute: 'rs', name: 'gemm_rs' }),
    ringReduceScatter({ ranks, tensor: { name: 'C', shape: [m, 256] }, axis: 0 }),
  );

describe('reorder-tiles: chunk-arrival as segments', () => {
  it.each([
    ['ag-gemm', 2, 512, ag(2, 512)],
    ['ag-gemm', 4, 1024, ag(4, 1024)],
    ['ag-gemm, 2 chunks per shard', 4, 1024, ag(4, 1024, 2)],
    ['ag-gemm, shards inside a band of 8 rows', 3, 576, ag(3, 576)],
    ['gemm-rs', 4, 1024, rs(4, 1024)],
    ['gemm-rs', 8, 2048, rs(8, 2048)],
  ])('%s on %i ranks (M = %i): one box per chunk, in arrival order', (_, ranks, m, module) => {
    const order = chooseTileOrder(module, {});
    expect(order.kind).toBe('segments');
    if (order.kind !== 'segments') return;
    expect(order.ranks).toHaveLength(ranks);
    expect(verify({ ...module, kernel: { ...module.kernel, scheduler: { order } } })).toEqual([]);
    expectChunkArrival(module, order);
    const rowsPerRank = m / 64 / ranks;
    const shardOf = (tile: readonly number[]) => Math.floor(tile[0]! / rowsPerRank);
    for (let rank = 0; rank < ranks; rank++) {
      if (module.name === 'ag_gemm') {
        // A rank's own rows need no chunk and run first.
        expect(order.ranks[rank]![0]).toEqual({ lo: [rank * rowsPerRank, 0], hi: [(rank + 1) * rowsPerRank, 4] });
        continue;
      }
      // Reduce-scatter: step 0's parts need the shard the rank sends (to the next rank in the ring)
      // and the one it adds into (from the rank before), so both run first, in row order; its own
      // shard, the last hop's destination, runs last.
      const tiles = scheduleTable(order, module.kernel.grid, rank);
      const perShard = rowsPerRank * 4;
      const firstTwo = new Set(tiles.slice(0, 2 * perShard).map(shardOf));
      expect(firstTwo).toEqual(new Set([(rank + ranks - 1) % ranks, (rank + ranks - 2) % ranks]));
      expect(new Set(tiles.slice(-perShard).map(shardOf))).toEqual(new Set([rank]));
    }
  });

  it('visits the tiles in the order the tile-by-tile table did, where shards are whole bands of G rows', () => {
    for (const [module, groupSize] of [[ag(4, 2048), 8], [rs(4, 1024), 4], [ag(2, 256), 2]] as const) {
      const order = chooseTileOrder(module, { groupSize });
      expect(order.kind).toBe('segments');
      for (let rank = 0; rank < module.ranks; rank++) {
        expect(scheduleTable(order, module.kernel.grid, rank)).toEqual(tableOrder(module, rank, groupSize));
      }
    }
  });

  it('is the grouped order, the same on every rank, for a one-shot reduce-scatter', () => {
    // Every tile of every rank completes a step-0 reduce-add (as source, or as the owner's own rows),
    // so the ranks' tiles over one output tile run together and its sum is published early.
    const module = withPlan(
      gemmKernel({ m: 1024, n: 256, k: 64 }, { ranks: 4, distribute: 'rs', name: 'gemm_rs' }),
      oneShotReduceScatter({ ranks: 4, tensor: { name: 'C', shape: [1024, 256] }, axis: 0 }),
    );
    expect(chooseTileOrder(module, {})).toEqual({ kind: 'grouped', groupSize: 8 });
  });

  it('sends first where a reduce-add crosses devices, or goes by peer-copy', () => {
    // Between devices the partial leaves once the source's tiles are done; the owner's rows need only
    // be done when it lands, so each rank runs the shard it sends first and its own last.
    const plan = oneShotReduceScatter({ ranks: 2, tensor: { name: 'C', shape: [512, 256] }, axis: 0 });
    const kernel = gemmKernel({ m: 512, n: 256, k: 64 }, { ranks: 2, distribute: 'rs', name: 'gemm_rs' });
    const sendFirst = { kind: 'segments', groupSize: 8, ranks: [[{ lo: [4, 0], hi: [8, 4] }, { lo: [0, 0], hi: [4, 4] }], [{ lo: [0, 0], hi: [4, 4] }, { lo: [4, 0], hi: [8, 4] }]] };
    expect(chooseTileOrder(withPlan(kernel, plan), { rankDevice: [0, 1] })).toEqual(sendFirst);
    const byPeerCopy = { ...plan, chunks: plan.chunks.map((c) => ({ ...c, backend: 'peer-copy' as const })) };
    expect(chooseTileOrder(withPlan(kernel, byPeerCopy), {})).toEqual(sendFirst);
    expect(chooseTileOrder(withPlan(kernel, plan), { rankDevice: [0, 0] })).toEqual({ kind: 'grouped', groupSize: 8 });
    const refused = reorderTiles.run(withPlan(kernel, plan), { plan, options: { 'reorder-tiles': { rankDevice: [0] } } });
    expect(E.isLeft(refused) && refused.left[0]!.message).toMatch(/rankDevice \[0\] must give a device index >= 0 for each of the 2 ranks/);
  });

  it('is the grouped order when every rank has one box, the whole grid', () => {
    const local = withPlan(gemmKernel({ m: 256, n: 256, k: 64 }), { ranks: 1, chunks: [] });
    expect(chooseTileOrder(local, { groupSize: 4 })).toEqual({ kind: 'grouped', groupSize: 4 });
  });

  it('shares one list between ranks whose boxes agree', () => {
    // Both ranks wait for the other's rows of A at step 0 and at step 1, in the same tile rows.
    const module = withPlan(gemmKernel({ m: 256, n: 128, k: 64 }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }), {
      ranks: 2,
      chunks: [
        { tensor: 'A', region: { lo: [128, 0], hi: [192, 64] }, src: 1, dst: 0, step: 0 },
        { tensor: 'A', region: { lo: [192, 0], hi: [256, 64] }, src: 1, dst: 0, step: 1 },
        { tensor: 'A', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 1 },
        { tensor: 'A', region: { lo: [64, 0], hi: [128, 64] }, src: 0, dst: 1, step: 0 },
      ],
    });
    const order = chooseTileOrder(module, {});
    if (order.kind !== 'segments') throw new Error(`expected segments, got ${order.kind}`);
    expect(order.ranks[0]).not.toBe(order.ranks[1]);
    expectChunkArrival(module, order);
  });
});

describe('reorder-tiles: chunk-arrival tile by tile', () => {
  /**
   * A sharded by rows and B by columns over 3 ranks: a tile waits for the rows of A and the columns of
   * B it reads, so the tiles whose last chunk is one row of A need not form a box.
   */
  const module3 = (): Module => {
    const kernel = parse(`module @ab ranks(3) {
  tensor @A : f32[192, 64] sharded(0)
  tensor @B : f32[64, 192] sharded(1)
  tensor @C : f32[192, 192] replicated
  kernel @gemm grid(3, 3) order(row-major) {
    %pm = program_id 0
    %pn = program_id 1
    %a = load @A[64*%pm, 0] : tile<64x64xf32>
    %b = load @B[0, 64*%pn] : tile<64x64xf32>
    %d = dot %a, %b : tile<64x64xf32>
    store %d, @C[64*%pm, 64*%pn]
  }
}
`);
    // On rank 0, B's columns 2, A's rows 1, B's columns 1, A's rows 2 arrive in that order, so the
    // tiles that wait last for A's rows 1 are (1, 0) and (1, 2): not a box.
    const onRank0: Record<string, number> = { B2: 0, A1: 1, B1: 2, A2: 3 };
    const steps = (dst: number, src: number, tensor: 'A' | 'B') => (dst !== 0 ? 0 : onRank0[`${tensor}${src}`]!);
    const chunks: ChunkSpec[] = [];
    for (let dst = 0; dst < 3; dst++) {
      for (let src = 0; src < 3; src++) {
        if (src === dst) continue;
        chunks.push({ tensor: 'A', region: { lo: [64 * src, 0], hi: [64 * src + 64, 64] }, src, dst, step: steps(dst, src, 'A') });
        chunks.push({ tensor: 'B', region: { lo: [0, 64 * src], hi: [64, 64 * src + 64] }, src, dst, step: steps(dst, src, 'B') });
      }
    }
    return withPlan(kernel, { ranks: 3, chunks });
  };

  it('falls back to a rank table when the tiles of one key are not a box', () => {
    const module = module3();
    const order = chooseTileOrder(module, {});
    expect(order.kind).toBe('rank-table');
    expectChunkArrival(module, order);
    expect(scheduleTable(order, module.kernel.grid, 0)).toEqual([[0, 0], [0, 2], [1, 0], [1, 2], [0, 1], [1, 1], [2, 0], [2, 1], [2, 2]]);
  });

  it('keeps the ties in the grouped order of options.groupSize', () => {
    const module = module3();
    for (const groupSize of [1, 8]) {
      const order = chooseTileOrder(module, { groupSize });
      for (let rank = 0; rank < 3; rank++) expect(scheduleTable(order, module.kernel.grid, rank)).toEqual(tableOrder(module, rank, groupSize));
    }
  });
});
