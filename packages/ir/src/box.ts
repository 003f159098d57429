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

export function isEmpty(b: Box): boolean {
  boxRank(b);
  return b.lo.some((lo, i) => b.hi[i]! <= lo);
}

/** The number of points in `b` (0 when empty; 1 for a rank-0 box, the single empty coordinate). */
export function volume(b: Box): number {
  if (isEmpty(b)) return 0;
  return b.lo.reduce((v, lo, i) => v * (b.hi[i]! - lo), 1);
}

/** Equal as point sets: the same bounds, or both empty. */
export function boxEquals(a: Box, b: Box): boolean {
  commonRank('boxEquals', [a, b]);
  if (isEmpty(a) || isEmpty(b)) return isEmpty(a) && isEmpty(b);
  return a.lo.every((x, i) => x === b.lo[i]) && a.hi.every((x, i) => x === b.hi[i]);
}

/** The common part of `a` and `b`, or undefined when they share no point. */
export function intersect(a: Box, b: Box): Box | undefined {
  commonRank('intersect', [a, b]);
  const lo = a.lo.map((x, i) => Math.max(x, b.lo[i]!));
  const hi = a.hi.map((x, i) => Math.min(x, b.hi[i]!));
  const c = { lo, hi };
  return isEmpty(c) ? undefined : c;
}

export function overlaps(a: Box, b: Box): boolean {
  return intersect(a, b) !== undefined;
}

/** Whether every point of `inner` lies in `outer`; an empty `inner` is contained in anything. */
export function contains(outer: Box, inner: Box): boolean {
  commonRank('contains', [outer, inner]);
  if (isEmpty(inner)) return true;
  return inner.lo.every((x, i) => outer.lo[i]! <= x && inner.hi[i]! <= outer.hi[i]!);
}

/**
 * `a ∖ b` as disjoint boxes (at most `2·rank`). Slab decomposition: along each axis in turn, cut off
 * the slabs of what is left of `a` that lie below and above `b`, then narrow that axis to `b`'s range.
 */
export function subtract(a: Box, b: Box): Box[] {
  commonRank('subtract', [a, b]);
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
  const nonEmpty = boxes.filter((b) => !isEmpty(b));
  const first = nonEmpty[0];
  if (first === undefined) return undefined;
  return nonEmpty.reduce(
    (acc, b) => ({
      lo: acc.lo.map((x, i) => Math.min(x, b.lo[i]!)),
      hi: acc.hi.map((x, i) => Math.max(x, b.hi[i]!)),
    }),
    box(first.lo, first.hi),
  );
}
