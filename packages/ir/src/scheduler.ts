/**
 * The tile scheduler as data: which tile of the grid the workgroup holding linear ticket `t` computes.
 *
 * - `row-major`: the last grid axis runs fastest, so all tiles of row 0 (program_id 0 = 0) come first.
 * - `column-major`: the first grid axis runs fastest.
 * - `grouped(G)`: Triton's grouped ordering for L2 reuse on a 2-D grid: bands of G rows of tiles,
 *   each band walked column by column (down a column first). Other ranks fall back to row-major.
 * - `table`: the listed tiles, one per ticket.
 * - `rank-table`: one such table per rank (ranks whose chunks arrive in different orders); functions
 *   that map tickets take the `rank` for it, and ignore it for every other order.
 */
import type { TileOrder, TileScheduler } from './types.js';

/** The number of tiles (and tickets) of `grid`. */
export function tileCount(grid: readonly number[]): number {
  return grid.reduce((n, d) => n * d, 1);
}

/** `(1, 0)`: a tile's coordinates as messages print them. */
export function formatTile(tile: readonly number[]): string {
  return `(${tile.join(', ')})`;
}

function orderOf(s: TileScheduler | TileOrder): TileOrder {
  return 'order' in s ? s.order : s;
}

/** The tile coordinates that `ticket` (in `[0, tileCount(grid))`) visits under `s` on `rank`. */
export function tileAt(s: TileScheduler | TileOrder, grid: readonly number[], ticket: number, rank?: number): number[] {
  const n = tileCount(grid);
  if (!Number.isInteger(ticket) || ticket < 0 || ticket >= n) {
    throw new RangeError(`ticket ${ticket} is outside [0, ${n}) for grid [${grid.join(', ')}]`);
  }
  const order = orderOf(s);
  switch (order.kind) {
    case 'row-major':
      return rowMajor(grid, ticket);
    case 'column-major':
      return columnMajor(grid, ticket);
    case 'grouped':
      return grouped(order.groupSize, grid, ticket);
    case 'table':
      return tableEntry(order.tiles, grid, ticket);
    case 'rank-table':
      return tableEntry(rankTable(order.tables, rank), grid, ticket);
  }
}

/** The table of `rank` in a `rank-table` order. */
function rankTable(tables: readonly (readonly (readonly number[])[])[], rank: number | undefined): readonly (readonly number[])[] {
  if (rank === undefined) throw new RangeError('a rank-table tile order needs the rank whose tiles to look up');
  const table = Number.isInteger(rank) ? tables[rank] : undefined;
  if (table === undefined) throw new RangeError(`rank ${rank} has no tile table (the order lists ${tables.length})`);
  return table;
}

/** The tile of every ticket `0..n-1` on `rank`, in ticket order; throws if the order is invalid. */
export function scheduleTable(s: TileScheduler | TileOrder, grid: readonly number[], rank?: number): number[][] {
  const order = orderOf(s);
  const problem = validateOrder(order, grid);
  if (problem !== undefined) throw new RangeError(problem);
  if (order.kind === 'rank-table') rankTable(order.tables, rank);
  return Array.from({ length: tileCount(grid) }, (_, t) => tileAt(order, grid, t, rank));
}

/** Last axis fastest. */
function rowMajor(grid: readonly number[], ticket: number): number[] {
  const tile = new Array<number>(grid.length);
  let t = ticket;
  for (let axis = grid.length - 1; axis >= 0; axis--) {
    tile[axis] = t % grid[axis]!;
    t = Math.floor(t / grid[axis]!);
  }
  return tile;
}

/** First axis fastest. */
function columnMajor(grid: readonly number[], ticket: number): number[] {
  let t = ticket;
  return grid.map((d) => {
    const c = t % d;
    t = Math.floor(t / d);
    return c;
  });
}

/** Exactly the formula of Triton's matmul tutorial (`GROUP_SIZE_M`). */
function grouped(groupSize: number, grid: readonly number[], ticket: number): number[] {
  if (!Number.isInteger(groupSize) || groupSize < 1) {
    throw new RangeError(`grouped tile order needs a group size that is an integer >= 1, got ${groupSize}`);
  }
  if (grid.length !== 2) return rowMajor(grid, ticket);
  const [m, n] = grid as readonly [number, number];
  const tilesPerGroup = groupSize * n;
  const firstRow = Math.floor(ticket / tilesPerGroup) * groupSize;
  const rows = Math.min(m - firstRow, groupSize);
  const inGroup = ticket % tilesPerGroup;
  return [firstRow + (inGroup % rows), Math.floor(inGroup / rows)];
}

/** One table entry, checked on its own (`scheduleTable` checks the whole table is a permutation). */
function tableEntry(tiles: readonly (readonly number[])[], grid: readonly number[], ticket: number): number[] {
  const tile = tiles[ticket];
  if (tile === undefined) throw new RangeError(`tile table has no entry for ticket ${ticket}`);
  const problem = entryProblem(tile, ticket, grid);
  if (problem !== undefined) throw new RangeError(problem);
  return [...tile];
}

function entryProblem(tile: readonly number[], ticket: number, grid: readonly number[]): string | undefined {
  if (tile.length !== grid.length) {
    return `tile table entry ${ticket} ${formatTile(tile)} has ${tile.length} coordinates, but the grid [${grid.join(', ')}] has ${grid.length} axes`;
  }
  if (!tile.every((c, axis) => Number.isInteger(c) && c >= 0 && c < grid[axis]!)) {
    return `tile table entry ${ticket} ${formatTile(tile)} is outside the grid [${grid.join(', ')}]`;
  }
  return undefined;
}

/**
 * Why `order` is not a valid schedule for `grid`, or undefined when it is: a group size below 1, a
 * table that is not a permutation of the grid's tiles, or (given `ranks`) a rank-table without
 * exactly one table per rank.
 */
export function validateOrder(order: TileOrder, grid: readonly number[], ranks?: number): string | undefined {
  switch (order.kind) {
    case 'row-major':
    case 'column-major':
      return undefined;
    case 'grouped':
      return Number.isInteger(order.groupSize) && order.groupSize >= 1
        ? undefined
        : `grouped tile order needs a group size that is an integer >= 1, got ${order.groupSize}`;
    case 'table':
      return validateTable(order.tiles, grid);
    case 'rank-table':
      return validateRankTables(order.tables, grid, ranks);
  }
}

function validateRankTables(
  tables: readonly (readonly (readonly number[])[])[],
  grid: readonly number[],
  ranks: number | undefined,
): string | undefined {
  if (ranks !== undefined && tables.length !== ranks) {
    return `rank-table tile order has ${tables.length} tables, but the module has ${ranks} ranks`;
  }
  for (const [rank, table] of tables.entries()) {
    const problem = validateTable(table, grid);
    if (problem !== undefined) return `rank ${rank}: ${problem}`;
  }
  return undefined;
}

function validateTable(tiles: readonly (readonly number[])[], grid: readonly number[]): string | undefined {
  const gridText = `grid [${grid.join(', ')}]`;
  // Tickets by row-major tile index: tables are long (every tile of every rank), so no string keys.
  const seen = new Int32Array(tileCount(grid)).fill(-1);
  for (const [ticket, tile] of tiles.entries()) {
    const problem = entryProblem(tile, ticket, grid);
    if (problem !== undefined) return problem;
    const index = tile.reduce((at, x, axis) => at * grid[axis]! + x, 0);
    const earlier = seen[index]!;
    if (earlier >= 0) return `tile table lists tile ${formatTile(tile)} twice (tickets ${earlier} and ${ticket})`;
    seen[index] = ticket;
  }
  // Distinct in-range tiles: the table is a permutation unless some tile is missing.
  const n = tileCount(grid);
  if (tiles.length === n) return undefined;
  const missing = rowMajorTiles(grid).find((_, index) => seen[index]! < 0);
  return `tile table has ${tiles.length} entries for the ${n} tiles of the ${gridText}; tile ${formatTile(missing ?? [])} is missing`;
}

function rowMajorTiles(grid: readonly number[]): number[][] {
  return Array.from({ length: tileCount(grid) }, (_, t) => rowMajor(grid, t));
}
