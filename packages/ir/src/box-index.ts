/**
 * Boxes sorted along one axis, to find those that meet a box without a pass over all of them. A chunk
 * plan at 64 ranks has thousands of chunks, and each rank receives one from every other: checks that
 * compared each chunk with those of its rank were cubic in the ranks. The axis is the one where the
 * boxes start at the most places (rows for a gather's shards, columns for gemv-ar's slabs).
 */
import type { Box } from './types.js';
import { overlaps } from './box.js';

export class BoxIndex<T> {
  /** Positions in `items`, by where their boxes start along the axis. */
  private readonly sorted: number[];
  private readonly starts: number[];
  private readonly axis: number;
  /** The longest extent along the axis: a box meeting [lo, hi) starts after lo − longest. */
  private readonly longest: number;

  private readonly boxes: readonly Box[];

  constructor(
    private readonly items: readonly T[],
    boxOf: (item: T) => Box,
  ) {
    const boxes = items.map(boxOf);
    this.boxes = boxes;
    const axes = boxes.length > 0 ? boxes[0]!.lo.length : 0;
    let axis = 0;
    let most = -1;
    for (let a = 0; a < axes && most < boxes.length; a++) {
      const starts = new Set<number>();
      for (const b of boxes) starts.add(b.lo[a]!);
      if (starts.size > most) [axis, most] = [a, starts.size];
    }
    this.axis = axis;
    // Plain arrays and loops: typed arrays' `from` with a map and `sort` with a comparator cost
    // tens of microseconds here, and an index is made per rank.
    const lo = new Array<number>(boxes.length);
    const sorted = new Array<number>(boxes.length);
    let longest = 0;
    let inOrder = true;
    for (let i = 0; i < boxes.length; i++) {
      const b = boxes[i]!;
      lo[i] = b.lo[axis] ?? 0;
      sorted[i] = i;
      longest = Math.max(longest, (b.hi[axis] ?? 1) - lo[i]!);
      if (i > 0 && lo[i]! < lo[i - 1]!) inOrder = false;
    }
    if (!inOrder) sorted.sort((i, j) => lo[i]! - lo[j]! || i - j);
    this.sorted = sorted;
    this.starts = sorted.map((i) => lo[i]!);
    this.longest = longest;
  }

  /** Positions (in `items`) of the items whose boxes share a point with `box`, in ascending order. */
  meetingPositions(box: Box): number[] {
    const [lo, hi] = [box.lo[this.axis] ?? 0, box.hi[this.axis] ?? 1];
    const out: number[] = [];
    for (let k = this.firstAt(lo - this.longest); k < this.sorted.length && this.starts[k]! < hi; k++) {
      const i = this.sorted[k]!;
      if (overlaps(this.boxes[i]!, box)) out.push(i);
    }
    return out.length < 2 ? out : out.sort((a, b) => a - b);
  }

  /** The items whose boxes share a point with `box`, in the order of `items`. */
  meeting(box: Box): T[] {
    return this.meetingPositions(box).map((i) => this.items[i]!);
  }

  /** The first place whose box starts after `x` along the axis. */
  private firstAt(x: number): number {
    let [lo, hi] = [0, this.sorted.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
