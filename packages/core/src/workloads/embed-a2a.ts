/**
 * Embedding lookup + All-to-All, as in DLRM's model-parallel embeddings. Rank r holds one table
 * E [rows, D] (its shard of the tables) and, for the whole global batch of B samples, a bag of L row
 * indices per sample, I [B, L]. It pools P_r[b] = Σ_l E[I[b, l]] for every sample (the kernel's
 * `gather`), and an all-to-all sends each batch shard (B/R samples) to the rank that owns those
 * samples, so rank d ends with its samples' pooled vectors from every table.
 *
 * The layout is `allToAllLayout`'s, destination-major then source: P [R·B, D], where rows
 * d·B + r·(B/R) + j hold sample d·(B/R) + j pooled from rank r's table. Rank r computes the slots
 * (d, r) for every d, at the same coordinates that the chunk r → d moves them to, so rank d's output
 * is the block of rows [d·B, (d+1)·B): out [R·(B/R), D], source-major. The grid is
 * (destination shard, tile of the shard, column tile): the tiles of one shard complete that
 * destination's chunk, so the fused kernel sends it as soon as they have stored.
 *
 * Shape: m = B (global batch), n = D (embedding width), k = rows of each table. Block: m samples
 * per tile (a power of two up to 64 dividing B/R), n columns per tile; block.k is not used.
 */
import { add, buildModule, mul, type Box, type ChunkPlan, type ChunkSpec, type Module } from '@syncopate/ir';
import { allToAll } from '@syncopate/passes';
import { checkRank, positiveInteger, UsageError } from './errors.js';
import { tensorOf } from './tensor.js';
import { BLOCK_MN } from './gemm.js';
import { mulberry32, smallIntegers, streamSeed } from './random.js';
import type { BlockShape, TensorData, Workload, WorkloadOptions } from './types.js';

export const DEFAULT_POOLING = 8;
/** Samples per tile: a power of two that divides each rank's batch shard. */
export const EMBED_BLOCK_M = [1, 2, 4, 8, 16, 32, 64] as const;
/** f32 holds every integer up to 2^24 exactly: the largest table a row index can address. */
const MAX_ROWS = 2 ** 24;

/**
 * The row a gather reads for index `x` in a table of `rows` rows: truncated toward zero and clamped
 * into [0, rows), NaN to row 0 (the semantics of the IR's `gather`).
 */
export function gatherRow(x: number, rows: number): number {
  if (!(x >= 0)) return 0;
  return x >= rows ? rows - 1 : Math.trunc(x);
}

interface EmbedConfig {
  readonly ranks: number;
  /** B, D, table rows, L. */
  readonly batch: number;
  readonly width: number;
  readonly rows: number;
  readonly pooling: number;
  /** B/R: the samples each rank owns. */
  readonly shard: number;
  readonly block: BlockShape;
}


/** The largest power of two up to `cap` that divides `n`. */
function largestPow2Dividing(n: number, cap: number): number {
  let p = cap;
  while (n % p !== 0) p /= 2;
  return p;
}

/** Checks the options; throws `UsageError` naming the first problem. */
export function embedConfig(o: WorkloadOptions): EmbedConfig {
  positiveInteger('embed-a2a: ranks', o.ranks);
  positiveInteger('embed-a2a: B (shape m)', o.shape.m);
  positiveInteger('embed-a2a: D (shape n)', o.shape.n);
  positiveInteger('embed-a2a: table rows (shape k)', o.shape.k);
  if (o.dtype !== 'f32' && o.dtype !== 'f16') throw new UsageError(`dtype must be f32 or f16, got ${String(o.dtype)}`);
  const pooling = o.pooling ?? DEFAULT_POOLING;
  positiveInteger('embed-a2a: pooling', pooling);
  if (o.chunksPerRank !== undefined) positiveInteger('embed-a2a: chunksPerRank', o.chunksPerRank);
  const { m: batch, n: width, k: rows } = o.shape;
  if (batch % o.ranks !== 0) {
    throw new UsageError(`embed-a2a: B = ${batch} is not a multiple of the ${o.ranks} ranks; every rank owns B/R samples`);
  }
  if (rows > MAX_ROWS) throw new UsageError(`embed-a2a: ${rows} table rows is more than the 2^24 that an f32 index addresses exactly`);
  // Pooled values are sums of L values in [-2, 2]; f16 holds integers exactly up to 2048.
  if (o.dtype === 'f16' && 2 * pooling > 2048) throw new UsageError(`embed-a2a: pooling ${pooling} is too large for exact f16 sums (at most 1024)`);
  const shard = batch / o.ranks;
  if (o.chunksPerRank !== undefined && o.chunksPerRank > shard) {
    throw new UsageError(`embed-a2a: chunksPerRank ${o.chunksPerRank} is more than the ${shard} samples of a batch shard`);
  }
  const block = o.block ?? { m: largestPow2Dividing(shard, 32), n: Math.min(64, Math.max(16, 2 ** Math.ceil(Math.log2(width)))), k: 1 };
  if (!(EMBED_BLOCK_M as readonly number[]).includes(block.m) || shard % block.m !== 0) {
    throw new UsageError(`embed-a2a: block m = ${block.m} must be one of ${EMBED_BLOCK_M.join(', ')} and divide the ${shard} samples of a batch shard`);
  }
  if (!(BLOCK_MN as readonly number[]).includes(block.n)) throw new UsageError(`embed-a2a: block n = ${block.n} must be one of ${BLOCK_MN.join(', ')}`);
  return { ranks: o.ranks, batch, width, rows, pooling, shard, block };
}

/** The embedding bag as a local kernel: pool every sample, store it in its destination's slot for this rank. */
export function embedBagKernel(c: EmbedConfig, dtype: 'f32' | 'f16'): Module {
  const { ranks, batch, width, rows, pooling, shard } = c;
  const { m: bm, n: bn } = c.block;
  return buildModule('embed_a2a', { ranks }, (mb) => {
    const E = mb.tensor('E', [rows, width], dtype);
    const I = mb.tensor('I', [batch, pooling], 'f32');
    const P = mb.tensor('P', [ranks * batch, width], dtype);
    mb.kernel('embed_bag', [ranks, shard / bm, Math.ceil(width / bn)], (kb) => {
      const rank = kb.rankId('rank');
      const dst = kb.programId(0, 'dst');
      const pm = kb.programId(1, 'pm');
      const pn = kb.programId(2, 'pn');
      const [acc] = kb.for(0, pooling, 1, [kb.zeros([bm, bn], dtype, 'acc')], (l, [acc]) => {
        const idx = kb.load(I, [add(mul(dst, shard), mul(pm, bm)), l], [bm, 1], 'idx');
        const picked = kb.gather(E, idx, mul(pn, bn), bn, 'picked');
        return [kb.add(acc, picked, 'sum')];
      }, 'l');
      // Slot (dst, rank) of the all-to-all layout: where the chunk rank → dst picks it up.
      kb.store(P, [add(mul(dst, batch), mul(rank, shard), mul(pm, bm)), mul(pn, bn)], acc);
    });
  });
}

/** `allToAll` over P, each pair's slot cut into `chunksPerRank` pieces of rows moved at its step. */
export function embedPlan(c: EmbedConfig, chunksPerRank: number): ChunkPlan {
  const splits = Array.from({ length: c.ranks }, () => Array<number>(c.ranks).fill(c.shard));
  const plan = allToAll({ ranks: c.ranks, tensor: { name: 'P', shape: [c.ranks * c.batch, c.width] }, axis: 0, splits });
  if (chunksPerRank === 1) return plan;
  const chunks = plan.chunks.flatMap((chunk): ChunkSpec[] => {
    const lo = chunk.region.lo[0]!;
    return Array.from({ length: chunksPerRank }, (_, p) => {
      const from = lo + Math.floor((p * c.shard) / chunksPerRank);
      const to = lo + Math.floor(((p + 1) * c.shard) / chunksPerRank);
      return { ...chunk, region: { lo: [from, 0], hi: [to, c.width] } };
    });
  });
  return { ...plan, chunks };
}

const zeros = (ranks: number, size: number): Float32Array[] => Array.from({ length: ranks }, () => new Float32Array(size));


export const embedA2a: Workload = {
  name: 'embed-a2a',
  description: 'Embedding bag + All-to-All (DLRM): rank r pools Σ_l E_r[I_r[b,l]] for all M = B samples (N = D wide, K table rows, L = 8); rank d gets its B/R samples from every table: rows [d·B, (d+1)·B) of P',
  defaults: { m: 128, n: 64, k: 512 },
  defaultRanks: 4,
  outputs: ['P'],
  build(o): { kernel: Module; plan: ChunkPlan } {
    const c = embedConfig(o);
    return { kernel: embedBagKernel(c, o.dtype), plan: embedPlan(c, o.chunksPerRank ?? 1) };
  },
  inputs(o, seed) {
    const c = embedConfig(o);
    const E = zeros(c.ranks, c.rows * c.width).map((e, r) => {
      const next = smallIntegers(mulberry32(streamSeed(seed, 'E', r)));
      for (let i = 0; i < e.length; i++) e[i] = next();
      return e;
    });
    const I = zeros(c.ranks, c.batch * c.pooling).map((ix, r) => {
      const next = mulberry32(streamSeed(seed, 'I', r));
      for (let i = 0; i < ix.length; i++) ix[i] = Math.floor(next() * c.rows);
      return ix;
    });
    return { E, I, P: zeros(c.ranks, c.ranks * c.batch * c.width) };
  },
  reference(o, inputs) {
    const c = embedConfig(o);
    const { ranks, batch, width, rows, pooling, shard } = c;
    const E = tensorOf(inputs, 'E', ranks, rows * width);
    const I = tensorOf(inputs, 'I', ranks, batch * pooling);
    const P = zeros(ranks, ranks * batch * width).map((p, d) => {
      for (let r = 0; r < ranks; r++) {
        for (let j = 0; j < shard; j++) {
          const sample = d * shard + j;
          const out = (d * batch + r * shard + j) * width;
          for (let l = 0; l < pooling; l++) {
            const row = gatherRow(I[r]![sample * pooling + l]!, rows) * width;
            for (let x = 0; x < width; x++) p[out + x]! += E[r]![row + x]!;
          }
        }
      }
      return p;
    });
    return { P };
  },
  checkedRegion(o, tensor, rank): Box {
    const c = embedConfig(o);
    if (tensor !== 'P') throw new UsageError(`embed-a2a: ${tensor} is not an output; the output is P`);
    checkRank(rank, c.ranks);
    return { lo: [rank * c.batch, 0], hi: [(rank + 1) * c.batch, c.width] };
  },
};
