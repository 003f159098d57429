/**
 * Random valid-looking cases of `syncopate run`, like issue 44's: every workload, 1-8 ranks on one
 * or two devices, f16 and f32, odd shapes, a random tile order, chunks per rank, gather and reduction
 * plans and (for the GEMMs) block shapes. Case i of seed s is drawn from its own stream, so a case is
 * reproduced from (s, i) alone, whatever the count, the shard or the cases before it.
 */
import {
  BLOCK_K,
  BLOCK_MN,
  COLLECTIVE_PLANS,
  mulberry32,
  PLAN_WORKLOADS,
  RUN_ORDERS,
  streamSeed,
  WORKLOAD_NAMES,
  type BlockShape,
  type RunOptions,
  type WorkloadName,
} from '@syncopate/core';

/** What `syncopate run` takes, as the fuzz draws it. */
export type FuzzCase = RunOptions & { readonly index: number; readonly devices: number };

export interface FuzzLimits {
  /** Largest M, N and K drawn (GEMV's K and embed-a2a's table rows go to twice this). */
  readonly maxDim: number;
  readonly maxRanks: number;
  /** 2 where two devices can be opened; 1 keeps every case on one. */
  readonly maxDevices: number;
  readonly workloads: readonly WorkloadName[];
}

export const DEFAULT_LIMITS: FuzzLimits = { maxDim: 192, maxRanks: 8, maxDevices: 2, workloads: WORKLOAD_NAMES };

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const between = (random: Random, lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

/** A size up to `max`: mostly odd or off the tile grid (where bugs live), now and then a multiple of 16. */
function size(random: Random, max: number, min = 1): number {
  const x = between(random, min, Math.max(min, max));
  if (random() < 0.25) return Math.max(min, Math.min(max, Math.round(x / 16) * 16) || min);
  return random() < 0.5 ? Math.min(max, x | 1) : x;
}

/** A count divisible by `ranks`, up to about `max`: workloads that split a dimension evenly. */
const multipleOf = (random: Random, ranks: number, max: number) => ranks * between(random, 1, Math.max(1, Math.floor(max / ranks)));

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const lcm = (a: number, b: number) => (a / gcd(a, b)) * b;

function shapeFor(workload: WorkloadName, ranks: number, random: Random, max: number): RunOptions['shape'] {
  switch (workload) {
    case 'gemv-ar':
      return { m: between(random, 1, 16), n: size(random, max, ranks), k: size(random, 2 * max) };
    case 'embed-a2a':
      return { m: multipleOf(random, ranks, max), n: size(random, 96), k: size(random, 2 * max) };
    case 'ring-attn': {
      // S splits over the ranks and into whole KV blocks of D rows.
      const d = size(random, 64);
      return { m: multipleOf(random, lcm(ranks, d), max), n: d, k: 1 };
    }
    default:
      return { m: size(random, max, ranks), n: size(random, max), k: size(random, max) };
  }
}

const GEMM_WORKLOADS: readonly WorkloadName[] = ['ag-gemm', 'gemm-rs', 'a2a-gemm'];

/** Case `index` of `seed`. */
export function drawCase(seed: number, index: number, limits: FuzzLimits = DEFAULT_LIMITS): FuzzCase {
  const random = mulberry32(streamSeed(seed, 'fuzz-case', index));
  const workload = pick(random, limits.workloads);
  const ranks = between(random, 1, limits.maxRanks);
  const devices = ranks > 1 && limits.maxDevices > 1 && random() < 0.5 ? 2 : 1;
  const block: BlockShape | undefined = GEMM_WORKLOADS.includes(workload) && random() < 0.3 ? { m: pick(random, BLOCK_MN), n: pick(random, BLOCK_MN), k: pick(random, BLOCK_K) } : undefined;
  const shape = shapeFor(workload, ranks, random, limits.maxDim);
  // embed-a2a cuts a rank's batch shard into chunks: at most one a sample.
  const chunksPerRank = random() < 0.4 ? undefined : Math.min(between(random, 1, 4), workload === 'embed-a2a' ? shape.m / ranks : 4);
  return {
    index,
    workload,
    ranks,
    devices,
    shape,
    dtype: random() < 0.5 ? 'f16' : 'f32',
    order: pick(random, RUN_ORDERS),
    backend: 'auto',
    seed: between(random, 1, 1000),
    ...(chunksPerRank === undefined ? {} : { chunksPerRank }),
    ...(PLAN_WORKLOADS.gather.includes(workload) && random() < 0.7 ? { gather: pick(random, COLLECTIVE_PLANS) } : {}),
    ...(PLAN_WORKLOADS.reduction.includes(workload) && random() < 0.7 ? { reduction: pick(random, COLLECTIVE_PLANS) } : {}),
    ...(block ? { block } : {}),
    ...(workload === 'embed-a2a' && random() < 0.3 ? { pooling: between(random, 1, 12) } : {}),
  };
}

/** The `syncopate run` command line of a case (block and pooling have no flag: the JSON line has them). */
export function caseCommand(c: FuzzCase): string {
  const flags = [
    `--ranks ${c.ranks}`,
    c.devices > 1 ? `--devices ${c.devices}` : '',
    `--m ${c.shape.m} --n ${c.shape.n} --k ${c.shape.k}`,
    `--dtype ${c.dtype}`,
    c.chunksPerRank === undefined ? '' : `--chunks-per-rank ${c.chunksPerRank}`,
    c.gather ? `--gather ${c.gather}` : '',
    c.reduction ? `--reduction ${c.reduction}` : '',
    `--order ${c.order}`,
    `--seed ${c.seed}`,
  ];
  return `syncopate run ${c.workload} ${flags.filter(Boolean).join(' ')}`;
}
