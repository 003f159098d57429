/**
 * Random GEMM kernels with valid chunk plans, for the fuzz tests: `arbGemmCase()` draws a collective
 * (all-gather into A, reduce-scatter or all-reduce of a partial C), a template (ring or one-shot;
 * all-reduce is always a ring), ranks 1-8, a shape with at least one row per rank, tile sizes, chunks
 * per rank, whether chunks are also cut along K, a tile order and group size, a dtype and how many
 * elements a chunk part moves.
 * `buildGemmCase` turns a case into a kernel, a plan, seeded inputs and the exact CPU answer (through
 * the `ag-gemm` and `gemm-rs` workloads' `inputs` and `reference`), and the region of C each rank
 * must match.
 *
 * Also the fuzzers' settings: `FUZZ_RUNS` (how many cases), `FUZZ_GPU_RUNS` (how many run on the
 * GPU) and `FUZZ_SEED` / `FUZZ_PATH` (replay the failure fast-check reported).
 */
import fc from 'fast-check';
import {
  allReduce,
  gemmKernel,
  oneShotAllGather,
  oneShotReduceScatter,
  ownedBox,
  ringAllGather,
  ringReduceScatter,
  sharded,
  shardRange,
  type Box,
  type ChunkPlan,
  type Module,
} from '@syncopate/core';
import { workloads, type TensorData, type WorkloadOptions } from '../src/workloads/index.js';
import { type RunOrder } from '../src/tools/run-report.js';

export type Collective = 'all-gather' | 'reduce-scatter' | 'all-reduce';
export type Template = 'ring' | 'one-shot';

export interface GemmCase {
  readonly collective: Collective;
  /** `one-shot` has no all-reduce; such cases use the ring. */
  readonly template: Template;
  readonly ranks: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly blockM: 16 | 32 | 64;
  readonly blockN: 16 | 32 | 64;
  readonly blockK: 8 | 16 | 32;
  readonly chunksPerRank: number;
  /** All-gather only: each chunk cut in two along K at `kSplit` (so tiles meet chunks inside the K loop). */
  readonly kSplit: number | undefined;
  readonly order: RunOrder;
  readonly groupSize: number;
  readonly dtype: 'f32' | 'f16';
  /** Codegen's elements per chunk part (undefined: its default). */
  readonly partElements: number | undefined;
  /** How codegen cuts chunks that tiles store: a part per tile, or row slices. */
  readonly partShape: 'tiles' | 'rows';
  /** Seed of the inputs. */
  readonly seed: number;
}

export interface CaseLimits {
  readonly maxRanks: number;
  /** Largest M, N, K drawn. */
  readonly maxDim: number;
  readonly maxChunksPerRank: number;
}

/**
 * Small enough for the software adapter in CI. What costs there is not the run (milliseconds) but
 * LLVM compiling each new shader on its first dispatch, which grows with the chunks: 3-8 s for 2-4
 * ranks on a busy 2-core machine, minutes for 8 ranks (docs/reliability.md). Up to 3 ranks and 2
 * chunks a rank make at most 24 chunks (all-gather cut along K).
 */
export const TINY: CaseLimits = { maxRanks: 3, maxDim: 40, maxChunksPerRank: 2 };

export function arbGemmCase(limits: CaseLimits = TINY): fc.Arbitrary<GemmCase> {
  return fc
    .record({
      collective: fc.constantFrom<Collective>('all-gather', 'reduce-scatter', 'all-reduce'),
      template: fc.constantFrom<Template>('ring', 'one-shot'),
      ranks: fc.integer({ min: 1, max: limits.maxRanks }),
      m: fc.integer({ min: 1, max: limits.maxDim }),
      n: fc.integer({ min: 1, max: limits.maxDim }),
      k: fc.integer({ min: 1, max: limits.maxDim }),
      blockM: fc.constantFrom(16, 32, 64),
      blockN: fc.constantFrom(16, 32, 64),
      blockK: fc.constantFrom(8, 16, 32),
      chunksPerRank: fc.integer({ min: 1, max: limits.maxChunksPerRank }),
      kSplit: fc.option(fc.integer({ min: 1, max: limits.maxDim - 1 }), { nil: undefined }),
      order: fc.constantFrom<RunOrder>('row-major', 'column-major', 'grouped', 'chunk-arrival'),
      groupSize: fc.constantFrom(1, 2, 8),
      dtype: fc.constantFrom<'f32' | 'f16'>('f32', 'f32', 'f16'),
      partElements: fc.constantFrom(undefined, 32, 256),
      partShape: fc.constantFrom<'tiles' | 'rows'>('tiles', 'rows'),
      seed: fc.integer({ min: 0, max: 0xffff }),
    })
    .map((c) => ({
      ...c,
      // At least one row per rank (what the workloads ask); K split only inside K, and only for all-gather.
      m: Math.max(c.m, c.ranks),
      kSplit: c.collective === 'all-gather' && c.kSplit !== undefined && c.kSplit < c.k ? c.kSplit : undefined,
      template: c.collective === 'all-reduce' ? 'ring' : c.template,
    })) as fc.Arbitrary<GemmCase>;
}

/** One line that says the whole case, for failure messages. */
export function describeCase(c: GemmCase): string {
  return (
    `${c.template} ${c.collective} ranks=${c.ranks} ${c.m}x${c.n}x${c.k} tiles ${c.blockM}x${c.blockN}x${c.blockK} ` +
    `chunks/rank=${c.chunksPerRank}${c.kSplit === undefined ? '' : ` kSplit=${c.kSplit}`} order=${c.order}/${c.groupSize} ` +
    `${c.dtype} parts=${c.partShape}/${c.partElements ?? 'default'} seed=${c.seed}`
  );
}

/** Every chunk cut in two along axis 1 at `at`. */
function splitAlongK(plan: ChunkPlan, at: number): ChunkPlan {
  return {
    ...plan,
    chunks: plan.chunks.flatMap((c) => [
      { ...c, region: { lo: [...c.region.lo], hi: [c.region.hi[0]!, at] } },
      { ...c, region: { lo: [c.region.lo[0]!, at], hi: [...c.region.hi] } },
    ]),
  };
}

export interface BuiltCase {
  readonly kernel: Module;
  readonly plan: ChunkPlan;
  readonly passOptions: Readonly<Record<string, unknown>>;
  readonly workloadOptions: WorkloadOptions;
  /** The workload whose inputs and reference this case uses. */
  readonly workload: 'ag-gemm' | 'gemm-rs';
}

export function buildGemmCase(c: GemmCase): BuiltCase {
  const ag = c.collective === 'all-gather';
  const kernel = gemmKernel(
    { m: c.m, n: c.n, k: c.k, blockM: c.blockM, blockN: c.blockN, blockK: c.blockK, dtype: c.dtype },
    { ranks: c.ranks, distribute: ag ? 'ag' : 'rs', name: ag ? 'ag_gemm' : 'gemm_rs' },
  );
  const tensor = ag ? { name: 'A', shape: [c.m, c.k] } : { name: 'C', shape: [c.m, c.n] };
  const o = { ranks: c.ranks, tensor, axis: 0, chunksPerRank: c.chunksPerRank };
  let plan =
    c.collective === 'all-reduce'
      ? allReduce(o)
      : ag
        ? (c.template === 'ring' ? ringAllGather : oneShotAllGather)(o)
        : (c.template === 'ring' ? ringReduceScatter : oneShotReduceScatter)(o);
  if (c.kSplit !== undefined) plan = splitAlongK(plan, c.kSplit);
  return {
    kernel,
    plan,
    passOptions: { 'reorder-tiles': { order: c.order, groupSize: c.groupSize } },
    workloadOptions: {
      ranks: c.ranks,
      shape: { m: c.m, n: c.n, k: c.k },
      dtype: c.dtype,
      chunksPerRank: c.chunksPerRank,
      block: { m: c.blockM, n: c.blockN, k: c.blockK },
    },
    workload: ag ? 'ag-gemm' : 'gemm-rs',
  };
}

export interface Expected {
  readonly inputs: TensorData;
  /** C on every rank. */
  readonly c: readonly Float32Array[];
  /** The part of C each rank must match: all of it, or (reduce-scatter) its own rows. */
  readonly checked: (rank: number) => Box;
}

/** Seeded inputs and the exact answer, from the workloads' generators and CPU references. */
export function expectedFor(c: GemmCase, built: BuiltCase): Expected {
  const w = workloads[built.workload];
  const inputs = w.inputs(built.workloadOptions, c.seed);
  const reference = w.reference(built.workloadOptions, inputs).C!;
  const whole: Box = { lo: [0, 0], hi: [c.m, c.n] };
  if (c.collective === 'all-gather') return { inputs, c: reference, checked: () => whole };
  if (c.collective === 'reduce-scatter') return { inputs, c: reference, checked: (rank) => ownedBox([c.m, c.n], sharded(0), c.ranks, rank) };
  // All-reduce: every rank ends with all of Σ_r A_r·B_r; the reduce-scatter reference holds shard d on rank d.
  const sum = new Float32Array(c.m * c.n);
  reference.forEach((shard, d) => {
    const [lo, hi] = shardRange(c.m, c.ranks, d);
    sum.set(shard.subarray(lo * c.n, hi * c.n), lo * c.n);
  });
  return { inputs, c: reference.map(() => sum), checked: () => whole };
}

/** A positive integer from the environment, or `fallback`. */
export function envCount(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got '${text}'`);
  return n;
}

/**
 * fast-check's settings for a fuzz property: `numRuns` cases, and the seed (and path) of `FUZZ_SEED`
 * (and `FUZZ_PATH`) when set, to replay a failure. fast-check puts the seed and path of a failure in
 * its message (`{ seed: 1234, path: "5:0:2", endOnFailure: true }`), and vitest prints the message.
 */
export function fuzzParameters<T>(numRuns: number, options: { shrink?: boolean } = {}): fc.Parameters<T> {
  const seed = process.env.FUZZ_SEED;
  const path = process.env.FUZZ_PATH;
  return {
    numRuns,
    ...(seed ? { seed: Number(seed) } : {}),
    ...(path ? { path } : {}),
    // Without shrinking a failure is reported as found: shrinking GPU cases would take minutes.
    ...(options.shrink === false ? { endOnFailure: true } : {}),
  };
}
