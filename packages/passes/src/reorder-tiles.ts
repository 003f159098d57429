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

/**
 * Per rank and tile (indexed like `allTiles(grid)`): the step after which the tile has all its
 * chunks (0: it needs none), the plan index of the chunk that arrives last for it (−1: none), and the
 * earliest step of a chunk it helps complete (Infinity: none), so that producers of early chunks run early.
 */
export function tileArrivals(module: Module, rank: number): { step: number[]; chunk: number[]; sends: number[] } {
  const grid = module.kernel.grid;
  const tiles = allTiles(grid);
  const step = tiles.map(() => 0);
  const chunk = tiles.map(() => -1);
  const sends = tiles.map(() => Infinity);
  const strides = grid.map((_, i) => grid.slice(i + 1).reduce((a, b) => a * b, 1));
  const forEachTile = (box: Box, visit: (at: number) => void) => {
    for (const t of allTiles(box.hi.map((h, i) => h - box.lo[i]!))) visit(t.reduce((s, x, i) => s + (x + box.lo[i]!) * strides[i]!, 0));
  };
  const alignment = alignChunks(module);
  for (const use of alignment.waits) {
    if (use.chunk.dst !== rank) continue;
    const arrival = use.chunk.step + 1;
    const planIndex = module.chunks.indexOf(use.chunk);
    forEachTile(use.tiles, (at) => {
      if (arrival > step[at]! || (arrival === step[at] && planIndex > chunk[at]!)) {
        step[at] = arrival;
        chunk[at] = planIndex;
      }
    });
  }
  for (const c of module.chunks) {
    const box = c.src === rank ? arrivalTiles(alignment, c) : undefined;
    if (box) forEachTile(box, (at) => (sends[at] = Math.min(sends[at]!, c.step)));
  }
  return { step, chunk, sends };
}

function sortedTable(module: Module, key: (tileIndex: number, base: number) => number[]): number[][] {
  const tiles = allTiles(module.kernel.grid);
  const base = new Map(scheduleTable({ kind: 'grouped', groupSize: 8 }, module.kernel.grid).map((t, i) => [t.join(), i]));
  const order = tiles.map((_, i) => i);
  const keys = tiles.map((t, i) => key(i, base.get(t.join())!));
  order.sort((a, b) => {
    const ka = keys[a]!;
    const kb = keys[b]!;
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
    return a - b;
  });
  return order.map((i) => tiles[i]!);
}

/** One table per rank, or one for all when they agree. */
function perRank(module: Module, tableFor: (rank: number) => number[][]): TileOrder {
  const tables = Array.from({ length: module.ranks }, (_, r) => tableFor(r));
  const same = tables.every((t) => t.map(String).join('|') === tables[0]!.map(String).join('|'));
  return same ? { kind: 'table', tiles: tables[0]! } : { kind: 'rank-table', tables };
}

export function chooseTileOrder(module: Module, options: ReorderOptions): TileOrder {
  const order = options.order ?? 'chunk-arrival';
  const groupSize = options.groupSize ?? 8;
  if (order === 'row-major' || order === 'column-major') return { kind: order };
  if (order === 'grouped') return { kind: 'grouped', groupSize };
  if (typeof order === 'function') {
    const tiles = allTiles(module.kernel.grid);
    return perRank(module, (rank) => sortedTable(module, (i) => [order(tiles[i]!, rank)]));
  }
  return perRank(module, (rank) => {
    const { step, chunk, sends } = tileArrivals(module, rank);
    // Within one chunk's tiles, the grouped order keeps the L2 reuse of the grouped schedule.
    return sortedTable(module, (i, base) => [step[i]!, chunk[i]!, sends[i]!, base]);
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
