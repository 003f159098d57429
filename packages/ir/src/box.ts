/**
 * Algebra over half-open boxes (`lo[i] <= x[i] < hi[i]`): intersection, difference, cover and
 * union volume. Differences are slab decompositions, so every result is a list of disjoint boxes.
 * Every function that takes more than one box throws a `RangeError` when their ranks differ.
 */
import type { Box } from './types.js';

/** The rank of `b`; throws when its `lo` and `hi` disagree. */
export function boxRank(b: Box): number {
  if (b.lo.length !== b.hi.length) {
    throw new RangeError(`box ${formatBox(b)} has ${b.lo.length} lower bounds but ${b.hi.length} upper bounds`);
  }
  return b.lo.length;
}

/** Throws unless every box has the same rank; returns that rank (0 for no boxes). */
function commonRank(what: string, boxes: readonly Box[]): number {
  const first = boxes[0];
  if (first === undefined) return 0;
  const rank = boxRank(first);
  for (const b of boxes) {
    if (boxRank(b) !== rank) {
      throw new RangeError(`${what}: rank mismatch: ${formatBox(first)} has rank ${rank}, ${formatBox(b)} has rank ${boxRank(b)}`);
    }
  }
  return rank;
}

export function box(lo: readonly number[], hi: readonly number[]): Box {
  const b = { lo: [...lo], hi: [...hi] };
  boxRank(b);
  return b;
}

/** `[0:64, 0:128]`; a rank-0 box prints as `[]`. */
export function formatBox(b: Box): string {
  const n = Math.max(b.lo.length, b.hi.length);
  const axes = Array.from({ length: n }, (_, i) => `${b.lo[i] ?? '?'}:${b.hi[i] ?? '?'}`);
  return `[${axes.join(', ')}]`;
}

// The functions below run in loops over boxes (plan validation, tile orders), so they loop by index
// rather than allocate closures and arrays.

/** Throws unless `a` and `b` have one rank; returns it. */
function pairRank(what: string, a: Box, b: Box): number {
  const rank = a.lo.length;
  if (a.hi.length === rank && b.lo.length === rank && b.hi.length === rank) return rank;
  // Something differs: say which (a box at odds with itself, or two boxes of different ranks).
  boxRank(a);
  boxRank(b);
  return commonRank(what, [a, b]);
}

export function isEmpty(b: Box): boolean {
  const rank = boxRank(b);
  for (let i = 0; i < rank; i++) if (b.hi[i]! <= b.lo[i]!) return true;
  return false;
}

/** The number of points in `b` (0 when empty; 1 for a rank-0 box, the single empty coordinate). */
export function volume(b: Box): number {
  if (isEmpty(b)) return 0;
  let v = 1;
  for (let i = 0; i < b.lo.length; i++) v *= b.hi[i]! - b.lo[i]!;
  return v;
}

/** Equal as point sets: the same bounds, or both empty. */
export function boxEquals(a: Box, b: Box): boolean {
  const rank = pairRank('boxEquals', a, b);
  if (isEmpty(a) || isEmpty(b)) return isEmpty(a) && isEmpty(b);
  for (let i = 0; i < rank; i++) if (a.lo[i] !== b.lo[i] || a.hi[i] !== b.hi[i]) return false;
  return true;
}

/** The common part of `a` and `b`, or undefined when they share no point. */
export function intersect(a: Box, b: Box): Box | undefined {
  const rank = pairRank('intersect', a, b);
  const lo = new Array<number>(rank);
  const hi = new Array<number>(rank);
  for (let i = 0; i < rank; i++) {
    lo[i] = Math.max(a.lo[i]!, b.lo[i]!);
    hi[i] = Math.min(a.hi[i]!, b.hi[i]!);
    // NaN bounds are not empty (as `isEmpty` has it), so only a comparison that holds stops here.
    if (hi[i]! <= lo[i]!) return undefined;
  }
  return { lo, hi };
}

/** Whether `a` and `b` share a point; allocates nothing, as the verifier calls it pair by pair. */
export function overlaps(a: Box, b: Box): boolean {
  const rank = pairRank('overlaps', a, b);
  for (let i = 0; i < rank; i++) {
    if (Math.max(a.lo[i]!, b.lo[i]!) >= Math.min(a.hi[i]!, b.hi[i]!)) return false;
  }
  return true;
}

/** Whether every point of `inner` lies in `outer`; an empty `inner` is contained in anything. */
export function contains(outer: Box, inner: Box): boolean {
  const rank = pairRank('contains', outer, inner);
  if (isEmpty(inner)) return true;
  for (let i = 0; i < rank; i++) if (!(outer.lo[i]! <= inner.lo[i]! && inner.hi[i]! <= outer.hi[i]!)) return false;
  return true;
}

/**
 * `a ∖ b` as disjoint boxes (at most `2·rank`). Slab decomposition: along each axis in turn, cut off
 * the slabs of what is left of `a` that lie below and above `b`, then narrow that axis to `b`'s range.
 */
export function subtract(a: Box, b: Box): Box[] {
  pairRank('subtract', a, b);
  if (isEmpty(a)) return [];
  const cut = intersect(a, b);
  if (cut === undefined) return [box(a.lo, a.hi)];
  const lo = [...a.lo];
  const hi = [...a.hi];
  const pieces: Box[] = [];
  for (let axis = 0; axis < lo.length; axis++) {
    const [cutLo, cutHi] = [cut.lo[axis]!, cut.hi[axis]!];
    if (lo[axis]! < cutLo) pieces.push(slab(lo, hi, axis, lo[axis]!, cutLo));
    if (cutHi < hi[axis]!) pieces.push(slab(lo, hi, axis, cutHi, hi[axis]!));
    lo[axis] = cutLo;
    hi[axis] = cutHi;
  }
  return pieces;
}

/** The box `lo..hi` with axis `axis` replaced by `[from, to)`. */
function slab(lo: readonly number[], hi: readonly number[], axis: number, from: number, to: number): Box {
  return {
    lo: lo.map((x, i) => (i === axis ? from : x)),
    hi: hi.map((x, i) => (i === axis ? to : x)),
  };
}

/** `a` minus every box of `bs`, as disjoint boxes. */
export function subtractAll(a: Box, bs: readonly Box[]): Box[] {
  commonRank('subtractAll', [a, ...bs]);
  let pieces = isEmpty(a) ? [] : [box(a.lo, a.hi)];
  for (const b of bs) pieces = pieces.flatMap((p) => subtract(p, b));
  return pieces;
}

/** Whether `boxes` together cover `target`; `uncovered` is what they miss, as disjoint boxes. */
export function cover(target: Box, boxes: readonly Box[]): { covered: boolean; uncovered: Box[] } {
  const uncovered = subtractAll(target, boxes);
  return { covered: uncovered.length === 0, uncovered };
}

/** The boxes' union as disjoint boxes: each box minus the pieces already taken. */
export function disjointUnion(boxes: readonly Box[]): Box[] {
  commonRank('disjointUnion', boxes);
  const pieces: Box[] = [];
  for (const b of boxes) pieces.push(...subtractAll(b, pieces));
  return pieces;
}

/** The number of points in the union of `boxes` (each point counted once). */
export function unionVolume(boxes: readonly Box[]): number {
  return disjointUnion(boxes).reduce((v, b) => v + volume(b), 0);
}

/** The smallest box holding every point of `boxes` (empty boxes add none), or undefined if none. */
export function boundingBox(boxes: readonly Box[]): Box | undefined {
  commonRank('boundingBox', boxes);
  // Arrays built by push come out alike whichever tier of the JIT runs this (a `map` may give a holey
  // array once optimized), so the code that reads these boxes sees one kind of array, not two.
  let bound: { lo: number[]; hi: number[] } | undefined;
  for (const b of boxes) {
    if (isEmpty(b)) continue;
    if (bound === undefined) {
      bound = { lo: [], hi: [] };
      for (let i = 0; i < b.lo.length; i++) bound.lo.push(b.lo[i]!), bound.hi.push(b.hi[i]!);
      continue;
    }
    for (let i = 0; i < b.lo.length; i++) {
      bound.lo[i] = Math.min(bound.lo[i]!, b.lo[i]!);
      bound.hi[i] = Math.max(bound.hi[i]!, b.hi[i]!);
    }
  }
  return bound;
}

/**
 * A box cut along every axis at each edge of some boxes inside it, so that each of those boxes is a
 * union of whole cells. Work over the cells stands in for work over the points: a GEMM grid cut by
 * bands of rows has a few cells, not thousands of tiles, and there are never more cells than points.
 */
export interface CellGrid {
  /** Per axis, the cells' edges, ascending: the target's `lo` first, its `hi` last. */
  readonly edges: readonly (readonly number[])[];
  /** Cells along each axis. */
  readonly sizes: readonly number[];
  /** Cells in all (row-major over `sizes`). */
  readonly count: number;
}

/** `target` cut at the edges of `boxes`, which must lie inside it. */
export function cellGrid(target: Box, boxes: readonly Box[]): CellGrid {
  commonRank('cellGrid', [target, ...boxes]);
  const edges = target.lo.map((lo, axis) => {
    // A typed array sorts numbers natively: a comparator sort per rank cost more than the rest of the grid.
    const xs = new Float64Array(2 + 2 * boxes.length);
    xs[0] = lo;
    xs[1] = target.hi[axis]!;
    for (let i = 0; i < boxes.length; i++) {
      xs[2 + 2 * i] = boxes[i]!.lo[axis]!;
      xs[3 + 2 * i] = boxes[i]!.hi[axis]!;
    }
    xs.sort();
    const out: number[] = [];
    for (let i = 0; i < xs.length; i++) if (i === 0 || xs[i] !== xs[i - 1]) out.push(xs[i]!);
    return out;
  });
  const sizes = edges.map((e) => e.length - 1);
  return { edges, sizes, count: sizes.reduce((n, s) => n * s, 1) };
}

/** The cells `b` covers, as a box of cell indices; `b`'s bounds must be edges of `cells`. */
export function cellRange(cells: CellGrid, b: Box): Box {
  const lo: number[] = [];
  const hi: number[] = [];
  for (let axis = 0; axis < b.lo.length; axis++) {
    lo.push(edgeIndex(cells.edges[axis]!, b.lo[axis]!));
    hi.push(edgeIndex(cells.edges[axis]!, b.hi[axis]!));
  }
  return { lo, hi };
}

/** The index of `x` in the ascending `xs`, which holds it. */
function edgeIndex(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
