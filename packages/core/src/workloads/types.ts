/** What a workload is: a kernel and plan to compile, inputs to run it on, and the answer to check against. */
import type { Box, ChunkPlan, Module } from '@syncopate/ir';

export type WorkloadName = 'ag-gemm' | 'gemm-rs' | 'gemv-ar' | 'a2a-gemm' | 'embed-a2a' | 'ring-attn';
export type WorkloadDType = 'f32' | 'f16';
/** The plans a collective can take: hop by hop around the ring, or every rank straight to every other. */
export const COLLECTIVE_PLANS = ['ring', 'one-shot'] as const;
export type ReductionPlan = (typeof COLLECTIVE_PLANS)[number];
/** How ag-gemm and ring-attn gather their sharded input (`WorkloadOptions.gather`). */
export type GatherPlan = (typeof COLLECTIVE_PLANS)[number];
/** The workloads each plan option applies to (`WorkloadOptions.gather`, `.reduction`). */
export const PLAN_WORKLOADS: { readonly gather: readonly WorkloadName[]; readonly reduction: readonly WorkloadName[] } = { gather: ['ag-gemm', 'ring-attn'], reduction: ['gemm-rs', 'gemv-ar'] };
/** Rows (axis 0) of an output that a sampled check compares. */
export type RowSample = (row: number) => boolean;

export interface WorkloadShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

/** Tile sizes of the GEMM: `m`, `n` in {16, 32, 64, 128}, `k` in {8, 16, 32, 64}. */
export interface BlockShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

export interface WorkloadOptions {
  readonly ranks: number;
  readonly shape: WorkloadShape;
  readonly dtype: WorkloadDType;
  /** Each rank's shard moves as this many chunks (default 1). */
  readonly chunksPerRank?: number;
  /**
   * gemm-rs, gemv-ar: how the partial sums are reduced (default `one-shot`, but `ring` for gemm-rs
   * over several devices: `defaultReduction`). `ring`: R − 1 steps, each
   * rank adding its partial and forwarding the sum, so the adds into a shard run one after another.
   * `one-shot`: every rank adds its partial straight into the owner; where the ranks share a device
   * the adds into a shard merge into one pass by the last tile to finish (backends gpu-signal
   * chunk-table.ts). Chosen by measurement: benchmarks/README.md, reduce-scatter section.
   */
  readonly reduction?: ReductionPlan;
  /** How many devices the ranks span (default 1): gemm-rs's default reduction depends on it. */
  readonly devices?: number;
  /**
   * ag-gemm, ring-attn: how the sharded input (A; K and V) is gathered (default `ring`). `ring`: R − 1
   * steps, each rank forwarding the shard it received the step before, so a shard reaches the farthest
   * rank after R − 1 hops one after another. `one-shot`: every rank sends its shard straight to every
   * other at step 0: nothing waits for a hop before it, and ranks on one device take a shard once
   * per device (the transfers' byte runs merge).
   */
  readonly gather?: GatherPlan;
  /** Tile sizes (default: `defaultBlock(shape)`, 64x64x32 shrunk for small shapes; the GEMM workloads: `simtGemmBlock(shape, dtype)`). */
  readonly block?: BlockShape;
  /** `embed-a2a`: embedding rows summed per sample (the pooling factor L; default 8). */
  readonly pooling?: number;
  /** `a2a-gemm`: `splits[r][d]` tokens rank r routes to expert d, each row summing to M (default: seeded, uneven). */
  readonly splits?: readonly (readonly number[])[];
}

export type { TensorData } from '../api/row-major.js';
import type { TensorData } from '../api/row-major.js';

/** Where an output is defined: one box, or a list of disjoint boxes. */
export type CheckedRegion = Box | readonly Box[];

/** The boxes of a checked region. */
export function regionBoxes(region: CheckedRegion): readonly Box[] {
  return 'lo' in region ? [region] : region;
}

export interface Workload {
  readonly name: WorkloadName;
  /** One line, for `syncopate help`. */
  readonly description: string;
  /** A shape that runs in seconds on a 2-core CPU software adapter. */
  readonly defaults: WorkloadShape;
  /** The default rank count that goes with `defaults`. */
  readonly defaultRanks: number;
  /** Throws `UsageError` for options the workload cannot be built with. */
  build(o: WorkloadOptions): { kernel: Module; plan: ChunkPlan };
  /**
   * The tile to build with, when `o.block` is not given, where the dots lower to subgroup matrices
   * (the default tile is sized for the SIMT path); undefined where its dtype has none. Only for
   * workloads whose inputs do not depend on the tile.
   */
  tensorCoreBlock?(o: WorkloadOptions): BlockShape | undefined;
  /** gemm-rs, gemv-ar: the reduction `build` takes unless `o.reduction` names one, its ranks on `devices` devices. */
  defaultReduction?(devices: number): ReductionPlan;
  /**
   * Every tensor of the kernel, per rank. A sharded tensor holds data only in the rank's own shard
   * (zeros elsewhere); a rank-local input holds each rank's own data; outputs start as zeros.
   * Values are small integers in [-2, 2], so every product and sum the kernel makes is exact.
   */
  inputs(o: WorkloadOptions, seed: number): TensorData;
  /**
   * The expected value of each output tensor per rank, on `checkedRegion`; with `rows`, a workload may
   * compute only the output rows (axis 0) it holds (the GEMMs do: at GPU shapes the full reference takes
   * minutes) (zeros elsewhere: those
   * elements are not defined after the fused kernel).
   */
  reference(o: WorkloadOptions, inputs: TensorData, rows?: RowSample): TensorData;
  /**
   * The largest |actual − expected| on the checked region that still verifies (default 0: exact).
   * Only for workloads whose kernels cannot be exact in f32 (ring-attn's softmax uses exp).
   */
  tolerance?(o: WorkloadOptions): number;
  /** The tensors to check, e.g. `['C']`. */
  readonly outputs: readonly string[];
  /**
   * The elements of output `tensor` that are defined on `rank` after the fused kernel: one box, or
   * several disjoint ones where the defined rows are scattered (a2a-gemm's).
   */
  checkedRegion(o: WorkloadOptions, tensor: string, rank: number): CheckedRegion;
}
