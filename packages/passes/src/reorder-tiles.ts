/**
 * `reorder-tiles`: chooses the order in which workgroup tickets visit tiles, and writes it into the
 * kernel's tile scheduler. Orders: row-major, column-major, grouped (Triton's L2-friendly order),
 * chunk-arrival (per rank: tiles that need no chunk first, then tiles in the order their last chunk
 * arrives, the tiles of one chunk together; among those, tiles that complete early-step chunks
 * first), or a user function giving each tile of each rank a key.
 */
import * as E from 'fp-ts/lib/Either.js';
import { castDraft } from 'immer';
import { error, scheduleTable, type Box, type Module, type TileOrder } from '@syncopate/ir';
import { alignChunks, allTiles, arrivalTiles } from './analysis/align.js';
import { definePass, editModule, type Pass } from './pass.js';

/** Lower keys run first; ties keep the row-major order. */
export type TileKey = (tile: readonly number[], rank: number) => number;

export type TileOrderOption = 'row-major' | 'column-major' | 'grouped' | 'chunk-arrival' | TileKey;

export interface ReorderOptions {
  readonly order?: TileOrderOption;
  /** Rows of tiles per group for `grouped` (and inside a chunk for `chunk-arrival`); default 8. */
  readonly groupSize?: number;
}

/** Row-major linear index of every tile in `box` of a grid with row-major `strides`. */
function forEachTileIn(box: Box, strides: readonly number[], visit: (index: number) => void): void {
  const walk = (axis: number, base: number) => {
    if (axis === box.lo.length) return visit(base);
    for (let x = box.lo[axis]!; x < box.hi[axis]!; x++) walk(axis + 1, base + x * strides[axis]!);
  };
  walk(0, 0);
}

/**
 * Per rank and tile (row-major linear index): the step after which the tile has all its chunks (0: it
 * needs none), the plan index of the chunk that arrives last for it (−1: none), and the earliest step
 * of a chunk it helps complete (Infinity: none), so that producers of early chunks run early.
 */
export function tileArrivals(module: Module, rank: number): { step: Int32Array; chunk: Int32Array; sends: Float64Array } {
  const grid = module.kernel.grid;
  const n = grid.reduce((a, b) => a * b, 1);
  const strides = grid.map((_, i) => grid.slice(i + 1).reduce((a, b) => a * b, 1));
  const step = new Int32Array(n);
  const chunk = new Int32Array(n).fill(-1);
  const sends = new Float64Array(n).fill(Infinity);
  const alignment = alignChunks(module);
  for (const use of alignment.waits) {
    if (use.chunk.dst !== rank) continue;
    const arrival = use.chunk.step + 1;
    const planIndex = module.chunks.indexOf(use.chunk);
    forEachTileIn(use.tiles, strides, (at) => {
      if (arrival > step[at]! || (arrival === step[at] && planIndex > chunk[at]!)) {
        step[at] = arrival;
        chunk[at] = planIndex;
      }
    });
  }
  for (const c of module.chunks) {
    const box = c.src === rank ? arrivalTiles(alignment, c) : undefined;
    if (box) forEachTileIn(box, strides, (at) => (sends[at] = Math.min(sends[at]!, c.step)));
  }
  return { step, chunk, sends };
}

/**
 * Tile indices sorted by integer key columns (lexicographic, lower first; Infinity sorts last), ties
 * kept in `baseOrder`. Keys take few values (steps, chunks), so a counting sort over the packed key
 * does it in linear time: tables hold every tile of every rank, and compile time matters.
 */
function sortTilesByIntegerKeys(baseOrder: Int32Array, keys: readonly ArrayLike<number>[]): Int32Array {
  const count = baseOrder.length;
  const columns = keys.map((column) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < count; i++) {
      const v = column[i]!;
      if (v !== Infinity) (lo = Math.min(lo, v)), (hi = Math.max(hi, v));
    }
    if (lo === Infinity) lo = hi = 0;
    return { lo, infinity: hi - lo + 1, size: hi - lo + 2 };
  });
  const packed = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    let p = 0;
    for (let c = 0; c < keys.length; c++) {
      const v = keys[c]![i]!;
      const col = columns[c]!;
      p = p * col.size + (v === Infinity ? col.infinity : v - col.lo);
    }
    packed[i] = p;
  }
  const buckets = new Int32Array(columns.reduce((n, c) => n * c.size, 1) + 1);
  for (let i = 0; i < count; i++) buckets[packed[i]! + 1]!++;
  for (let b = 1; b < buckets.length; b++) buckets[b]! += buckets[b - 1]!;
  const sorted = new Int32Array(count);
  for (const tile of baseOrder) sorted[buckets[packed[tile]!]!++] = tile;
  return sorted;
}

/** Tile indices sorted by a user's key (any numbers), ties kept in `baseOrder`. */
function sortTilesByKey(baseOrder: Int32Array, key: Float64Array): Int32Array {
  return Int32Array.from(baseOrder).sort((a, b) => key[a]! - key[b]!);
}

/** One table per rank, or one for all when they agree; coordinate arrays are shared between tables. */
function perRank(module: Module, indicesFor: (rank: number) => Int32Array): TileOrder {
  const coords = allTiles(module.kernel.grid);
  const orders = Array.from({ length: module.ranks }, (_, r) => indicesFor(r));
  const same = orders.every((o) => o.every((x, i) => x === orders[0]![i]));
  // Frozen here, each shared coordinate array once, so immer need not walk the tables entry by entry.
  coords.forEach((c) => Object.freeze(c));
  const table = (o: Int32Array) => Object.freeze(Array.from(o, (i) => coords[i]!));
  const tables = Object.freeze(orders.map(table));
  return Object.freeze(same ? { kind: 'table', tiles: tables[0]! } : { kind: 'rank-table', tables });
}

/** Row-major tile indices in the grouped order: the order inside one key. */
function groupedOrder(grid: readonly number[]): Int32Array {
  return Int32Array.from(scheduleTable({ kind: 'grouped', groupSize: 8 }, grid), (t) => t.reduce((at, x, axis) => at * grid[axis]! + x, 0));
}

export function chooseTileOrder(module: Module, options: ReorderOptions): TileOrder {
  const order = options.order ?? 'chunk-arrival';
  const groupSize = options.groupSize ?? 8;
  if (order === 'row-major' || order === 'column-major') return { kind: order };
  if (order === 'grouped') return { kind: 'grouped', groupSize };
  const base = groupedOrder(module.kernel.grid);
  if (typeof order === 'function') {
    const tiles = allTiles(module.kernel.grid);
    return perRank(module, (rank) => sortTilesByKey(base, Float64Array.from(tiles, (t) => order(t, rank))));
  }
  return perRank(module, (rank) => {
    const { step, chunk, sends } = tileArrivals(module, rank);
    // Within one chunk's tiles, the grouped order keeps the L2 reuse of the grouped schedule.
    return sortTilesByIntegerKeys(base, [step, chunk, sends]);
  });
}

export const reorderTiles: Pass = definePass(
  'reorder-tiles',
  'writes the tile order (options.order: row-major, column-major, grouped, chunk-arrival or a key function) into the tile scheduler',
  (module, ctx) => {
    const options = (ctx.options['reorder-tiles'] ?? {}) as ReorderOptions;
    const order = options.order ?? 'chunk-arrival';
    const valid = ['row-major', 'column-major', 'grouped', 'chunk-arrival'];
    if (typeof order !== 'function' && !valid.includes(order)) {
      return E.left([error('reorder/order', `unknown tile order '${String(order)}'; use ${valid.join(', ')} or a function`, { op: 'kernel' })]);
    }
    if (options.groupSize !== undefined && (!Number.isInteger(options.groupSize) || options.groupSize < 1)) {
      return E.left([error('reorder/order', `groupSize must be a positive integer, got ${options.groupSize}`, { op: 'kernel' })]);
    }
    const chosen = chooseTileOrder(module, options);
    return E.right(
      editModule(module, (draft) => {
        draft.kernel.scheduler.order = castDraft(chosen);
      }),
    );
  },
);
