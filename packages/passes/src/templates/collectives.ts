/**
 * Plan templates for the collectives the workloads use. Each is parameterised by ranks, tensor,
 * axis and chunks per rank, and uses the balanced shard split of `shardRange` (the same split a
 * `sharded(axis)` tensor has), so a template's chunks line up with the tensor's distribution.
 */
import type { ChunkPlan, ChunkSpec } from '@syncopate/ir';
import { chunk, mod, shardPieces, slab, validateRanksAndAxis, validateTemplateOptions, type TemplateOptions } from './slabs.js';

/**
 * Ring all-gather: at step s, rank r forwards shard (r − s) mod R, which it owns (s = 0) or received
 * at step s − 1, to rank r + 1. R − 1 steps; each rank sends and receives one shard per step.
 */
export function ringAllGather(o: TemplateOptions): ChunkPlan {
  validateTemplateOptions('ringAllGather', o);
  const R = o.ranks;
  const chunks: ChunkSpec[] = [];
  for (let s = 0; s < R - 1; s++) {
    for (let r = 0; r < R; r++) {
      for (const region of shardPieces(o, mod(r - s, R))) chunks.push(chunk(o, region, r, mod(r + 1, R), s, 'copy'));
    }
  }
  return { name: `ring-all-gather(@${o.tensor.name}, axis=${o.axis})`, ranks: R, chunks };
}

/** One-shot all-gather: every rank sends its shard straight to every other rank, all at step 0. */
export function oneShotAllGather(o: TemplateOptions): ChunkPlan {
  validateTemplateOptions('oneShotAllGather', o);
  const R = o.ranks;
  const chunks: ChunkSpec[] = [];
  for (let r = 0; r < R; r++) {
    for (let hop = 1; hop < R; hop++) {
      for (const region of shardPieces(o, r)) chunks.push(chunk(o, region, r, mod(r + hop, R), 0, 'copy'));
    }
  }
  return { name: `one-shot-all-gather(@${o.tensor.name}, axis=${o.axis})`, ranks: R, chunks };
}

/**
 * Ring reduce-scatter of a partial-sum tensor: shard j starts at rank j + 1 and travels the ring,
 * each rank adding its own partial, until it reaches rank j at step R − 2. At step s, rank r sends
 * its running sum of shard (r − s − 1) mod R to rank r + 1.
 */
export function ringReduceScatter(o: TemplateOptions): ChunkPlan {
  validateTemplateOptions('ringReduceScatter', o);
  const R = o.ranks;
  const chunks: ChunkSpec[] = [];
  for (let s = 0; s < R - 1; s++) {
    for (let r = 0; r < R; r++) {
      for (const region of shardPieces(o, mod(r - s - 1, R))) chunks.push(chunk(o, region, r, mod(r + 1, R), s, 'reduce-add'));
    }
  }
  return { name: `ring-reduce-scatter(@${o.tensor.name}, axis=${o.axis})`, ranks: R, chunks };
}

/** One-shot reduce-scatter: every rank adds its partial of shard d straight into rank d, at step 0. */
export function oneShotReduceScatter(o: TemplateOptions): ChunkPlan {
  validateTemplateOptions('oneShotReduceScatter', o);
  const R = o.ranks;
  const chunks: ChunkSpec[] = [];
  for (let r = 0; r < R; r++) {
    for (let hop = 1; hop < R; hop++) {
      const d = mod(r + hop, R);
      for (const region of shardPieces(o, d)) chunks.push(chunk(o, region, r, d, 0, 'reduce-add'));
    }
  }
  return { name: `one-shot-reduce-scatter(@${o.tensor.name}, axis=${o.axis})`, ranks: R, chunks };
}

/**
 * All-reduce as a ring reduce-scatter (steps 0 … R − 2) followed by a ring all-gather of the reduced
 * shards (steps R − 1 … 2R − 3).
 */
export function allReduce(o: TemplateOptions): ChunkPlan {
  const rs = ringReduceScatter(o);
  const ag = ringAllGather(o);
  const shift = o.ranks - 1;
  return {
    name: `all-reduce(@${o.tensor.name}, axis=${o.axis})`,
    ranks: o.ranks,
    chunks: [...rs.chunks, ...ag.chunks.map((c) => ({ ...c, step: c.step + shift }))],
  };
}

export interface AllToAllOptions extends Omit<TemplateOptions, 'chunksPerRank'> {
  /** `splits[r][d]`: elements along `axis` that rank r sends to rank d (uneven for MoE). */
  readonly splits: readonly (readonly number[])[];
}

/**
 * The layout an all-to-all uses along `axis`: destination-major, then source, so that what rank r
 * sends to rank d sits at the same coordinates on both ranks, and rank d's received rows are one
 * contiguous range. Returns `offsets[r][d]` and each destination's `[lo, hi)`.
 */
export function allToAllLayout(splits: readonly (readonly number[])[]): {
  offsets: number[][];
  received: [number, number][];
} {
  const R = splits.length;
  const offsets = splits.map(() => new Array<number>(R).fill(0));
  const received: [number, number][] = [];
  let at = 0;
  for (let d = 0; d < R; d++) {
    const start = at;
    for (let r = 0; r < R; r++) {
      offsets[r]![d] = at;
      at += splits[r]![d]!;
    }
    received.push([start, at]);
  }
  return { offsets, received };
}

/**
 * All-to-all with uneven splits (MoE token dispatch): rank r sends `splits[r][d]` elements along
 * `axis` to rank d at step (d − r) mod R − 1, so each step is a permutation of the ranks. The tensor's
 * extent along `axis` must equal the sum of all splits (see `allToAllLayout`).
 */
export function allToAll(o: AllToAllOptions): ChunkPlan {
  validateRanksAndAxis('allToAll', o);
  const R = o.ranks;
  const square = o.splits.length === R && o.splits.every((row) => row.length === R);
  if (!square || o.splits.flat().some((n) => !Number.isInteger(n) || n < 0)) {
    throw new RangeError(`allToAll(@${o.tensor.name}): splits must be a ${R}x${R} matrix of non-negative integers`);
  }
  const { offsets } = allToAllLayout(o.splits);
  const total = o.splits.flat().reduce((a, b) => a + b, 0);
  if (o.tensor.shape[o.axis] !== total) {
    throw new RangeError(`allToAll(@${o.tensor.name}): axis ${o.axis} has ${o.tensor.shape[o.axis]} elements, the splits sum to ${total}`);
  }
  const chunks: ChunkSpec[] = [];
  for (let r = 0; r < R; r++) {
    for (let d = 0; d < R; d++) {
      const n = o.splits[r]![d]!;
      if (d === r || n === 0) continue;
      const at = offsets[r]![d]!;
      chunks.push(chunk(o, slab(o.tensor, o.axis, at, at + n), r, d, mod(d - r, R) - 1, 'copy'));
    }
  }
  return { name: `all-to-all(@${o.tensor.name}, axis=${o.axis})`, ranks: R, chunks };
}
