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

  it('segments: each rank visits its boxes in turn, each box in grouped order in box-local coordinates', () => {
    const b = (lo: number[], hi: number[]) => ({ lo, hi });
    const order: TileOrder = {
      kind: 'segments',
      groupSize: 2,
      ranks: [
        [b([0, 0], [4, 3])],
        [b([3, 0], [4, 3]), b([1, 0], [3, 3]), b([0, 0], [1, 3])],
        [b([1, 1], [4, 3]), b([0, 0], [1, 3]), b([1, 0], [4, 1])],
      ],
    };
    // One box over the whole grid is grouped(G).
    expect(scheduleTable(order, [4, 3], 0)).toEqual(scheduleTable(grouped(2), [4, 3]));
    expect(scheduleTable(order, [4, 3], 1)).toEqual([
      [3, 0], [3, 1], [3, 2],
      [1, 0], [2, 0], [1, 1], [2, 1], [1, 2], [2, 2],
      [0, 0], [0, 1], [0, 2],
    ]);
    // Bands of G rows start at the box's first row, not at a multiple of G.
    expect(scheduleTable(order, [4, 3], 2)).toEqual([
      [1, 1], [2, 1], [1, 2], [2, 2], [3, 1], [3, 2],
      [0, 0], [0, 1], [0, 2],
      [1, 0], [2, 0], [3, 0],
    ]);
    for (const rank of [0, 1, 2]) {
      const tiles = scheduleTable(order, [4, 3], rank);
      expect(tiles.map((_, t) => tileAt(order, [4, 3], t, rank))).toEqual(tiles);
    }
    expect(() => tileAt(order, [4, 3], 0)).toThrow(/needs the rank/);
    expect(() => scheduleTable(order, [4, 3], 3)).toThrow(/rank 3 has no segments/);
    expect(validateOrder(order, [4, 3], 3)).toBeUndefined();
    expect(validateOrder(order, [4, 3], 2)).toMatch(/3 lists of segments, but the module has 2 ranks/);
  });

  it('segments on grids that are not 2-D run row-major inside each box', () => {
    const order: TileOrder = { kind: 'segments', groupSize: 4, ranks: [[{ lo: [2], hi: [5] }, { lo: [0], hi: [2] }]] };
    expect(scheduleTable(order, [5], 0)).toEqual([[2], [3], [4], [0], [1]]);
    const cube: TileOrder = { kind: 'segments', groupSize: 4, ranks: [[{ lo: [1, 0, 0], hi: [2, 2, 2] }, { lo: [0, 0, 0], hi: [1, 2, 2] }]] };
    expect(scheduleTable(cube, [2, 2, 2], 0).slice(0, 4)).toEqual([[1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]);
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

describe('validateOrder: segments', () => {
  const segments = (...boxes: [number[], number[]][]): TileOrder => ({
    kind: 'segments',
    groupSize: 8,
    ranks: [boxes.map(([lo, hi]) => ({ lo, hi }))],
  });

  it('accepts boxes that partition the grid', () => {
    expect(validateOrder(segments([[0, 0], [2, 2]]), [2, 2])).toBeUndefined();
    expect(validateOrder(segments([[1, 0], [2, 2]], [[0, 1], [1, 2]], [[0, 0], [1, 1]]), [2, 2])).toBeUndefined();
  });

  it('says what is wrong with them', () => {
    expect(validateOrder(segments([[0, 0], [2, 2]], [[1, 1], [2, 2]]), [2, 2])).toMatch(
      /^rank 0: segments 0 \[0:2, 0:2\] and 1 \[1:2, 1:2\] share the tiles \[1:2, 1:2\]$/,
    );
    expect(validateOrder(segments([[0, 0], [1, 2]]), [2, 2])).toMatch(/cover 2 of the 4 tiles of the grid \[2, 2\]; tile \(1, 0\) is missing/);
    expect(validateOrder(segments([[0, 0], [3, 2]]), [2, 2])).toMatch(/segment 0 \[0:3, 0:2\] is empty or not inside the grid \[2, 2\]/);
    expect(validateOrder(segments([[0, 1], [2, 1]], [[0, 0], [2, 2]]), [2, 2])).toMatch(/segment 0 \[0:2, 1:1\] is empty/);
    expect(validateOrder(segments([[0, 0.5], [2, 2]]), [2, 2])).toMatch(/not inside/);
    expect(validateOrder(segments([[0], [2]]), [2, 2])).toMatch(/segment 0 \[0:2\] has 1 axes, but the grid \[2, 2\] has 2/);
    expect(validateOrder({ kind: 'segments', groupSize: 0, ranks: [] }, [2, 2])).toMatch(/group size/);
    expect(() => tileAt(segments([[0, 0], [1, 2]]), [2, 2], 3, 0)).toThrow(/cover 2 tiles, so ticket 3 has none/);
    expect(() => scheduleTable(segments([[0, 0], [1, 2]]), [2, 2], 0)).toThrow(RangeError);
  });

  it('checks many boxes over the cells they cut the grid into', () => {
    // 40 one-tile boxes, then one over tiles 2 and 3 again.
    const ones = Array.from({ length: 40 }, (_, x): [number[], number[]] => [[x], [x + 1]]);
    expect(validateOrder(segments(...ones), [40])).toBeUndefined();
    expect(validateOrder(segments(...ones, [[2], [4]]), [40])).toMatch(/segments 2 \[2:3\] and 40 \[2:4\] share the tiles \[2:3\]/);
    expect(validateOrder(segments(...ones.slice(0, 39)), [40])).toMatch(/cover 39 of the 40 tiles .* tile \(39\) is missing/);
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

  it('segments: any partition of the grid into boxes, in any order', () => {
    /** The grid cut at random points along each axis, the pieces shuffled. */
    const partitionArb = gridArb.chain((grid) =>
      fc
        .tuple(...grid.map((d) => (d > 1 ? fc.uniqueArray(fc.integer({ min: 1, max: d - 1 })) : fc.constant([]))))
        .map((cuts) => {
          let boxes = [{ lo: grid.map(() => 0), hi: [...grid] }];
          cuts.forEach((points, axis) => {
            const edges = [0, ...[...points].sort((a, b) => a - b), grid[axis]!];
            boxes = boxes.flatMap((b) =>
              edges.slice(1).map((hi, i) => ({
                lo: b.lo.map((x, a) => (a === axis ? edges[i]! : x)),
                hi: b.hi.map((x, a) => (a === axis ? hi : x)),
              })),
            );
          });
          return { grid, boxes };
        })
        .chain(({ grid, boxes }) => fc.tuple(fc.constant(grid), fc.shuffledSubarray(boxes, { minLength: boxes.length }), fc.integer({ min: 1, max: 4 }))),
    );
    fc.assert(
      fc.property(partitionArb, ([grid, boxes, groupSize]) => {
        const order: TileOrder = { kind: 'segments', groupSize, ranks: [boxes] };
        expect(validateOrder(order, grid, 1)).toBeUndefined();
        const tiles = scheduleTable(order, grid, 0);
        expect(isPermutation(tiles, grid)).toBe(true);
        expect(tiles.map((_, t) => tileAt(order, grid, t, 0))).toEqual(tiles);
        if (boxes.length > 1) {
          expect(validateOrder({ ...order, ranks: [boxes.slice(1)] }, grid)).toMatch(/is missing/);
          expect(validateOrder({ ...order, ranks: [[...boxes, boxes[0]!]] }, grid)).toMatch(/share the tiles/);
        }
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
