import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { add, buildModule, gemmKernel, mul, type ChunkPlan, type Diagnostic, type Module } from '@syncopate/ir';
import { attachPlan } from '../src/attach-plan.js';
import { alignChunks, allTiles, chunksProducedBy, chunksWaitedBy } from '../src/analysis/align.js';
import { validatePlan } from '../src/analysis/validate-plan.js';
import { alignedBlockSize, chunkBoundaries, straddlingTiles } from '../src/analysis/tile-alignment.js';
import { alignChunksPass } from '../src/align-chunks.js';
import { lineHull, lineSpill } from '../src/analysis/cache-lines.js';
import { oneShotReduceScatter, ringAllGather } from '../src/templates/index.js';

function withPlan(module: Module, plan: ChunkPlan): Module {
  const r = attachPlan.run(module, { plan, options: {} });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  return r.right;
}

const codes = (ds: Diagnostic[]) => ds.map((d) => d.code);

/** Independent oracle: the elements of A a GEMM tile reads, walked one K step at a time. */
function gemmTileMeetsA(tile: number[], s: { m: number; k: number; bm: number; bk: number }, region: { lo: readonly number[]; hi: readonly number[] }): boolean {
  const rowLo = Math.max(tile[0]! * s.bm, region.lo[0]!);
  const rowHi = Math.min(tile[0]! * s.bm + s.bm, s.m, region.hi[0]!);
  if (rowLo >= rowHi) return false;
  for (let k = 0; k < s.k; k += s.bk) {
    if (Math.max(k, region.lo[1]!) < Math.min(k + s.bk, s.k, region.hi[1]!)) return true;
  }
  return false;
}

/** The 128-byte lines of `box` of `rank`'s copy of an f32 [m, k] tensor, copies back to back in one buffer. */
function linesOfBox(rank: number, box: { lo: readonly number[]; hi: readonly number[] }, m: number, k: number): Set<number> {
  const lines = new Set<number>();
  for (let r = box.lo[0]!; r < box.hi[0]!; r++) {
    for (let c = box.lo[1]!; c < box.hi[1]!; c++) lines.add(Math.floor(((rank * m + r) * k + c) * 4 / 128));
  }
  return lines;
}

describe('chunk alignment on AllGather + GEMM', () => {
  it('each tile waits on exactly the chunks that write into the cache lines it reads, of its copy and its neighbours\' (random shapes, ranks, chunks per rank)', () => {
    const shapes = fc.record({
      ranks: fc.integer({ min: 2, max: 4 }),
      cpr: fc.integer({ min: 1, max: 3 }),
      bm: fc.constantFrom(4, 8, 16),
      bk: fc.constantFrom(4, 8),
      rowsPerRank: fc.integer({ min: 3, max: 20 }),
      k: fc.integer({ min: 4, max: 24 }),
      kChunked: fc.boolean(),
    });
    fc.assert(
      fc.property(shapes, ({ ranks, cpr, bm, bk, rowsPerRank, k, kChunked }) => {
        const m = ranks * rowsPerRank;
        const kernel = gemmKernel({ m, n: 8, k, blockM: bm, blockN: 8, blockK: bk }, { ranks, distribute: 'ag' });
        let plan = ringAllGather({ ranks, tensor: { name: 'A', shape: [m, k] }, axis: 0, chunksPerRank: cpr });
        if (kChunked) {
          // Split every chunk along K too, so tiles meet chunks inside the reduction loop.
          const half = Math.floor(k / 2);
          plan = {
            ...plan,
            chunks: plan.chunks.flatMap((c) => [
              { ...c, region: { lo: c.region.lo, hi: [c.region.hi[0]!, half] } },
              { ...c, region: { lo: [c.region.lo[0]!, half], hi: c.region.hi } },
            ]),
          };
        }
        const module = withPlan(kernel, plan);
        expect(validatePlan(module)).toEqual([]);
        for (let rank = 0; rank < ranks; rank++) {
          for (const tile of allTiles(module.kernel.grid)) {
            const got = chunksWaitedBy(module, rank, tile).map((c) => c.value.name);
            // Its own copy's chunks by line hull; a neighbouring rank's whose bytes share a 128-byte
            // line of the buffer (copies back to back, f32) with the rows the tile reads of its copy.
            const rows = [tile[0]! * bm, Math.min(tile[0]! * bm + bm, m)] as const;
            const tileLines = linesOfBox(rank, { lo: [rows[0], 0], hi: [rows[1], k] }, m, k);
            const want = module.chunks
              .filter((c) =>
                c.dst === rank
                  ? gemmTileMeetsA(tile, { m, k, bm, bk }, lineHull(c.region, lineSpill(module.tensors.find((t) => t.name === 'A')!)!))
                  : [...linesOfBox(c.dst, c.region, m, k)].some((l) => tileLines.has(l)),
              )
              .map((c) => c.value.name);
            expect(got).toEqual(want);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a tile straddling a chunk boundary waits on both chunks', () => {
    // 2 ranks, 24 rows of 32 f32 (a 128-byte line each): shards are rows 0-11 and 12-23; 16-row tiles straddle row 12.
    const module = withPlan(
      gemmKernel({ m: 24, n: 8, k: 32, blockM: 16, blockN: 8, blockK: 8 }, { ranks: 2, distribute: 'ag' }),
      ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [24, 32] }, axis: 0, chunksPerRank: 2 }),
    );
    // Rank 0 receives rank 1's rows in two chunks: 12-17 and 18-23. Tile 0 (rows 0-15) needs the first only.
    expect(chunksWaitedBy(module, 0, [0, 0]).map((c) => c.region.lo[0])).toEqual([12]);
    expect(chunksWaitedBy(module, 0, [1, 0]).map((c) => c.region.lo[0])).toEqual([12, 18]);
    expect(chunksWaitedBy(module, 1, [0, 0]).map((c) => c.region.lo[0])).toEqual([0, 6]);
  });

  it('a tile waits for a chunk that only shares a cache line with its rows (L1 is not coherent: cache-lines.ts)', () => {
    // Rows of 8 f32 are 32 bytes: a 128-byte line holding row 15 can reach row 19, in the chunk of rows 18-23.
    const module = withPlan(
      gemmKernel({ m: 24, n: 8, k: 8, blockM: 16, blockN: 8, blockK: 8 }, { ranks: 2, distribute: 'ag' }),
      ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [24, 8] }, axis: 0, chunksPerRank: 2 }),
    );
    expect(chunksWaitedBy(module, 0, [0, 0]).map((c) => c.region.lo[0])).toEqual([12, 18]);
    expect(chunksWaitedBy(module, 1, [1, 0]).map((c) => c.region.lo[0])).toEqual([]); // rows 16-23: lines reach row 12, its own
    // A 24x1 K of ring attention: every line of a 96-byte copy may hold every row.
    expect(lineHull({ lo: [18, 0], hi: [24, 1] }, lineSpill({ name: 'K', shape: [24, 1], dtype: 'f32', distribution: { kind: 'replicated' } } as never)!)).toEqual({ lo: [0, 0], hi: [24, 1] });
  });
});

describe('chunk alignment on GEMM + ReduceScatter', () => {
  it('counts the tiles that complete each chunk and names the tiles that arrive', () => {
    const module = withPlan(
      gemmKernel({ m: 64, n: 32, k: 16, blockM: 16, blockN: 16, blockK: 16 }, { ranks: 2, distribute: 'rs' }),
      oneShotReduceScatter({ ranks: 2, tensor: { name: 'C', shape: [64, 32] }, axis: 0 }),
    );
    expect(validatePlan(module)).toEqual([]);
    const { producers, waits } = alignChunks(module);
    expect(waits).toHaveLength(0);
    // Each chunk is half of C: 2 rows of tiles x 2 columns.
    expect([...producers.values()]).toEqual([4, 4]);
    expect(chunksProducedBy(module, 0, [3, 1]).map((c) => c.value.name)).toEqual(['c0']);
    expect(chunksProducedBy(module, 1, [0, 0]).map((c) => c.value.name)).toEqual(['c1']);
    // A reduce-add's destination tiles arrive at it too: rank 0's own rows complete c1 from rank 1.
    expect(chunksProducedBy(module, 0, [0, 0]).map((c) => c.value.name)).toEqual(['c1']);
    expect(chunksProducedBy(module, 1, [3, 1]).map((c) => c.value.name)).toEqual(['c0']);
  });
});

describe('plan validation', () => {
  const ag = (plan: ChunkPlan) => withPlan(gemmKernel({ m: 64, n: 16, k: 16, blockM: 16, blockN: 16, blockK: 16 }, { ranks: 4, distribute: 'ag' }), plan);
  const full = ringAllGather({ ranks: 4, tensor: { name: 'A', shape: [64, 16] }, axis: 0 });

  it('accepts the ring all-gather', () => {
    expect(validatePlan(ag(full))).toEqual([]);
  });

  it('names the tile, rank and region a missing chunk leaves uncovered', () => {
    const ds = validatePlan(ag({ ...full, chunks: full.chunks.filter((c) => !(c.dst === 2 && c.step === 2)) }));
    expect(codes(ds)).toEqual(['align/uncovered']);
    expect(ds[0]!.message).toContain('tile (3, 0) of rank 2 reads @A[48:64, 0:16]');
    expect(ds[0]).toMatchObject({ op: 'load', value: 'a' });
  });

  it('rejects two copies of the same rows into one rank', () => {
    const ds = validatePlan(ag({ ...full, chunks: [...full.chunks, { ...full.chunks[0]!, step: 2 }] }));
    expect(codes(ds)).toContain('align/overlap');
    expect(ds.find((d) => d.code === 'align/overlap')!.message).toMatch(/%c0 .* and %c12 .* both write @A\[0:16, 0:16\] of rank 1/);
  });

  it('rejects a copy into rows the destination owns', () => {
    const ds = validatePlan(ag({ ...full, chunks: [...full.chunks, { ...full.chunks[0]!, dst: 0, src: 3, step: 0 }] }));
    expect(ds.some((d) => d.code === 'align/overlap' && /which rank 0 owns/.test(d.message))).toBe(true);
  });

  it('rejects forwarding rows before they arrive', () => {
    // Swap steps 0 and 1: at step 0 every rank would forward a shard it has not received yet.
    const swapped = full.chunks.map((c) => ({ ...c, step: c.step === 0 ? 1 : c.step === 1 ? 0 : c.step }));
    const ds = validatePlan(ag({ ...full, chunks: swapped }));
    expect(codes(ds)).toContain('align/unavailable');
    expect(ds.find((d) => d.code === 'align/unavailable')!.message).toMatch(/%c4 .* sends @A\[48:64, 0:16\], which rank 0 neither owns nor receives before step 0/);
  });

  it('rejects a copy into elements the destination stores', () => {
    const module = withPlan(gemmKernel({ m: 32, n: 16, k: 16, blockM: 16, blockN: 16, blockK: 16 }, { ranks: 2, distribute: 'rs' }), {
      ranks: 2,
      chunks: [{ tensor: 'C', region: { lo: [0, 0], hi: [16, 16] }, src: 1, dst: 0, step: 0, kind: 'copy' }],
    });
    expect(codes(validatePlan(module))).toEqual(['align/store-conflict']);
  });

  it('finds a cycle in the wait graph and names the chunks on it', () => {
    // Tile 0 reads X[0:4] and writes X[4:8]; tile 1 the other way round. Rank 0's chunk into rank 1 is
    // completed by tile 0, which waits for rank 1's chunk into rank 0, completed by tile 1, which waits ...
    const module = withPlan(
      buildModule('swap', { ranks: 2 }, (mb) => {
        const X = mb.tensor('X', [8], 'f32');
        mb.kernel('swap', [2], (kb) => {
          const p = kb.programId(0, 'p');
          const x = kb.load(X, [mul(p, 4)], [4], 'x');
          kb.store(X, [add(mul(p, -4), 4)], x);
        });
      }),
      {
        ranks: 2,
        chunks: [
          { tensor: 'X', region: { lo: [4], hi: [8] }, src: 0, dst: 1, step: 0, kind: 'reduce-add' },
          { tensor: 'X', region: { lo: [0], hi: [4] }, src: 1, dst: 0, step: 0, kind: 'reduce-add' },
        ],
      },
    );
    const ds = validatePlan(module);
    expect(codes(ds)).toEqual(['align/cycle']);
    expect(ds[0]!.message).toContain('%c0 waits for %c1 waits for %c0');
  });
});

describe('tile alignment with chunk boundaries', () => {
  const kernel = (blockM: number) => gemmKernel({ m: 96, n: 16, k: 16, blockM, blockN: 16, blockK: 16 }, { ranks: 2, distribute: 'ag' });
  // 2 ranks, 2 chunks per rank: boundaries at rows 24, 48 and 72.
  const plan = ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [96, 16] }, axis: 0, chunksPerRank: 2 });

  it('finds the tiles that span a chunk boundary', () => {
    const module = withPlan(kernel(32), plan);
    expect(chunkBoundaries(module, 'A')).toEqual([[24, 48, 72], []]);
    // 32-row tiles: tile 0 (rows 0-31) spans 24, tile 1 (32-63) spans 48, tile 2 (64-95) spans 72.
    expect(straddlingTiles(module).map((s) => [s.boundary, s.tile])).toEqual([
      [24, 0],
      [48, 1],
      [72, 2],
    ]);
    expect(straddlingTiles(withPlan(kernel(8), plan))).toEqual([]);
  });

  it('chooses the largest tile size that never spans one', () => {
    expect(alignedBlockSize([24, 48, 72], [64, 32, 16, 8])).toBe(8);
    expect(alignedBlockSize([64, 128], [64, 32])).toBe(64);
    expect(alignedBlockSize([3], [64, 32])).toBeUndefined();
  });

  it("align-chunks refuses straddling tiles only when asked, naming the load and suggesting a size", () => {
    const module = withPlan(kernel(32), plan);
    expect(E.isRight(alignChunksPass.run(module, { options: {} }))).toBe(true);
    const refused = alignChunksPass.run(module, { options: { 'align-chunks': { tiles: 'aligned' } } });
    const ds = E.isLeft(refused) ? refused.left : [];
    expect(ds.map((d) => [d.code, d.op, d.value])).toEqual(Array(3).fill(['align/straddle', 'load', 'a']));
    expect(ds[0]!.message).toMatch(/spans the chunk boundary at element 24 of axis 0 .* tiles of 8 elements along axis 0 would not/);
  });
});
