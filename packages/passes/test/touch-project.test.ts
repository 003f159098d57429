/**
 * `touch` on offsets of several variables (`64·%dst + 16·%pm`): the tile box it gives must hold every
 * tile some execution of which touches the region (checked by enumeration), and is narrowed by
 * projecting the condition onto each variable, so that such a store into one destination's rows
 * arrives only from that destination's tiles.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { add, buildModule, mul, type Box, type Module } from '@syncopate/ir';
import { accessSites } from '../src/analysis/access-sites.js';
import { allTiles } from '../src/analysis/align.js';
import { touch, touchesByEnumeration } from '../src/analysis/touch.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? '') || 100;

/** A store of a [rows, 4] tile at `a·%p0 + b·%p1 + c·%k + constant` on a [g0, g1] grid, in a loop over %k. */
function storeModule(g: [number, number], a: number, b: number, c: number, constant: number, rows: number, loop: number): Module {
  return buildModule('t', { ranks: 1 }, (mb) => {
    const T = mb.tensor('T', [256, 4], 'f32');
    mb.kernel('k', g, (kb) => {
      const p0 = kb.programId(0, 'p0');
      const p1 = kb.programId(1, 'p1');
      kb.for(0, loop, 1, [], (k) => {
        kb.store(T, [add(mul(p0, a), mul(p1, b), mul(k, c), constant), 0], kb.zeros([rows, 4]));
        return [];
      });
    });
  });
}

const inBox = (tile: readonly number[], box: Box) => tile.every((x, i) => x >= box.lo[i]! && x < box.hi[i]!);

describe('touch, offsets of several variables', () => {
  it('narrows the destination of a store at 64·%dst + 16·%pm to the one whose rows it meets', () => {
    const m = storeModule([4, 4], 64, 16, 0, 0, 16, 1);
    const site = accessSites(m)[0]!;
    const t = touch(m, site, { lo: [128, 0], hi: [192, 4] })!;
    expect(t.tiles).toEqual({ lo: [2, 0], hi: [3, 4] });
    expect(t.exact).toBe(false);
    // Rows 136..140 meet the tile (2, 0) only: %pm is narrowed too.
    expect(touch(m, site, { lo: [136, 0], hi: [140, 4] })!.tiles).toEqual({ lo: [2, 0], hi: [3, 1] });
    // With 3 tiles of 16 rows per destination, rows 48..64 belong to no tile.
    const gaps = storeModule([4, 3], 64, 16, 0, 0, 16, 1);
    expect(touch(gaps, accessSites(gaps)[0]!, { lo: [50, 0], hi: [60, 4] })).toBeUndefined();
  });

  it('never leaves out a tile that touches the region (random coefficients, regions and loops)', () => {
    fc.assert(
      fc.property(
        fc.record({
          g0: fc.integer({ min: 1, max: 5 }),
          g1: fc.integer({ min: 1, max: 5 }),
          a: fc.integer({ min: -40, max: 40 }),
          b: fc.integer({ min: -40, max: 40 }),
          c: fc.integer({ min: -9, max: 9 }),
          constant: fc.integer({ min: 0, max: 255 }),
          rows: fc.integer({ min: 1, max: 20 }),
          loop: fc.integer({ min: 1, max: 4 }),
          lo: fc.integer({ min: 0, max: 255 }),
          size: fc.integer({ min: 1, max: 60 }),
        }),
        (x) => {
          const m = storeModule([x.g0, x.g1], x.a, x.b, x.c, x.constant, x.rows, x.loop);
          const site = accessSites(m)[0]!;
          const region: Box = { lo: [x.lo, 0], hi: [Math.min(256, x.lo + x.size), 4] };
          const t = touch(m, site, region);
          for (const tile of allTiles(m.kernel.grid)) {
            if (!touchesByEnumeration(m, site, region, tile)) continue;
            expect(t, `tile ${tile} touches ${JSON.stringify(region)}`).toBeDefined();
            expect(inBox(tile, t!.tiles), `tile ${tile} outside ${JSON.stringify(t!.tiles)}`).toBe(true);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
