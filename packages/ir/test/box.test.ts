import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  box,
  boundingBox,
  boxEquals,
  boxRank,
  cellGrid,
  cellRange,
  contains,
  cover,
  disjointUnion,
  formatBox,
  intersect,
  isEmpty,
  overlaps,
  subtract,
  subtractAll,
  unionVolume,
  volume,
  type Box,
} from '../src/index.js';

// ---- brute force over the points of a small universe ---------------------------------------------

/** Coordinates of the universe `[0, SIDE)^rank` the property tests draw boxes from. */
const SIDE = 6;

function points(rank: number): number[][] {
  if (rank === 0) return [[]];
  return points(rank - 1).flatMap((p) => Array.from({ length: SIDE }, (_, x) => [...p, x]));
}

function inside(p: readonly number[], b: Box): boolean {
  return p.every((x, i) => b.lo[i]! <= x && x < b.hi[i]!);
}

function pointSet(rank: number, pred: (p: number[]) => boolean): Set<string> {
  return new Set(points(rank).filter(pred).map((p) => p.join()));
}

function inAny(p: readonly number[], bs: readonly Box[]): boolean {
  return bs.some((b) => inside(p, b));
}

/** A box in the universe; `lo` may exceed `hi`, so empty boxes come up too. */
const boxOf = (rank: number): fc.Arbitrary<Box> =>
  fc
    .tuple(fc.array(fc.integer({ min: 0, max: SIDE }), { minLength: rank, maxLength: rank }), fc.array(fc.integer({ min: 0, max: SIDE }), { minLength: rank, maxLength: rank }))
    .map(([lo, hi]) => ({ lo, hi }));

const rankArb = fc.integer({ min: 1, max: 3 });
const twoBoxes = rankArb.chain((r) => fc.tuple(fc.constant(r), boxOf(r), boxOf(r)));
const boxAndList = rankArb.chain((r) => fc.tuple(fc.constant(r), boxOf(r), fc.array(boxOf(r), { maxLength: 5 })));

function pairwiseDisjoint(bs: readonly Box[]): boolean {
  return bs.every((a, i) => bs.slice(i + 1).every((b) => !overlaps(a, b)));
}

// ---- hand cases ----------------------------------------------------------------------------------

describe('box basics', () => {
  it('builds, measures and prints boxes', () => {
    const b = box([0, 0], [64, 128]);
    expect(boxRank(b)).toBe(2);
    expect(volume(b)).toBe(64 * 128);
    expect(formatBox(b)).toBe('[0:64, 0:128]');
    expect(formatBox(box([], []))).toBe('[]');
    expect(volume(box([], []))).toBe(1);
  });

  it('treats any axis with hi <= lo as empty', () => {
    expect(isEmpty(box([0, 5], [4, 5]))).toBe(true);
    expect(isEmpty(box([3], [2]))).toBe(true);
    expect(volume(box([3], [2]))).toBe(0);
    expect(isEmpty(box([0], [1]))).toBe(false);
  });

  it('compares boxes as point sets', () => {
    expect(boxEquals(box([0, 0], [2, 2]), box([0, 0], [2, 2]))).toBe(true);
    expect(boxEquals(box([0, 0], [2, 2]), box([0, 0], [2, 3]))).toBe(false);
    expect(boxEquals(box([5, 0], [5, 9]), box([0, 7], [3, 1]))).toBe(true);
  });

  it('throws a RangeError on a rank mismatch', () => {
    const a = box([0], [4]);
    const b = box([0, 0], [4, 4]);
    expect(() => box([0, 0], [1])).toThrow(RangeError);
    for (const f of [intersect, overlaps, contains, subtract, boxEquals] as const) {
      expect(() => f(a, b)).toThrow(RangeError);
    }
    expect(() => subtractAll(a, [a, b])).toThrow(/rank mismatch/);
    expect(() => cover(a, [b])).toThrow(RangeError);
    expect(() => unionVolume([a, b])).toThrow(RangeError);
    expect(() => boundingBox([a, b])).toThrow(RangeError);
    expect(() => volume({ lo: [0, 0], hi: [1] })).toThrow(RangeError);
  });
});

describe('intersect, overlaps, contains', () => {
  it('1-D', () => {
    expect(intersect(box([0], [10]), box([5], [15]))).toEqual(box([5], [10]));
    expect(intersect(box([0], [5]), box([5], [10]))).toBeUndefined(); // touching
    expect(overlaps(box([0], [5]), box([4], [10]))).toBe(true);
  });

  it('2-D nested, identical, disjoint, touching', () => {
    const outer = box([0, 0], [8, 8]);
    const inner = box([2, 3], [4, 5]);
    expect(intersect(outer, inner)).toEqual(inner);
    expect(intersect(outer, outer)).toEqual(outer);
    expect(intersect(outer, box([8, 0], [9, 8]))).toBeUndefined();
    expect(intersect(box([0, 0], [2, 2]), box([2, 2], [4, 4]))).toBeUndefined(); // corner touch
    expect(contains(outer, inner)).toBe(true);
    expect(contains(inner, outer)).toBe(false);
    expect(contains(outer, outer)).toBe(true);
    expect(contains(inner, box([100, 100], [100, 200]))).toBe(true); // empty inner
  });

  it('3-D', () => {
    const a = box([0, 0, 0], [4, 4, 4]);
    const b = box([2, -1, 3], [6, 2, 9]);
    expect(intersect(a, b)).toEqual(box([2, 0, 3], [4, 2, 4]));
    expect(contains(a, b)).toBe(false);
  });

  it('an empty box overlaps nothing', () => {
    expect(overlaps(box([0, 2], [4, 2]), box([0, 0], [4, 4]))).toBe(false);
  });
});

describe('subtract', () => {
  it('1-D: a hole in the middle leaves two pieces', () => {
    expect(subtract(box([0], [10]), box([3], [5]))).toEqual([box([0], [3]), box([5], [10])]);
  });

  it('2-D slab decomposition around a central hole: 4 pieces', () => {
    const pieces = subtract(box([0, 0], [4, 4]), box([1, 1], [3, 3]));
    expect(pieces).toEqual([box([0, 0], [1, 4]), box([3, 0], [4, 4]), box([1, 0], [3, 1]), box([1, 3], [3, 4])]);
    expect(pieces.reduce((v, p) => v + volume(p), 0)).toBe(12);
  });

  it('3-D: a central hole gives 2·rank = 6 pieces', () => {
    const pieces = subtract(box([0, 0, 0], [3, 3, 3]), box([1, 1, 1], [2, 2, 2]));
    expect(pieces).toHaveLength(6);
    expect(pieces.reduce((v, p) => v + volume(p), 0)).toBe(26);
    expect(pairwiseDisjoint(pieces)).toBe(true);
  });

  it('identical, nested, disjoint, touching and empty boxes', () => {
    const a = box([0, 0], [4, 4]);
    expect(subtract(a, a)).toEqual([]);
    expect(subtract(a, box([-1, -1], [5, 5]))).toEqual([]);
    expect(subtract(a, box([10, 10], [12, 12]))).toEqual([a]);
    expect(subtract(a, box([4, 0], [8, 4]))).toEqual([a]);
    expect(subtract(a, box([1, 1], [1, 3]))).toEqual([a]);
    expect(subtract(box([2, 2], [2, 5]), a)).toEqual([]);
  });

  it('subtractAll and cover', () => {
    const target = box([0, 0], [4, 4]);
    const halves = [box([0, 0], [2, 4]), box([2, 0], [4, 4])];
    expect(cover(target, halves)).toEqual({ covered: true, uncovered: [] });
    const partial = cover(target, [halves[0]!, box([2, 0], [4, 3])]);
    expect(partial.covered).toBe(false);
    expect(partial.uncovered).toEqual([box([2, 3], [4, 4])]);
    expect(subtractAll(target, [])).toEqual([target]);
    expect(cover(box([0], [0]), []).covered).toBe(true);
  });
});

describe('unionVolume, disjointUnion, boundingBox', () => {
  it('counts overlapping points once', () => {
    expect(unionVolume([box([0, 0], [4, 4]), box([2, 2], [6, 6])])).toBe(16 + 16 - 4);
    expect(unionVolume([box([0], [4]), box([0], [4])])).toBe(4);
    expect(unionVolume([])).toBe(0);
    expect(pairwiseDisjoint(disjointUnion([box([0, 0], [4, 4]), box([2, 2], [6, 6]), box([1, 1], [5, 5])]))).toBe(true);
  });

  it('bounds the non-empty boxes', () => {
    expect(boundingBox([box([1, 5], [2, 6]), box([4, 0], [5, 1]), box([-9, -9], [-9, 9])])).toEqual(box([1, 0], [5, 6]));
    expect(boundingBox([])).toBeUndefined();
    expect(boundingBox([box([0], [0])])).toBeUndefined();
  });
});

describe('cellGrid', () => {
  it('cuts the target at the edges of the boxes, each box a range of whole cells', () => {
    const cells = cellGrid(box([0, 0], [4, 3]), [box([1, 0], [3, 3]), box([3, 0], [4, 1])]);
    expect(cells).toEqual({ edges: [[0, 1, 3, 4], [0, 1, 3]], sizes: [3, 2], count: 6 });
    expect(cellRange(cells, box([1, 0], [3, 3]))).toEqual({ lo: [1, 0], hi: [2, 2] });
    expect(cellRange(cells, box([0, 0], [4, 3]))).toEqual({ lo: [0, 0], hi: [3, 2] });
    expect(() => cellGrid(box([0], [4]), [box([0, 0], [1, 1])])).toThrow(/rank mismatch/);
  });

  it('every box is the cells of its range, whose volumes add up to its own (random boxes)', () => {
    fc.assert(
      fc.property(boxAndList, ([, target, bs]) => {
        const inTarget = bs.map((b) => intersect(b, target)).filter((b): b is Box => b !== undefined);
        const cells = cellGrid(target, inTarget);
        if (isEmpty(target)) return;
        expect(cells.count).toBe(cells.sizes.reduce((n, s) => n * s, 1));
        expect(cells.count).toBeLessThanOrEqual(volume(target));
        for (const b of inTarget) {
          const range = cellRange(cells, b);
          // The range's cells, back in the target's coordinates, are b itself.
          const lo = range.lo.map((c, axis) => cells.edges[axis]![c]!);
          const hi = range.hi.map((c, axis) => cells.edges[axis]![c]!);
          expect({ lo, hi }).toEqual({ lo: [...b.lo], hi: [...b.hi] });
        }
      }),
    );
  });
});

// ---- properties against point enumeration --------------------------------------------------------

describe('box algebra matches point enumeration', () => {
  it('volume and isEmpty', () => {
    fc.assert(
      fc.property(
        rankArb.chain((r) => fc.tuple(fc.constant(r), boxOf(r))),
        ([r, a]) => {
          const n = pointSet(r, (p) => inside(p, a)).size;
          expect(volume(a)).toBe(n);
          expect(isEmpty(a)).toBe(n === 0);
        },
      ),
    );
  });

  it('intersect, overlaps and contains', () => {
    fc.assert(
      fc.property(twoBoxes, ([r, a, b]) => {
        const both = pointSet(r, (p) => inside(p, a) && inside(p, b));
        const c = intersect(a, b);
        expect(c === undefined ? new Set() : pointSet(r, (p) => inside(p, c))).toEqual(both);
        expect(overlaps(a, b)).toBe(both.size > 0);
        const bInA = points(r).every((p) => !inside(p, b) || inside(p, a));
        expect(contains(a, b)).toBe(bInA);
      }),
    );
  });

  it('subtract: disjoint pieces inside a and outside b whose union is a∖b', () => {
    fc.assert(
      fc.property(twoBoxes, ([r, a, b]) => {
        const pieces = subtract(a, b);
        expect(pieces.length).toBeLessThanOrEqual(2 * r);
        expect(pieces.every((p) => !isEmpty(p) && contains(a, p) && !overlaps(p, b))).toBe(true);
        expect(pairwiseDisjoint(pieces)).toBe(true);
        expect(pointSet(r, (p) => inAny(p, pieces))).toEqual(pointSet(r, (p) => inside(p, a) && !inside(p, b)));
      }),
    );
  });

  it('cover and subtractAll: the uncovered remainder is exact and disjoint', () => {
    fc.assert(
      fc.property(boxAndList, ([r, target, bs]) => {
        const { covered, uncovered } = cover(target, bs);
        const missed = pointSet(r, (p) => inside(p, target) && !inAny(p, bs));
        expect(pointSet(r, (p) => inAny(p, uncovered))).toEqual(missed);
        expect(covered).toBe(missed.size === 0);
        expect(pairwiseDisjoint(uncovered)).toBe(true);
        expect(uncovered.reduce((v, p) => v + volume(p), 0)).toBe(missed.size);
      }),
    );
  });

  it('unionVolume and boundingBox', () => {
    fc.assert(
      fc.property(boxAndList, ([r, first, rest]) => {
        const bs = [first, ...rest];
        const union = pointSet(r, (p) => inAny(p, bs));
        expect(unionVolume(bs)).toBe(union.size);
        const bound = boundingBox(bs);
        if (union.size === 0) {
          expect(bound).toBeUndefined();
        } else {
          expect(bound).toBeDefined();
          expect(bs.every((b) => contains(bound!, b))).toBe(true);
          // Tight: every face of the bounding box touches a point of the union.
          const pts = [...union].map((s) => s.split(',').map(Number));
          for (let i = 0; i < r; i++) {
            expect(Math.min(...pts.map((p) => p[i]!))).toBe(bound!.lo[i]);
            expect(Math.max(...pts.map((p) => p[i]!)) + 1).toBe(bound!.hi[i]);
          }
        }
      }),
    );
  });
});
