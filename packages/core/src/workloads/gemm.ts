/**
 * The two GEMM workloads of the paper: AllGather + GEMM (`ag-gemm`) and GEMM + ReduceScatter
 * (`gemm-rs`), each as the local GEMM of `gemmKernel` plus a ring plan template, with inputs and an
 * exact CPU reference.
 */
import { gemmKernel, ownedBox, sharded, shardRange, type Box, type ChunkPlan, type Module } from '@syncopate/ir';
import { oneShotReduceScatter, ringReduceScatter } from '@syncopate/passes';
import { gatherTemplate } from './gather.js';
import { checkMatrixOptions, checkRank, UsageError } from './errors.js';
import { mulberry32, smallIntegers, streamSeed } from './random.js';
import { fillRegion, gemmAccumulate, tensorOf } from './tensor.js';
import { gemmTolerance } from './tolerance.js';
import type { BlockShape, ReductionPlan, TensorData, Workload, WorkloadDType, WorkloadOptions, WorkloadShape } from './types.js';

export const BLOCK_MN = [16, 32, 64, 128] as const;
export const BLOCK_K = [8, 16, 32] as const;
/** f16 also takes 64-deep steps, the tensor-core tile's (two 64-deep f32 tiles overflow workgroup memory). */
export const BLOCK_K_F16 = [...BLOCK_K, 64] as const;
/** f16 tiles may also be 256 wide, the tensor-core tile's 128x256x16. */
export const BLOCK_MN_F16 = [...BLOCK_MN, 256] as const;

/**
 * The reduction gemm-rs uses unless told (see `WorkloadOptions.reduction`), by how many devices its
 * ranks span. One device: one-shot, whose partials of an output tile are summed once by the last tile
 * over it (fused f16 4096x4096 on one H100 at 4 and 8 ranks 0.85 and 1.28 ms, the ring's 1.11 and 1.82).
 * Several: the ring, which sends fewer bytes between devices (fused at 4 ranks on two H200s 4.32 ms,
 * one-shot 4.61). benchmarks/README.md, 2026-11-26 (session of 20:31 UTC).
 */
export function defaultReduction(devices = 1): ReductionPlan {
  return devices > 1 ? 'ring' : 'one-shot';
}

/** The smallest power of two >= x (1 for x <= 1). */
function ceilPow2(x: number): number {
  return x <= 1 ? 1 : 2 ** Math.ceil(Math.log2(x));
}

/**
 * `tile` shrunk for a small shape: no side larger than the shape's rounded up to a power of two, M and
 * N at least 16, K at least `minK`.
 */
export function shrinkBlock(tile: BlockShape, shape: WorkloadShape, minK: number): BlockShape {
  const side = (t: number, s: number, min: number) => Math.max(min, Math.min(t, ceilPow2(s)));
  return { m: side(tile.m, shape.m, 16), n: side(tile.n, shape.n, 16), k: side(tile.k, shape.k, minK) };
}

/** 64x64x32 tiles, shrunk for small shapes: `m`, `n` from {16, 32, 64}, `k` from {8, 16, 32}. */
export function defaultBlock(shape: WorkloadShape): BlockShape {
  return shrinkBlock({ m: 64, n: 64, k: 32 }, shape, 8);
}

/** Outputs at least this large (rows, columns) take SIMT_GEMM_TILE in f32. */
const SIMT_GEMM_MIN_OUTPUT = { m: 1024, n: 512 } as const;
const SIMT_GEMM_TILE: BlockShape = { m: 128, n: 128, k: 8 };

/**
 * The GEMM workloads' tile where none is given (ag-gemm, gemm-rs, a2a-gemm's experts; f16 on tensor
 * cores takes `wideTensorCoreBlock` instead): in f32, 128x128x8 where the output C is at least 1024 x 512,
 * else defaultBlock (f16 on SIMT keeps it too: 128x128x8 was measured in f32 only). 128x128x8 was the fastest f32 SIMT tile on the
 * H100 (32.1 TFLOP/s at 4096³) and the suite's GEMM rows set it; against the old default 64x64x32, in
 * one process (`syncopate tune`, two H200s): fused ag-gemm 4096x2048x4096 on 2 GPUs 4.31 against 6.67
 * ms, gemm-rs 4096x4096x2048 4.15 against 6.84, ag-gemm 4096x1024x4096, 4 ranks on one GPU, 4.43
 * against 9.57 (benchmarks/README.md, 2026-11-26, call 5). Small outputs keep the smaller tile: a
 * 128x128 tile leaves most of a GPU idle there.
 */
export function simtGemmBlock(shape: WorkloadShape, dtype: WorkloadDType): BlockShape {
  const large = shape.m >= SIMT_GEMM_MIN_OUTPUT.m && shape.n >= SIMT_GEMM_MIN_OUTPUT.n;
  return dtype === 'f32' && large ? SIMT_GEMM_TILE : defaultBlock(shape);
}

/**
 * A tile for dots on subgroup matrices (tensor cores): 128x128x64, shrunk for small shapes (K at least
 * one 16-deep matrix). The GEMM workloads now take `wideTensorCoreBlock`; this one stays among the
 * tuner's. On the H100 128x256x16 ran the square GEMM faster (237.6 against 205.1 TFLOP/s at 8192³) but
 * the workloads' own GEMMs slower (gemm-rs, 4 ranks, 4096x4096x1024 a rank: 0.993 ms of compute against
 * 0.697; benchmarks/gemm.md, 2026-11-25 calls 7 and 8).
 */
export function tensorCoreBlock(shape: WorkloadShape): BlockShape {
  return shrinkBlock({ m: 128, n: 128, k: 64 }, shape, 16);
}

/**
 * ag-gemm's and gemm-rs's tile on subgroup matrices: 128x256x32, shrunk like tensorCoreBlock. On the
 * H100 the tuner found it fastest inside ag-gemm (8 ranks, 4096x512x4096 a rank: fused 1.21 → 1.00 ms
 * against 128x128x64; benchmarks/README.md, 2026-11-25 night, call 7), and inside gemm-rs once it
 * reduced one-shot (half the tiles, half the arrives: fused at 2 / 4 / 8 ranks 0.758 / 0.828 / 1.181 →
 * 0.708 / 0.765 / 1.090 ms; 2026-11-26, session of 20:31, call 10).
 */
export function wideTensorCoreBlock(shape: WorkloadShape): BlockShape {
  return shrinkBlock({ m: 128, n: 256, k: 32 }, shape, 16);
}

/** Checks what both GEMM workloads need; throws `UsageError` naming the first problem. */
export function validateGemmOptions(workload: string, o: WorkloadOptions): BlockShape {
  checkMatrixOptions(workload, o);
  if (o.shape.m < o.ranks) {
    throw new UsageError(`${workload}: M = ${o.shape.m} is smaller than the ${o.ranks} ranks; every rank needs at least one row`);
  }
  const block = o.block ?? simtGemmBlock(o.shape, o.dtype);
  const sides: readonly number[] = o.dtype === 'f16' ? BLOCK_MN_F16 : BLOCK_MN;
  const ks: readonly number[] = o.dtype === 'f16' ? BLOCK_K_F16 : BLOCK_K;
  if (!sides.includes(block.m) || !sides.includes(block.n) || !ks.includes(block.k)) {
    throw new UsageError(`block ${block.m}x${block.n}x${block.k}: m and n must be one of ${sides.join(', ')}, k one of ${ks.join(', ')} for ${o.dtype}`);
  }
  return block;
}

function kernelFor(name: string, distribute: 'ag' | 'rs', o: WorkloadOptions): Module {
  const block = validateGemmOptions(name, o);
  const { m, n, k } = o.shape;
  return gemmKernel(
    { m, n, k, blockM: block.m, blockN: block.n, blockK: block.k, dtype: o.dtype },
    { ranks: o.ranks, distribute, name: name.replace('-', '_') },
  );
}

const zeros = (o: WorkloadOptions, rows: number, cols: number): Float32Array[] =>
  Array.from({ length: o.ranks }, () => new Float32Array(rows * cols));

/** Each rank's own random values over `region(rank)` of a [rows, cols] tensor; zeros elsewhere. */
function randomTensor(o: WorkloadOptions, seed: number, name: string, rows: number, cols: number, region: (rank: number) => Box): Float32Array[] {
  return zeros(o, rows, cols).map((data, rank) => {
    fillRegion(data, [rows, cols], region(rank), smallIntegers(mulberry32(streamSeed(seed, name, rank))));
    return data;
  });
}


function checkOutput(workload: string, tensor: string): void {
  if (tensor !== 'C') throw new UsageError(`${workload}: ${tensor} is not an output; the output is C`);
}

const whole = (rows: number, cols: number): Box => ({ lo: [0, 0], hi: [rows, cols] });

/** AllGather + GEMM: A [M,K] sharded on rows, gathered by a ring; each rank computes C_r = A · B_r. */
export const agGemm: Workload = {
  name: 'ag-gemm',
  description: 'AllGather + GEMM: C_r = allgather(A) · B_r, A [M,K] sharded on rows',
  defaults: { m: 256, n: 256, k: 256 },
  defaultRanks: 4,
  outputs: ['C'],
  tensorCoreBlock: (o) => (o.dtype === 'f16' ? wideTensorCoreBlock(o.shape) : undefined),
  // Integers in [-2, 2] (smallIntegers' default): exact (0) up to K = 2^22, then the f32 bound.
  tolerance: (o) => gemmTolerance(o.shape.k, 2, 2, true),
  build(o): { kernel: Module; plan: ChunkPlan } {
    const kernel = kernelFor('ag-gemm', 'ag', o);
    const { m, k } = o.shape;
    const plan = gatherTemplate(o)({ ranks: o.ranks, tensor: { name: 'A', shape: [m, k] }, axis: 0, chunksPerRank: o.chunksPerRank ?? 1 });
    return { kernel, plan };
  },
  inputs(o, seed) {
    validateGemmOptions('ag-gemm', o);
    const { m, n, k } = o.shape;
    return {
      A: randomTensor(o, seed, 'A', m, k, (rank) => ownedBox([m, k], sharded(0), o.ranks, rank)),
      B: randomTensor(o, seed, 'B', k, n, () => whole(k, n)),
      C: zeros(o, m, n),
    };
  },
  reference(o, inputs, rows) {
    validateGemmOptions('ag-gemm', o);
    const { m, n, k } = o.shape;
    const shards = tensorOf(inputs, 'A', o.ranks, m * k);
    const B = tensorOf(inputs, 'B', o.ranks, k * n);
    // The gathered A: each row range from the rank that owns it.
    const A = new Float32Array(m * k);
    shards.forEach((shard, rank) => {
      const [lo, hi] = shardRange(m, o.ranks, rank);
      A.set(shard.subarray(lo * k, hi * k), lo * k);
    });
    const C = B.map((b) => {
      const c = new Float32Array(m * n);
      gemmAccumulate(c, A, b, o.shape, [0, m], rows);
      return c;
    });
    return { C };
  },
  checkedRegion(o, tensor, rank) {
    checkOutput('ag-gemm', tensor);
    checkRank(rank, o.ranks);
    return whole(o.shape.m, o.shape.n);
  },
};

/**
 * GEMM + ReduceScatter: each rank computes a partial C_r = A_r · B_r; a reduce-scatter (`defaultReduction`) leaves
 * rank d with the rows of its shard of Σ_r C_r.
 */
export const gemmRs: Workload = {
  name: 'gemm-rs',
  description: 'GEMM + ReduceScatter: C = Σ_r A_r · B_r, rank d keeps its row shard of C',
  defaults: { m: 256, n: 256, k: 256 },
  defaultRanks: 4,
  outputs: ['C'],
  tensorCoreBlock: (o) => (o.dtype === 'f16' ? wideTensorCoreBlock(o.shape) : undefined),
  defaultReduction,
  // Σ over ranks of K-term products: K·R terms of integers in [-2, 2].
  tolerance: (o) => gemmTolerance(o.shape.k * o.ranks, 2, 2, true),
  build(o): { kernel: Module; plan: ChunkPlan } {
    const kernel = kernelFor('gemm-rs', 'rs', o);
    const { m, n } = o.shape;
    const template = (o.reduction ?? defaultReduction(o.devices)) === 'ring' ? ringReduceScatter : oneShotReduceScatter;
    const plan = template({ ranks: o.ranks, tensor: { name: 'C', shape: [m, n] }, axis: 0, chunksPerRank: o.chunksPerRank ?? 1 });
    return { kernel, plan };
  },
  inputs(o, seed) {
    validateGemmOptions('gemm-rs', o);
    const { m, n, k } = o.shape;
    return {
      A: randomTensor(o, seed, 'A', m, k, () => whole(m, k)),
      B: randomTensor(o, seed, 'B', k, n, () => whole(k, n)),
      C: zeros(o, m, n),
    };
  },
  reference(o, inputs, rows) {
    validateGemmOptions('gemm-rs', o);
    const { m, n, k } = o.shape;
    const A = tensorOf(inputs, 'A', o.ranks, m * k);
    const B = tensorOf(inputs, 'B', o.ranks, k * n);
    const C = zeros(o, m, n).map((c, d) => {
      const [lo, hi] = shardRange(m, o.ranks, d);
      A.forEach((a, r) => gemmAccumulate(c, a, B[r]!, o.shape, [lo, hi], rows));
      return c;
    });
    return { C };
  },
  checkedRegion(o, tensor, rank) {
    checkOutput('gemm-rs', tensor);
    checkRank(rank, o.ranks);
    return ownedBox([o.shape.m, o.shape.n], sharded(0), o.ranks, rank);
  },
};
