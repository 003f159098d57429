/**
 * The tile scheduler as data: which tile of the grid the workgroup holding linear ticket `t` computes.
 *
 * - `row-major`: the last grid axis runs fastest, so all tiles of row 0 (program_id 0 = 0) come first.
 * - `column-major`: the first grid axis runs fastest.
 * - `grouped(G)`: Triton's grouped ordering for L2 reuse on a 2-D grid: bands of G rows of tiles,
 *   each band walked column by column (down a column first). Other ranks fall back to row-major.
 * - `table`: the listed tiles, one per ticket.
 * - `rank-table`: one such table per rank (ranks whose chunks arrive in different orders); functions
 *   that map tickets take the `rank` for it, and for `segments`, and ignore it for every other order.
 * - `segments`: per rank, boxes of tiles that partition the grid, visited one after another; inside a
 *   box, `grouped(G)` in box-local coordinates (row-major inside the box when the grid is not 2-D).
 */
import { cellGrid, cellRange, formatBox, intersect, volume } from './box.js';
import type { Box, TileOrder, TileScheduler } from './types.js';

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
    case 'segments':
      return segmentTile(order.groupSize, rankSegments(order.ranks, rank), grid, ticket);
  }
}

/** The boxes of `rank` in a `segments` order. */
function rankSegments(ranks: readonly (readonly Box[])[], rank: number | undefined): readonly Box[] {
  if (rank === undefined) throw new RangeError('a segments tile order needs the rank whose tiles to look up');
  const boxes = Number.isInteger(rank) ? ranks[rank] : undefined;
  if (boxes === undefined) throw new RangeError(`rank ${rank} has no segments (the order lists ${ranks.length})`);
  return boxes;
}

/** The tile of `ticket`: the box it falls in, then its place inside that box. */
function segmentTile(groupSize: number, boxes: readonly Box[], grid: readonly number[], ticket: number): number[] {
  const sizeProblem = groupSizeProblem('segments', groupSize);
  if (sizeProblem !== undefined) throw new RangeError(sizeProblem);
  let first = 0;
  for (const [index, b] of boxes.entries()) {
    const problem = segmentProblem(b, index, grid);
    if (problem !== undefined) throw new RangeError(problem);
    const size = volume(b);
    if (ticket < first + size) return inBox(groupSize, b, ticket - first);
    first += size;
  }
  throw new RangeError(`the segments cover ${first} tiles, so ticket ${ticket} has none`);
}

/** Tile `t` of box `b` in the order a segment visits it. */
function inBox(groupSize: number, b: Box, t: number): number[] {
  const sizes = b.lo.map((lo, axis) => b.hi[axis]! - lo);
  const local = sizes.length === 2 ? grouped(groupSize, sizes, t) : rowMajor(sizes, t);
  return local.map((x, axis) => x + b.lo[axis]!);
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
  if (order.kind === 'segments') {
    // Box by box: looking each ticket's box up would cost a pass over the boxes per tile.
    return rankSegments(order.ranks, rank).flatMap((b) => Array.from({ length: volume(b) }, (_, t) => inBox(order.groupSize, b, t)));
  }
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
 * table that is not a permutation of the grid's tiles, segments that do not partition the grid, or
 * (given `ranks`) a rank-table or segments order without exactly one entry per rank. A segments order
 * costs time in its boxes, not its tiles.
 */
export function validateOrder(order: TileOrder, grid: readonly number[], ranks?: number): string | undefined {
  switch (order.kind) {
    case 'row-major':
    case 'column-major':
      return undefined;
    case 'grouped':
      return groupSizeProblem('grouped', order.groupSize);
    case 'table':
      return validateTable(order.tiles, grid);
    case 'rank-table':
      return validateRankTables(order.tables, grid, ranks);
    case 'segments':
      return validateSegments(order.groupSize, order.ranks, grid, ranks);
  }
}

function groupSizeProblem(kind: string, groupSize: number): string | undefined {
  return Number.isInteger(groupSize) && groupSize >= 1
    ? undefined
    : `${kind} tile order needs a group size that is an integer >= 1, got ${groupSize}`;
}

function validateSegments(
  groupSize: number,
  segments: readonly (readonly Box[])[],
  grid: readonly number[],
  ranks: number | undefined,
): string | undefined {
  const problem = groupSizeProblem('segments', groupSize);
  if (problem !== undefined) return problem;
  if (ranks !== undefined && segments.length !== ranks) {
    return `segments tile order has ${segments.length} lists of segments, but the module has ${ranks} ranks`;
  }
  // Ranks that agree often share one list: check it once.
  const valid = new Set<readonly Box[]>();
  for (const [rank, boxes] of segments.entries()) {
    if (valid.has(boxes)) continue;
    const problem = validateSegmentList(boxes, grid);
    if (problem !== undefined) return `rank ${rank}: ${problem}`;
    valid.add(boxes);
  }
  return undefined;
}

/** A segment must be a nonempty box of integer tile coordinates inside the grid. */
function segmentProblem(b: Box, index: number, grid: readonly number[]): string | undefined {
  const gridText = () => `grid [${grid.join(', ')}]`;
  if (b.lo.length !== grid.length || b.hi.length !== grid.length) {
    return `segment ${index} ${formatBox(b)} has ${Math.max(b.lo.length, b.hi.length)} axes, but the ${gridText()} has ${grid.length}`;
  }
  for (let axis = 0; axis < grid.length; axis++) {
    const lo = b.lo[axis]!;
    const hi = b.hi[axis]!;
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && lo < hi && hi <= grid[axis]!)) {
      return `segment ${index} ${formatBox(b)} is empty or not inside the ${gridText()}`;
    }
  }
  return undefined;
}

/**
 * The boxes partition the grid: each inside it, no two sharing a tile, their volumes adding up to the
 * grid's. A few boxes (a compact order) are compared pair by pair; many, over the cells their edges cut
 * the grid into (never more than the tiles), each box marking its cells, a cell marked twice an overlap.
 */
function validateSegmentList(boxes: readonly Box[], grid: readonly number[]): string | undefined {
  for (const [index, b] of boxes.entries()) {
    const problem = segmentProblem(b, index, grid);
    if (problem !== undefined) return problem;
  }
  const n = tileCount(grid);
  const clash = boxes.length <= 32 ? overlapByPairs(boxes) : overlapByCells(boxes, grid);
  if (clash !== undefined) {
    const [i, j] = clash;
    const [first, second] = [boxes[i]!, boxes[j]!];
    return `segments ${i} ${formatBox(first)} and ${j} ${formatBox(second)} share the tiles ${formatBox(intersect(first, second)!)}`;
  }
  const covered = boxes.reduce((sum, b) => sum + volume(b), 0);
  if (covered === n) return undefined;
  return `segments cover ${covered} of the ${n} tiles of the grid [${grid.join(', ')}]; tile ${formatTile(firstMissing(boxes, grid))} is missing`;
}

/** The first tile (row-major over the cells) that no box holds; there is one. */
function firstMissing(boxes: readonly Box[], grid: readonly number[]): number[] {
  const { cells, strides, owner } = markedCells(boxes, grid);
  let rest = owner.indexOf(-1);
  return strides.map((stride, axis) => {
    const at = Math.floor(rest / stride);
    rest -= at * stride;
    return cells.edges[axis]![at]!;
  });
}

/** The first pair of boxes that share a point, as indices; the boxes have the grid's rank. */
function overlapByPairs(boxes: readonly Box[]): [number, number] | undefined {
  for (let j = 1; j < boxes.length; j++) {
    const b = boxes[j]!;
    for (let i = 0; i < j; i++) {
      const a = boxes[i]!;
      let disjoint = false;
      for (let axis = 0; axis < a.lo.length && !disjoint; axis++) {
        disjoint = Math.max(a.lo[axis]!, b.lo[axis]!) >= Math.min(a.hi[axis]!, b.hi[axis]!);
      }
      if (!disjoint) return [i, j];
    }
  }
  return undefined;
}

/** The same, over the cells: each box marks its cells, and stops at one marked already. */
function overlapByCells(boxes: readonly Box[], grid: readonly number[]): [number, number] | undefined {
  return markedCells(boxes, grid).clash;
}

/** The grid's cells for `boxes`, each marked with the box that holds it (−1: none), up to the first clash. */
function markedCells(boxes: readonly Box[], grid: readonly number[]) {
  const cells = cellGrid({ lo: grid.map(() => 0), hi: [...grid] }, boxes);
  const strides = cells.sizes.map((_, axis) => cells.sizes.slice(axis + 1).reduce((a, b) => a * b, 1));
  const owner = new Int32Array(cells.count).fill(-1);
  for (const [j, b] of boxes.entries()) {
    const i = markCells(cellRange(cells, b), strides, owner, j);
    if (i !== undefined) return { cells, strides, owner, clash: [i, j] as [number, number] };
  }
  return { cells, strides, owner, clash: undefined };
}

/** Marks the cells of `range` (cell indices) as `j`'s; stops at a cell already marked, returning its owner. */
function markCells(range: Box, strides: readonly number[], owner: Int32Array, j: number): number | undefined {
  const walk = (axis: number, base: number): number | undefined => {
    if (axis === range.lo.length) {
      const earlier = owner[base]!;
      owner[base] = j;
      return earlier >= 0 ? earlier : undefined;
    }
    for (let x = range.lo[axis]!; x < range.hi[axis]!; x++) {
      const clash = walk(axis + 1, base + x * strides[axis]!);
      if (clash !== undefined) return clash;
    }
    return undefined;
  };
  return walk(0, 0);
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
