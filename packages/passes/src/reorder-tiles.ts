/**
 * `reorder-tiles`: chooses the order in which workgroup tickets visit tiles, and writes it into the
 * kernel's tile scheduler. Orders: row-major, column-major, grouped (Triton's L2-friendly order),
 * chunk-arrival (per rank: tiles that need no chunk first, then tiles in the order their last chunk
 * arrives, the tiles of one chunk together; among those, tiles that complete early-step chunks
 * first, a reduce-add's destination tiles among them where both ends share a device), or a user
 * function giving each tile of each rank a key. Chunk-arrival comes out as
 * `segments` (boxes of tiles per rank) when the tiles of each key form boxes, as a table otherwise.
 */
import * as E from 'fp-ts/lib/Either.js';
import { castDraft } from 'immer';
import {
  cellGrid,
  cellRange,
  error,
  scheduleTable,
  tileCount,
  volume,
  type Box,
  type ChunkDecl,
  type Module,
  type TileOrder,
} from '@syncopate/ir';
import { alignChunks, allTiles, arrivalTiles, waiterOf } from './analysis/align.js';
import { definePass, editModule, type Pass } from './pass.js';
import { option, type OptionSchema } from './pass-options.js';

/** Lower keys run first; ties keep the grouped order (`groupSize`). */
export type TileKey = (tile: readonly number[], rank: number) => number;

export type TileOrderOption = 'row-major' | 'column-major' | 'grouped' | 'chunk-arrival' | TileKey;

export interface ReorderOptions {
  readonly order?: TileOrderOption;
  /** Rows of tiles per group for `grouped` (and inside a chunk for `chunk-arrival`); default 8. */
  readonly groupSize?: number;
  /**
   * Each rank's device, where the ranks are placed (default: all on one). Chunk-arrival counts a
   * reduce-add's destination tiles as producing it only within a device: between devices its bytes
   * leave once the source's tiles are done (a phase ends there) and the destination's own tiles need
   * only be done when they land, so the sending tiles go first.
   */
  readonly rankDevice?: readonly number[];
}

/** Row-major linear index of every point of `box` in a grid with row-major `strides`. */
function forEachIndexIn(box: Box, strides: readonly number[], visit: (index: number) => void): void {
  const walk = (axis: number, base: number) => {
    if (axis === box.lo.length) return visit(base);
    for (let x = box.lo[axis]!; x < box.hi[axis]!; x++) walk(axis + 1, base + x * strides[axis]!);
  };
  walk(0, 0);
}

function rowMajorStrides(sizes: readonly number[]): number[] {
  return sizes.map((_, i) => sizes.slice(i + 1).reduce((a, b) => a * b, 1));
}

/** A tile box that sets a chunk-arrival key: `last` for the tiles that wait for a chunk, `send` for those that arrive at one. */
interface KeyBox {
  readonly tiles: Box;
  readonly value: number;
}

/**
 * What the chunk-arrival keys need of the plan, computed once per module: chunks in arrival order,
 * the distinct steps, and per rank the tile boxes that set each key.
 */
interface ArrivalPlan {
  /** `place − 1` → plan index, for the chunks sorted by (step, plan index). */
  readonly byArrival: Int32Array;
  /** The chunks' distinct steps, ascending. */
  readonly steps: readonly number[];
  /** Per rank: for each chunk delivered there, the tiles that wait for it, with its place (1-based). */
  readonly waits: readonly KeyBox[][];
  /** Per rank: for each chunk it sends (or, a reduce-add, receives), the tiles that arrive at it, with the index of its step in `steps`. */
  readonly sends: readonly KeyBox[][];
}

/** Per module, per placement (`rankDevice` joined; '' for one device). */
const arrivalPlans = new WeakMap<Module, Map<string, ArrivalPlan>>();

function arrivalPlan(module: Module, rankDevice: readonly number[] = []): ArrivalPlan {
  const key = rankDevice.join();
  let plans = arrivalPlans.get(module);
  if (!plans) arrivalPlans.set(module, (plans = new Map()));
  const cached = plans.get(key);
  if (cached) return cached;
  const sameDevice = (a: number, b: number) => (rankDevice[a] ?? 0) === (rankDevice[b] ?? 0);
  const chunks = module.chunks;
  const byArrival = Int32Array.from(chunks.keys()).sort((a, b) => chunks[a]!.step - chunks[b]!.step || a - b);
  const place = new Map<ChunkDecl, number>();
  byArrival.forEach((c, i) => place.set(chunks[c]!, i + 1));
  const steps = [...new Set(chunks.map((c) => c.step))].sort((a, b) => a - b);
  const alignment = alignChunks(module);
  const waits = Array.from({ length: module.ranks }, (): KeyBox[] => []);
  for (const use of alignment.waits) waits[waiterOf(use)]?.push({ tiles: use.tiles, value: place.get(use.chunk)! });
  const sends = Array.from({ length: module.ranks }, (): KeyBox[] => []);
  for (const c of chunks) {
    const tiles = arrivalTiles(alignment, c);
    if (!tiles) continue;
    const value = steps.indexOf(c.step);
    sends[c.src]?.push({ tiles, value });
    // A reduce-add's part is ready only once the destination's own tiles over it are done too.
    if (c.kind === 'reduce-add' && c.backend !== 'peer-copy' && sameDevice(c.src, c.dst)) sends[c.dst]?.push({ tiles, value });
  }
  const plan = { byArrival, steps, waits, sends };
  plans.set(key, plan);
  return plan;
}

/**
 * A rank's chunk-arrival keys by cell. The grid is cut along each axis at every edge of the tile boxes
 * that set a key, so all tiles of a cell share their keys; GEMM chunks are bands of rows of tiles, so
 * a rank has a handful of cells rather than thousands of tiles, and never more cells than tiles.
 * `last` is the place in arrival order (1-based) of the chunk that arrives last for the cell's tiles,
 * 0 when they wait for none; `send` is the index in `steps` of the earliest step of a chunk they help
 * complete, `steps.length` when none.
 */
interface RankCells {
  /**
   * Per axis, the cells' edges in tile coordinates: 0 first, the grid's size last. As `Int32Array`s:
   * tile coordinates are small integers, and one array type keeps the code that reads them from being
   * recompiled when some arrive as doubles.
   */
  readonly edges: readonly Int32Array[];
  /** Cells per axis. */
  readonly sizes: readonly number[];
  /** Per cell, row-major over the cells. */
  readonly last: Int32Array;
  readonly send: Int32Array;
  /** Bounds on the keys: `last < lastSize`, `send < sendSize`. */
  readonly lastSize: number;
  readonly sendSize: number;
}

function rankCells(module: Module, rank: number, rankDevice?: readonly number[]): RankCells {
  const plan = arrivalPlan(module, rankDevice);
  const grid = module.kernel.grid;
  const waits = clipped(plan.waits[rank] ?? [], grid);
  const sends = clipped(plan.sends[rank] ?? [], grid);
  const boxes: Box[] = [];
  for (const k of waits) boxes.push(k.tiles);
  for (const k of sends) boxes.push(k.tiles);
  const cells = cellGrid({ lo: grid.map(() => 0), hi: [...grid] }, boxes);
  const strides = rowMajorStrides(cells.sizes);
  const last = new Int32Array(cells.count);
  const send = new Int32Array(cells.count).fill(plan.steps.length);
  for (const { tiles, value } of waits) {
    forEachIndexIn(cellRange(cells, tiles), strides, (at) => {
      if (value > last[at]!) last[at] = value;
    });
  }
  for (const { tiles, value } of sends) {
    forEachIndexIn(cellRange(cells, tiles), strides, (at) => {
      if (value < send[at]!) send[at] = value;
    });
  }
  const edges = cells.edges.map((e) => Int32Array.from(e));
  return { edges, sizes: cells.sizes, last, send, lastSize: module.chunks.length + 1, sendSize: plan.steps.length + 1 };
}

/** The boxes clipped to the grid, empty ones dropped: they set no tile's key. */
function clipped(keyed: readonly KeyBox[], grid: readonly number[]): KeyBox[] {
  const out: KeyBox[] = [];
  for (const k of keyed) {
    const { lo, hi } = k.tiles;
    let inside = true;
    for (let axis = 0; axis < grid.length; axis++) inside &&= lo[axis]! >= 0 && lo[axis]! < hi[axis]! && hi[axis]! <= grid[axis]!;
    if (inside) {
      out.push(k);
      continue;
    }
    const clippedLo = lo.map((x) => Math.max(0, x));
    const clippedHi = hi.map((x, axis) => Math.min(grid[axis]!, x));
    if (clippedLo.every((x, axis) => x < clippedHi[axis]!)) out.push({ tiles: { lo: clippedLo, hi: clippedHi }, value: k.value });
  }
  return out;
}

/** The cells' keys spread over the tiles (row-major index): the tile-by-tile form of `RankCells`. */
function tileKeys(cells: RankCells, grid: readonly number[]): { last: Int32Array; send: Int32Array } {
  // Per axis, each tile coordinate's cell.
  const cellAt = cells.edges.map((e, axis) => {
    const at = new Int32Array(grid[axis]!);
    for (let c = 0; c + 1 < e.length; c++) at.fill(c, e[c]!, e[c + 1]!);
    return at;
  });
  const strides = rowMajorStrides(cells.sizes);
  const n = tileCount(grid);
  const last = new Int32Array(n);
  const send = new Int32Array(n);
  const coord = new Int32Array(grid.length);
  for (let at = 0; at < n; at++) {
    let cell = 0;
    for (let axis = 0; axis < grid.length; axis++) cell += cellAt[axis]![coord[axis]!]! * strides[axis]!;
    last[at] = cells.last[cell]!;
    send[at] = cells.send[cell]!;
    for (let axis = grid.length - 1; axis >= 0 && ++coord[axis]! === grid[axis]!; axis--) coord[axis] = 0;
  }
  return { last, send };
}

/**
 * Per rank and tile (row-major linear index): the step after which the tile has all its chunks (0: it
 * needs none), the plan index of the chunk that arrives last for it (−1: none), and the earliest step
 * of a chunk it helps complete (Infinity: none), so that producers of early chunks run early.
 */
export function tileArrivals(module: Module, rank: number, rankDevice?: readonly number[]): { step: Int32Array; chunk: Int32Array; sends: Float64Array } {
  const plan = arrivalPlan(module, rankDevice);
  const { last, send } = tileKeys(rankCells(module, rank, rankDevice), module.kernel.grid);
  const chunk = Int32Array.from(last, (place) => (place === 0 ? -1 : plan.byArrival[place - 1]!));
  const step = Int32Array.from(chunk, (c) => (c < 0 ? 0 : module.chunks[c]!.step + 1));
  const sends = Float64Array.from(send, (r) => plan.steps[r] ?? Infinity);
  return { step, chunk, sends };
}

/** A column of small integer keys, each in `[0, size)`. */
interface KeyColumn {
  readonly values: Int32Array;
  readonly size: number;
}

/**
 * Tile indices sorted by integer key columns (lexicographic, lower first), ties kept in `baseOrder`:
 * a radix sort, one stable counting pass per column from the last, so linear in tiles and key sizes.
 */
function sortTilesByKeyColumns(baseOrder: Int32Array, columns: readonly KeyColumn[]): Int32Array {
  let order = baseOrder;
  for (let c = columns.length - 1; c >= 0; c--) {
    const { values, size } = columns[c]!;
    const start = new Int32Array(size + 1);
    for (let i = 0; i < order.length; i++) start[values[order[i]!]! + 1]!++;
    for (let b = 1; b <= size; b++) start[b]! += start[b - 1]!;
    const next = new Int32Array(order.length);
    for (let i = 0; i < order.length; i++) {
      const tile = order[i]!;
      next[start[values[tile]!]!++] = tile;
    }
    order = next;
  }
  return order;
}

/**
 * The tiles of each key (`last`, then `send`) as boxes, in key order: a key's tiles are cut into runs of
 * consecutive cell rows (a ring reduce-scatter's rank sends one shard and receives the one before it,
 * two bands that wrap around the grid), each run one box, in row order; undefined as soon as some run
 * is not a whole box (fewer tiles than its bounding box holds). One pass over the cells.
 */
function keyBoxes(cells: RankCells): Box[] | undefined {
  const { edges, sizes, last, send, sendSize } = cells;
  interface Run {
    tiles: number;
    readonly lo: number[];
    readonly hi: number[];
    lastRow: number;
  }
  const runs = new Map<number, Run[]>();
  const coord = new Int32Array(sizes.length);
  for (let at = 0; at < last.length; at++) {
    const key = last[at]! * sendSize + send[at]!;
    let keyRuns = runs.get(key);
    if (keyRuns === undefined) runs.set(key, (keyRuns = []));
    let run = keyRuns[keyRuns.length - 1];
    // Cells come row by row: a key's cell more than one row after its run's last row starts a new run.
    if (run === undefined || coord[0]! > run.lastRow + 1) {
      // Bounds start at the grid's far corner and its origin: small integers keep the arrays unboxed.
      keyRuns.push((run = { tiles: 0, lo: Array.from(edges, (e) => e[e.length - 1]!), hi: Array.from(edges, () => 0), lastRow: coord[0]! }));
    }
    run.lastRow = coord[0]!;
    let tiles = 1;
    for (let axis = 0; axis < sizes.length; axis++) {
      const from = edges[axis]![coord[axis]!]!;
      const to = edges[axis]![coord[axis]! + 1]!;
      tiles *= to - from;
      run.lo[axis] = Math.min(run.lo[axis]!, from);
      run.hi[axis] = Math.max(run.hi[axis]!, to);
    }
    run.tiles += tiles;
    for (let axis = sizes.length - 1; axis >= 0 && ++coord[axis]! === sizes[axis]!; axis--) coord[axis] = 0;
  }
  const boxes: Box[] = [];
  for (const key of [...runs.keys()].sort((a, b) => a - b)) {
    for (const { tiles, lo, hi } of runs.get(key)!) {
      const box = { lo, hi };
      if (volume(box) !== tiles) return undefined;
      boxes.push(box);
    }
  }
  return boxes;
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

/**
 * Each rank's boxes as one order: `grouped` when every rank has one box, the whole grid (the same
 * tiles in the same order); otherwise `segments`, ranks that agree sharing one frozen list.
 */
function segmentOrder(perRankBoxes: readonly Box[][], groupSize: number): TileOrder {
  if (perRankBoxes.every((boxes) => boxes.length === 1)) return Object.freeze({ kind: 'grouped', groupSize });
  const lists: (readonly Box[])[] = [];
  const ranks = perRankBoxes.map((boxes) => {
    const same = lists.find((list) => list.length === boxes.length && list.every((b, i) => sameBounds(b, boxes[i]!)));
    if (same) return same;
    const list = Object.freeze(boxes.map((b) => Object.freeze({ lo: Object.freeze(b.lo), hi: Object.freeze(b.hi) })));
    lists.push(list);
    return list;
  });
  return Object.freeze({ kind: 'segments', groupSize, ranks: Object.freeze(ranks) });
}

/** The same bounds (the boxes here are never empty, so that is the same tiles). */
function sameBounds(a: Box, b: Box): boolean {
  return a.lo.every((x, i) => x === b.lo[i]) && a.hi.every((x, i) => x === b.hi[i]);
}

/** Row-major tile indices in the grouped order: the order inside one key. */
function groupedOrder(grid: readonly number[], groupSize: number): Int32Array {
  return Int32Array.from(scheduleTable({ kind: 'grouped', groupSize }, grid), (t) => t.reduce((at, x, axis) => at * grid[axis]! + x, 0));
}

/**
 * The order `options` asks for. Chunk-arrival sorts each rank's tiles by (the chunk that arrives last
 * for the tile, the earliest step of a chunk it helps complete). Where, on every rank, the tiles of
 * each key form a box, as when chunks are whole rows of tiles, the order is written as `segments`:
 * those boxes in key order, each walked in the grouped order of `groupSize` counted from the box's
 * first row, so neither building nor checking it goes tile by tile (ranks with the same boxes share
 * one list; when every rank's one box is the whole grid, it is just `grouped`). Otherwise it is written
 * tile by tile, ties kept in the grouped order of the whole grid (`rank-table`, or `table` when all
 * ranks agree). The two agree wherever each box's rows start at a multiple of `groupSize` or fit in
 * one band of it, as the benchmarks' shards do.
 */
export function chooseTileOrder(module: Module, options: ReorderOptions): TileOrder {
  const order = options.order ?? 'chunk-arrival';
  const groupSize = options.groupSize ?? 8;
  if (order === 'row-major' || order === 'column-major') return { kind: order };
  if (order === 'grouped') return { kind: 'grouped', groupSize };
  const grid = module.kernel.grid;
  if (typeof order === 'function') {
    const tiles = allTiles(grid);
    const base = groupedOrder(grid, groupSize);
    return perRank(module, (rank) => sortTilesByKey(base, Float64Array.from(tiles, (t) => order(t, rank))));
  }
  const cells = Array.from({ length: module.ranks }, (_, rank) => rankCells(module, rank, options.rankDevice));
  const boxes: Box[][] = [];
  for (const rankCells of cells) {
    const rankBoxes = keyBoxes(rankCells);
    if (!rankBoxes) break;
    boxes.push(rankBoxes);
  }
  if (boxes.length === module.ranks) return segmentOrder(boxes, groupSize);
  // Within one chunk's tiles, the grouped order keeps the L2 reuse of the grouped schedule.
  const base = groupedOrder(grid, groupSize);
  return perRank(module, (rank) => {
    const { lastSize, sendSize } = cells[rank]!;
    const { last, send } = tileKeys(cells[rank]!, grid);
    return sortTilesByKeyColumns(base, [
      { values: last, size: lastSize },
      { values: send, size: sendSize },
    ]);
  });
}

const reorderOptionFields: OptionSchema<ReorderOptions> = {
  order: option.either(option.oneOf('row-major', 'column-major', 'grouped', 'chunk-arrival'), option.function<TileKey>()),
  groupSize: option.integer(1),
  rankDevice: option.list(option.integer(0)),
};

export const reorderTiles: Pass = definePass(
  'reorder-tiles',
  'writes the tile order (options.order: row-major, column-major, grouped, chunk-arrival or a key function) into the tile scheduler',
  reorderOptionFields,
  (module, _ctx, options) => {
    // Each field's kind is checked against reorderOptionFields before this runs; how many ranks
    // rankDevice must cover depends on the module.
    const placed = options.rankDevice;
    if (placed !== undefined && placed.length !== module.ranks) {
      return E.left([error('reorder/order', `rankDevice [${placed.join(', ')}] must give a device index >= 0 for each of the ${module.ranks} ranks`, { op: 'kernel' })]);
    }
    const chosen = chooseTileOrder(module, options);
    return E.right(
      editModule(module, (draft) => {
        draft.kernel.scheduler.order = castDraft(chosen);
      }),
    );
  },
);
