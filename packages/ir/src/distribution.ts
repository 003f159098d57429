/** What part of a distributed tensor each rank holds before any chunk moves. */
import type { Box, Distribution, Shape } from './types.js';

/** The `[lo, hi)` part of an axis of `extent` elements that `rank` of `ranks` holds: a balanced split. */
export function shardRange(extent: number, ranks: number, rank: number): [number, number] {
  return [Math.floor((rank * extent) / ranks), Math.floor(((rank + 1) * extent) / ranks)];
}

/**
 * The box of a tensor that `rank` holds at the start: its shard for a sharded tensor, everything for
 * a replicated one (each rank has its own full copy) and for a partial sum (each rank has a full
 * partial).
 */
export function ownedBox(shape: Shape, distribution: Distribution, ranks: number, rank: number): Box {
  const lo = shape.map(() => 0);
  const hi = [...shape];
  if (distribution.kind === 'sharded') {
    const [a, b] = shardRange(shape[distribution.axis]!, ranks, rank);
    lo[distribution.axis] = a;
    hi[distribution.axis] = b;
  }
  return { lo, hi };
}
