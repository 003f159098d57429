import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scheduleTable, tileAt, tileCount, validateOrder, type TileOrder } from '../src/index.js';

const rowMajor: TileOrder = { kind: 'row-major' };
const columnMajor: TileOrder = { kind: 'column-major' };
const grouped = (groupSize: number): TileOrder => ({ kind: 'grouped', groupSize });
const table = (tiles: number[][]): TileOrder => ({ kind: 'table', tiles });

describe('tile scheduler', () => {
  it('counts tiles', () => {
    expect(tileCount([4, 3])).toBe(12);
    expect(tileCount([5])).toBe(5);
    expect(tileCount([2, 3, 4])).toBe(24);
  });

  it('row-major: the last axis runs fastest (row 0 of tiles first)', () => {
    expect(scheduleTable(rowMajor, [2, 3])).toEqual([
      [0, 0], [0, 1], [0, 2],
      [1, 0], [1, 1], [1, 2],
    ]);
    expect(scheduleTable(rowMajor, [3])).toEqual([[0], [1], [2]]);
    expect(tileAt(rowMajor, [2, 2, 3], 7)).toEqual([1, 0, 1]);
  });

  it('column-major: the first axis runs fastest', () => {
    expect(scheduleTable(columnMajor, [2, 3])).toEqual([
      [0, 0], [1, 0],
      [0, 1], [1, 1],
      [0, 2], [1, 2],
    ]);
    expect(tileAt(columnMajor, [2, 2, 3], 7)).toEqual([1, 1, 1]);
  });

  it("grouped: bands of G rows, each walked down its columns (Triton's formula)", () => {
    expect(scheduleTable(grouped(2), [4, 3])).toEqual([
      [0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2],
      [2, 0], [3, 0], [2, 1], [3, 1], [2, 2], [3, 2],
    ]);
    // The last band holds fewer rows than G.
    expect(scheduleTable(grouped(2), [3, 2])).toEqual([[0, 0], [1, 0], [0, 1], [1, 1], [2, 0], [2, 1]]);
    // G = 1 is row-major; G >= rows is column-major.
    expect(scheduleTable(grouped(1), [3, 4])).toEqual(scheduleTable(rowMajor, [3, 4]));
    expect(scheduleTable(grouped(8), [3, 4])).toEqual(scheduleTable(columnMajor, [3, 4]));
  });

  it('grouped falls back to row-major on grids that are not 2-D', () => {
    expect(scheduleTable(grouped(2), [5])).toEqual(scheduleTable(rowMajor, [5]));
    expect(scheduleTable(grouped(2), [2, 3, 2])).toEqual(scheduleTable(rowMajor, [2, 3, 2]));
  });

  it('table: the listed tiles; takes a TileScheduler too', () => {
    const order = table([[1, 1], [0, 0], [1, 0], [0, 1]]);
    expect(scheduleTable(order, [2, 2])).toEqual([[1, 1], [0, 0], [1, 0], [0, 1]]);
    expect(tileAt({ order }, [2, 2], 2)).toEqual([1, 0]);
  });

  it('rank-table: one table per rank, picked by the rank argument', () => {
    const order: TileOrder = { kind: 'rank-table', tables: [[[0], [1]], [[1], [0]]] };
    expect(scheduleTable(order, [2], 0)).toEqual([[0], [1]]);
    expect(scheduleTable(order, [2], 1)).toEqual([[1], [0]]);
    expect(tileAt(order, [2], 0, 1)).toEqual([1]);
    expect(() => tileAt(order, [2], 0)).toThrow(/needs the rank/);
    expect(() => scheduleTable(order, [2], 2)).toThrow(/rank 2 has no tile table/);
    expect(validateOrder(order, [2], 2)).toBeUndefined();
    expect(validateOrder(order, [2], 3)).toMatch(/2 tables, but the module has 3 ranks/);
    expect(validateOrder({ kind: 'rank-table', tables: [[[0], [1]], [[1], [1]]] }, [2])).toMatch(/^rank 1: .*twice/);
  });

  it('rejects tickets outside the grid', () => {
    expect(() => tileAt(rowMajor, [2, 2], 4)).toThrow(RangeError);
    expect(() => tileAt(rowMajor, [2, 2], -1)).toThrow(RangeError);
    expect(() => tileAt(rowMajor, [2, 2], 1.5)).toThrow(RangeError);
  });
});

describe('validateOrder', () => {
  it('accepts the built-in orders and a permutation table', () => {
    expect(validateOrder(rowMajor, [2, 2])).toBeUndefined();
    expect(validateOrder(columnMajor, [2, 2])).toBeUndefined();
    expect(validateOrder(grouped(3), [2, 2])).toBeUndefined();
    expect(validateOrder(table([[0, 1], [1, 1], [0, 0], [1, 0]]), [2, 2])).toBeUndefined();
  });

  it('rejects a group size below 1 or not an integer', () => {
    expect(validateOrder(grouped(0), [2, 2])).toMatch(/group size/);
    expect(validateOrder(grouped(1.5), [2, 2])).toMatch(/group size/);
    expect(() => tileAt(grouped(0), [2, 2], 0)).toThrow(RangeError);
  });

  it('says what is wrong with a table', () => {
    expect(validateOrder(table([[0, 0], [1, 0], [0, 1]]), [2, 2])).toMatch(/3 entries for the 4 tiles.*tile \(1, 1\) is missing/);
    expect(validateOrder(table([[0, 0], [1, 0], [0, 1], [1, 0]]), [2, 2])).toMatch(/tile \(1, 0\) twice \(tickets 1 and 3\)/);
    expect(validateOrder(table([[0, 0], [1, 0], [0, 1], [2, 1]]), [2, 2])).toMatch(/entry 3 \(2, 1\) is outside the grid \[2, 2\]/);
    expect(validateOrder(table([[0, 0], [1], [0, 1], [1, 1]]), [2, 2])).toMatch(/entry 1 \(1\) has 1 coordinates, but the grid \[2, 2\] has 2 axes/);
    expect(validateOrder(table([[0, 0], [1, 0], [0, 1], [1, 1], [1, 1]]), [2, 2])).toMatch(/twice/);
    expect(() => scheduleTable(table([[0, 0]]), [2, 2])).toThrow(RangeError);
  });
});

describe('every order is a permutation of the grid', () => {
  const gridArb = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 });
  const orderArb: fc.Arbitrary<TileOrder> = fc.oneof(
    fc.constant(rowMajor),
    fc.constant(columnMajor),
    fc.integer({ min: 1, max: 7 }).map(grouped),
  );

  /** Every tile of the grid exactly once, in some order. */
  function isPermutation(tiles: number[][], grid: number[]): boolean {
    const keys = new Set(tiles.map((t) => t.join()));
    const inGrid = tiles.every((t) => t.length === grid.length && t.every((c, i) => Number.isInteger(c) && c >= 0 && c < grid[i]!));
    return inGrid && keys.size === tiles.length && tiles.length === tileCount(grid);
  }

  it('row-major, column-major and grouped', () => {
    fc.assert(
      fc.property(gridArb, orderArb, (grid, order) => {
        const tiles = scheduleTable(order, grid);
        expect(isPermutation(tiles, grid)).toBe(true);
        expect(validateOrder(table(tiles), grid)).toBeUndefined();
        expect(tiles.map((_, t) => tileAt(order, grid, t))).toEqual(tiles);
      }),
    );
  });

  it('a shuffled table validates and reads back as given; dropping a tile does not validate', () => {
    fc.assert(
      fc.property(
        gridArb.chain((grid) => fc.tuple(fc.constant(grid), fc.shuffledSubarray(scheduleTable(rowMajor, grid), { minLength: tileCount(grid) }))),
        ([grid, tiles]) => {
          expect(validateOrder(table(tiles), grid)).toBeUndefined();
          expect(scheduleTable(table(tiles), grid)).toEqual(tiles);
          expect(validateOrder(table(tiles.slice(1)), grid)).toMatch(/is missing/);
        },
      ),
    );
  });
});
