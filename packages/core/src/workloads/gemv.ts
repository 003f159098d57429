/**
 * GEMV + AllReduce (`gemv-ar`): the row-parallel linear layer of decode-time tensor parallelism. The
 * hidden dimension K is sharded over the ranks: rank r holds X_r, its columns of the activations
 * X [M, K] (M a small batch), and W_r, its rows of the weights W [K, N] (`shardRange`'s balanced
 * split; every rank's slice is ⌈K/R⌉ wide, a shorter share padded with zeros). Each computes the
 * partial Y_r = X_r · W_r of Y [M, N]; a ring all-reduce (reduce-scatter, then all-gather, of column
 * slabs of Y) leaves every rank with Y = Σ_r Y_r. The local kernel is a GEMM whose tile is as tall as
 * the batch.
 */
import { buildModule, mul, partialSum, replicated, shardRange, type ChunkPlan, type Module } from '@syncopate/ir';
import { allReduce, oneShotAllGather, oneShotReduceScatter, type TemplateOptions } from '@syncopate/passes';
import { checkMatrixOptions, checkRank, UsageError } from './errors.js';
import { BLOCK_K, BLOCK_MN } from './gemm.js';
import { mulberry32, smallIntegers, streamSeed } from './random.js';
import { fillRegion, gemmAccumulate, tensorOf } from './tensor.js';
import type { BlockShape, ReductionPlan, TensorData, Workload, WorkloadOptions, WorkloadShape } from './types.js';

/** Tile heights for the batch: a power of two up to 128 (a GEMV's batch is usually 1-16). */
export const GEMV_BLOCK_M = [1, 2, 4, 8, 16, 32, 64, 128] as const;

const ceilPow2 = (x: number) => (x <= 1 ? 1 : 2 ** Math.ceil(Math.log2(x)));
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
/** Columns of X (rows of W) every rank holds: ⌈K/R⌉. */
const sliceWidth = (k: number, ranks: number) => Math.ceil(k / Math.max(1, ranks));

/**
 * The whole batch in one tile row (M rounded up to a power of two, at most 16), and narrow column
 * tiles with a deep K step, so that many workgroups stream W at once: `n` from {16, 32, 64}, `k` 32
 * (shrunk for small shapes).
 */
export function defaultGemvBlock(shape: WorkloadShape, ranks: number): BlockShape {
  return {
    m: clamp(ceilPow2(shape.m), 1, 16),
    n: clamp(ceilPow2(shape.n), 16, 64),
    k: clamp(ceilPow2(sliceWidth(shape.k, ranks)), 8, 32),
  };
}


/**
 * gemv-ar's reduction unless told: one-shot. Its all-gather never reads again a region it rewrote, so
 * its parts can be a tile each (gpu-signal chunk-table.ts), where the ring's must stay row slices: on the
 * H100 (f32, 4 ranks, 16x8192x8192) the fused one-shot kernel ran 0.277 ms, verified in 6 of 6 runs, the
 * fused ring 0.538 (benchmarks/README.md, 2026-11-25).
 */
export const GEMV_DEFAULT_REDUCTION: ReductionPlan = 'one-shot';

/**
 * All-reduce in two steps: every rank adds its partial of shard d into rank d (step 0), then every
 * rank copies its reduced shard to all others (step 1).
 */
function oneShotAllReduce(o: TemplateOptions): ChunkPlan {
  const rs = oneShotReduceScatter(o);
  const ag = oneShotAllGather(o);
  return { name: `one-shot-all-reduce(@${o.tensor.name}, axis=${o.axis})`, ranks: o.ranks, chunks: [...rs.chunks, ...ag.chunks.map((c) => ({ ...c, step: 1 }))] };
}

/** Checks the options; throws `UsageError` naming the first problem. Returns the tile shape. */
export function validateGemvOptions(o: WorkloadOptions): BlockShape {
  checkMatrixOptions('gemv-ar', o);
  if (o.shape.n < o.ranks) {
    throw new UsageError(`gemv-ar: N = ${o.shape.n} is smaller than the ${o.ranks} ranks; the all-reduce gives every rank at least one column of Y`);
  }
  const block = o.block ?? defaultGemvBlock(o.shape, o.ranks);
  const okM = (GEMV_BLOCK_M as readonly number[]).includes(block.m);
  const okN = (BLOCK_MN as readonly number[]).includes(block.n);
  if (!okM || !okN || !(BLOCK_K as readonly number[]).includes(block.k)) {
    throw new UsageError(
      `block ${block.m}x${block.n}x${block.k}: m must be one of ${GEMV_BLOCK_M.join(', ')}, n one of ${BLOCK_MN.join(', ')}, k one of ${BLOCK_K.join(', ')}`,
    );
  }
  return block;
}

/** Y [M,N] (a partial sum) = X [M, ⌈K/R⌉] · W [⌈K/R⌉, N], every rank on its own slices. */
export function gemvKernel(o: WorkloadOptions, block: BlockShape): Module {
  const { m, n } = o.shape;
  const kr = sliceWidth(o.shape.k, o.ranks);
  return buildModule('gemv_ar', { ranks: o.ranks }, (mb) => {
    const X = mb.tensor('X', [m, kr], o.dtype, replicated());
    const W = mb.tensor('W', [kr, n], o.dtype, replicated());
    const Y = mb.tensor('Y', [m, n], 'f32', partialSum());
    mb.kernel('gemv', [Math.ceil(m / block.m), Math.ceil(n / block.n)], (kb) => {
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const [acc] = kb.for(0, kr, block.k, [kb.zeros([block.m, block.n], 'f32', 'acc')], (kk, [acc]) => {
        const x = kb.load(X, [mul(pm, block.m), kk], [block.m, block.k], 'x');
        const w = kb.load(W, [kk, mul(pn, block.n)], [block.k, block.n], 'w');
        return [kb.dot(x, w, acc, 'd')];
      });
      kb.store(Y, [mul(pm, block.m), mul(pn, block.n)], acc);
    });
  });
}


/**
 * Each rank's own small integers over a [rows, cols] tensor, in the part its share of K covers:
 * `[0, share)` along axis `kAxis`; the padding beyond stays zero.
 */
function randomSlices(o: WorkloadOptions, seed: number, name: string, rows: number, cols: number, kAxis: 0 | 1): Float32Array[] {
  return Array.from({ length: o.ranks }, (_, rank) => {
    const [lo, hi] = shardRange(o.shape.k, o.ranks, rank);
    const next = smallIntegers(mulberry32(streamSeed(seed, name, rank)));
    const data = new Float32Array(rows * cols);
    fillRegion(data, [rows, cols], { lo: [0, 0], hi: kAxis === 0 ? [hi - lo, cols] : [rows, hi - lo] }, next);
    return data;
  });
}

export const gemvAr: Workload = {
  name: 'gemv-ar',
  description: 'GEMV + AllReduce: Y = Σ_r X_r · W_r on every rank, K sharded; M batch rows, N outputs, K hidden',
  defaults: { m: 16, n: 256, k: 1024 },
  defaultRanks: 4,
  outputs: ['Y'],
  defaultReduction: () => GEMV_DEFAULT_REDUCTION,
  build(o): { kernel: Module; plan: ChunkPlan } {
    const block = validateGemvOptions(o);
    const kernel = gemvKernel(o, block);
    const { m, n } = o.shape;
    const collective = { ranks: o.ranks, tensor: { name: 'Y', shape: [m, n] }, axis: 1, chunksPerRank: o.chunksPerRank ?? 1 };
    const plan = (o.reduction ?? GEMV_DEFAULT_REDUCTION) === 'ring' ? allReduce(collective) : oneShotAllReduce(collective);
    return { kernel, plan };
  },
  inputs(o, seed) {
    validateGemvOptions(o);
    const { m, n, k } = o.shape;
    const kr = sliceWidth(k, o.ranks);
    return {
      X: randomSlices(o, seed, 'X', m, kr, 1),
      W: randomSlices(o, seed, 'W', kr, n, 0),
      Y: Array.from({ length: o.ranks }, () => new Float32Array(m * n)),
    };
  },
  reference(o, inputs, rows) {
    validateGemvOptions(o);
    const { m, n, k } = o.shape;
    const kr = sliceWidth(k, o.ranks);
    const X = tensorOf(inputs, 'X', o.ranks, m * kr);
    const W = tensorOf(inputs, 'W', o.ranks, kr * n);
    const sum = new Float32Array(m * n);
    X.forEach((x, r) => gemmAccumulate(sum, x, W[r]!, { m, n, k: kr }, [0, m], rows));
    return { Y: X.map(() => sum.slice()) };
  },
  checkedRegion(o, tensor, rank) {
    if (tensor !== 'Y') throw new UsageError(`gemv-ar: ${tensor} is not an output; the output is Y`);
    checkRank(rank, o.ranks);
    return { lo: [0, 0], hi: [o.shape.m, o.shape.n] };
  },
};
