/**
 * All-to-All + grouped GEMM + All-to-All (`a2a-gemm`): a mixture-of-experts layer with one expert per
 * rank. Rank r routes its M tokens (rows of hidden size K) to the experts, `splits[r][d]` to expert
 * d, unevenly; a dispatch all-to-all moves them, expert d computes Y = T · W_d (N outputs) on the
 * tokens it received, and a combine all-to-all returns each result row to the rank its token came
 * from. Both all-to-alls are one plan, so the fused kernel starts the expert GEMM on the tokens that
 * have arrived while the rest are in flight, and returns result rows while other tiles compute.
 *
 * Layout (`allToAllLayout`, destination-major, then source): T [R·C, K] and Y [R·C, N], where block
 * d = rows [d·C, (d+1)·C) holds what expert d receives, C (the capacity) is the largest expert load
 * rounded up to the tile height, and a row sits at the same place on every rank that holds it. An
 * expert with fewer tokens than C has padding rows in its block (after its own tokens): they hold
 * zeros and are not checked. The GEMM runs on block `rank` (the kernel's one use of `rank_id`).
 */
import { add, buildModule, mul, replicated, shardRange, type Box, type ChunkPlan, type ChunkSpec, type Module } from '@syncopate/ir';
import { allToAll, allToAllLayout } from '@syncopate/passes';
import { checkMatrixOptions, checkRank, UsageError } from './errors.js';
import { BLOCK_K, BLOCK_MN, simtGemmBlock } from './gemm.js';
import { mulberry32, smallIntegers, streamSeed } from './random.js';
import { fillRegion, gemmAccumulate, tensorOf } from './tensor.js';
import type { BlockShape, TensorData, Workload, WorkloadOptions } from './types.js';

/** Everything the kernel, plan, inputs and reference share, worked out from the options. */
export interface A2aLayout {
  readonly ranks: number;
  /** `splits[r][d]`: tokens rank r sends to expert d (each row sums to M). */
  readonly splits: readonly (readonly number[])[];
  /** The splits with each expert's padding counted as tokens it keeps: they tile T's rows. */
  readonly padded: readonly (readonly number[])[];
  /** Rows of each expert's block: its largest load rounded up to `block.m`. */
  readonly capacity: number;
  /** `offsets[r][d]`: the first row of the tokens r sends to d, in T and Y alike. */
  readonly offsets: readonly (readonly number[])[];
  readonly rows: number;
  readonly block: BlockShape;
}

/**
 * Uneven, seeded routing: rank r gives expert d a share of its M tokens in proportion to a weight
 * drawn from [0.25, 3.25) (so one expert can get 13 times another's), rounded by largest remainder.
 * Depends only on M and the rank count, so that a workload's plan is fixed by its options.
 */
export function defaultSplits(ranks: number, m: number): number[][] {
  return Array.from({ length: ranks }, (_, r) => {
    const next = mulberry32(streamSeed(m, 'a2a-splits', r + ranks * 1000));
    const weights = Array.from({ length: ranks }, () => 0.25 + 3 * next());
    const total = weights.reduce((a, b) => a + b, 0);
    const exact = weights.map((w) => (m * w) / total);
    const counts = exact.map(Math.floor);
    const byRemainder = exact.map((x, d) => [x - counts[d]!, d] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    const left = m - counts.reduce((a, b) => a + b, 0);
    for (let i = 0; i < left; i++) counts[byRemainder[i]![1]]!++;
    return counts;
  });
}


/** Checks the options and works out the layout; throws `UsageError` naming the first problem. */
export function a2aLayout(o: WorkloadOptions): A2aLayout {
  checkMatrixOptions('a2a-gemm', o);
  const R = o.ranks;
  const splits = o.splits ?? defaultSplits(R, o.shape.m);
  if (splits.length !== R || splits.some((row) => row.length !== R || row.some((x) => !Number.isInteger(x) || x < 0))) {
    throw new UsageError(`a2a-gemm: splits must be a ${R}x${R} matrix of non-negative integers (tokens rank r sends to expert d)`);
  }
  const short = splits.findIndex((row) => row.reduce((a, b) => a + b, 0) !== o.shape.m);
  if (short >= 0) {
    throw new UsageError(`a2a-gemm: rank ${short} routes ${splits[short]!.reduce((a, b) => a + b, 0)} tokens, not M = ${o.shape.m}; each row of splits must sum to M`);
  }
  // The experts' GEMM takes the GEMM workloads' tile (M tokens a rank and N outputs size it).
  const block = o.block ?? simtGemmBlock(o.shape, o.dtype);
  const ok = (BLOCK_MN as readonly number[]).includes(block.m) && (BLOCK_MN as readonly number[]).includes(block.n);
  if (!ok || !(BLOCK_K as readonly number[]).includes(block.k)) {
    throw new UsageError(`block ${block.m}x${block.n}x${block.k}: m and n must be one of ${BLOCK_MN.join(', ')}, k one of ${BLOCK_K.join(', ')}`);
  }
  const loads = splits[0]!.map((_, d) => splits.reduce((n, row) => n + row[d]!, 0));
  const capacity = Math.max(1, Math.ceil(Math.max(...loads) / block.m)) * block.m;
  // Padding as tokens an expert keeps: its block then has `capacity` rows, and its own rows come first.
  const padded = splits.map((row, r) => row.map((x, d) => (d === r ? x + capacity - loads[d]! : x)));
  const { offsets } = allToAllLayout(padded);
  return { ranks: R, splits: splits.map((row) => [...row]), padded, capacity, offsets, rows: R * capacity, block };
}

/** Y = T · W on block `rank` of T: the expert's grouped GEMM over every token it received. */
export function a2aKernel(o: WorkloadOptions, layout: A2aLayout): Module {
  const { capacity, rows, block } = layout;
  const { n, k } = o.shape;
  return buildModule('a2a_gemm', { ranks: layout.ranks }, (mb) => {
    const T = mb.tensor('T', [rows, k], o.dtype, replicated());
    const W = mb.tensor('W', [k, n], o.dtype, replicated());
    const Y = mb.tensor('Y', [rows, n], 'f32', replicated());
    mb.kernel('expert_gemm', [capacity / block.m, Math.ceil(n / block.n)], (kb) => {
      const rank = kb.rankId('rank');
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const row = add(mul(rank, capacity), mul(pm, block.m));
      const [acc] = kb.for(0, k, block.k, [kb.zeros([block.m, block.n], 'f32', 'acc')], (kk, [acc]) => {
        const t = kb.load(T, [row, kk], [block.m, block.k], 't');
        const w = kb.load(W, [kk, mul(pn, block.n)], [block.k, block.n], 'w');
        return [kb.dot(t, w, acc, 'd')];
      });
      kb.store(Y, [row, mul(pn, block.n)], acc);
    });
  });
}

/** Rows `[lo, hi)` of a tensor with `cols` columns. */
const rowBox = (lo: number, hi: number, cols: number): Box => ({ lo: [lo, 0], hi: [hi, cols] });

/**
 * The dispatch of T (rank r → expert d at step (d − r) mod R − 1, `allToAll`'s) and the combine of Y
 * (expert d → rank r, R − 1 steps later), each (source, expert) slab cut into `chunksPerRank` chunks.
 */
export function a2aPlan(o: WorkloadOptions, layout: A2aLayout): ChunkPlan {
  const R = layout.ranks;
  const { n, k } = o.shape;
  const tensor = { name: 'T', shape: [layout.rows, k] };
  // Padding is an expert's own: allToAll sends nothing from a rank to itself.
  const dispatch = allToAll({ ranks: R, tensor, axis: 0, splits: layout.padded }).chunks;
  const pieces = (c: ChunkSpec): [number, number][] => {
    const [lo, hi] = [c.region.lo[0]!, c.region.hi[0]!];
    const count = Math.min(o.chunksPerRank ?? 1, hi - lo);
    return Array.from({ length: count }, (_, p) => {
      const [a, b] = shardRange(hi - lo, count, p);
      return [lo + a, lo + b];
    });
  };
  const chunks: ChunkSpec[] = [];
  for (const c of dispatch) for (const [lo, hi] of pieces(c)) chunks.push({ ...c, region: rowBox(lo, hi, k) });
  for (const c of dispatch) {
    for (const [lo, hi] of pieces(c)) chunks.push({ ...c, tensor: 'Y', region: rowBox(lo, hi, n), src: c.dst, dst: c.src, step: c.step + R - 1 });
  }
  return { name: `moe(dispatch @T, expert gemm, combine @Y; ${R} experts)`, ranks: R, chunks };
}


/** The (source, expert) pairs whose rows rank `rank` holds defined after the kernel: it sent them, or computed them. */
function pairsOf(layout: A2aLayout, rank: number): [number, number][] {
  const pairs: [number, number][] = [];
  for (let s = 0; s < layout.ranks; s++) {
    for (let d = 0; d < layout.ranks; d++) if ((s === rank || d === rank) && layout.splits[s]![d]! > 0) pairs.push([s, d]);
  }
  return pairs;
}

export const a2aGemm: Workload = {
  name: 'a2a-gemm',
  description: 'All-to-All + expert GEMM + All-to-All (MoE): M tokens a rank, K hidden, routed unevenly; Y = T · W_d, N outputs',
  defaults: { m: 128, n: 128, k: 128 },
  defaultRanks: 4,
  outputs: ['Y'],
  build(o) {
    const layout = a2aLayout(o);
    return { kernel: a2aKernel(o, layout), plan: a2aPlan(o, layout) };
  },
  inputs(o, seed) {
    const layout = a2aLayout(o);
    const { n, k } = o.shape;
    const tokens = Array.from({ length: o.ranks }, (_, r) => {
      const t = new Float32Array(layout.rows * k);
      const next = smallIntegers(mulberry32(streamSeed(seed, 'T', r)));
      layout.offsets[r]!.forEach((at, d) => fillRegion(t, [layout.rows, k], rowBox(at, at + layout.splits[r]![d]!, k), next));
      return t;
    });
    const weights = Array.from({ length: o.ranks }, (_, r) => Float32Array.from({ length: k * n }, smallIntegers(mulberry32(streamSeed(seed, 'W', r)))));
    return { T: tokens, W: weights, Y: Array.from({ length: o.ranks }, () => new Float32Array(layout.rows * n)) };
  },
  reference(o, inputs, rows) {
    const layout = a2aLayout(o);
    const { n, k } = o.shape;
    const T = tensorOf(inputs, 'T', o.ranks, layout.rows * k);
    const W = tensorOf(inputs, 'W', o.ranks, k * n);
    const Y = T.map((_, rank) => {
      const y = new Float32Array(layout.rows * n);
      // Token row i of source s through expert d's weights, wherever rank `rank` holds it.
      for (const [s, d] of pairsOf(layout, rank)) {
        const at = layout.offsets[s]![d]!;
        gemmAccumulate(y, T[s]!, W[d]!, { m: layout.rows, n, k }, [at, at + layout.splits[s]![d]!], rows);
      }
      return y;
    });
    return { Y };
  },
  checkedRegion(o, tensor, rank) {
    if (tensor !== 'Y') throw new UsageError(`a2a-gemm: ${tensor} is not an output; the output is Y`);
    checkRank(rank, o.ranks);
    const layout = a2aLayout(o);
    return pairsOf(layout, rank).map(([s, d]) => rowBox(layout.offsets[s]![d]!, layout.offsets[s]![d]! + layout.splits[s]![d]!, o.shape.n));
  },
};
