/** What running a workload takes and what it reports: shared by `runWorkload` (run.ts) and the CLI. */
import type { Summary } from './stats.js';
import type { ProcessesReport } from './process-report.js';
import type { BlockShape, GatherPlan, ReductionPlan, WorkloadDType, WorkloadName, WorkloadShape } from '../workloads/types.js';

export type RunOrder = 'row-major' | 'column-major' | 'grouped' | 'chunk-arrival';
export const RUN_ORDERS: readonly RunOrder[] = ['row-major', 'column-major', 'grouped', 'chunk-arrival'];
export type RunBackend = 'gpu-signal' | 'peer-copy' | 'auto';
export const RUN_BACKENDS: readonly RunBackend[] = ['auto', 'gpu-signal', 'peer-copy'];
/** How dots lower: SIMT, subgroup matrices (tensor cores), or the device's best (`auto`; core/matmul-target.ts). */
export type RunTarget = 'auto' | 'simt' | 'subgroup-matrix';
export const RUN_TARGETS: readonly RunTarget[] = ['auto', 'simt', 'subgroup-matrix'];

export interface RunOptions {
  readonly workload: WorkloadName;
  readonly ranks: number;
  readonly shape: WorkloadShape;
  readonly dtype: WorkloadDType;
  readonly chunksPerRank?: number;
  /** gemm-rs, gemv-ar: ring or one-shot reduction (see `WorkloadOptions.reduction`). */
  readonly reduction?: ReductionPlan;
  /** ag-gemm, ring-attn: ring or one-shot gather (see `WorkloadOptions.gather`). */
  readonly gather?: GatherPlan;
  readonly block?: BlockShape;
  /** `embed-a2a`'s pooling factor L (see `WorkloadOptions.pooling`). */
  readonly pooling?: number;
  /** The tile order `reorder-tiles` writes (default chunk-arrival). */
  readonly order: RunOrder;
  /** Force one comm backend for every chunk, or let placement choose (`auto`). */
  readonly backend: RunBackend;
  /** How dots lower (default `auto`); a `codegen.target` given to runWorkload takes precedence. */
  readonly target?: RunTarget;
  /** Seed of the inputs (`Workload.inputs`). */
  readonly seed: number;
  /** GPU devices to place the ranks on (default 1); chunks between devices travel by peer-copy. */
  readonly devices?: number;
  /** Ranks on each device (default: ranks / devices, rounded up). */
  readonly ranksPerDevice?: number;
  /**
   * Over several devices, how the transfers between them are scheduled (CodegenOptions.phasing):
   * `overlap` (default) beside compute, `sequential` before the tiles that wait for them and after
   * those that send them. A `codegen.phasing` given to runWorkload takes precedence.
   */
  readonly phasing?: 'overlap' | 'sequential';
  /** false: the devices the run opens skip Dawn's bounds checks (`OpenGpuOptions.robustness`). */
  readonly robustness?: boolean;
  /**
   * Check about this many rows (axis 0) of each output, spread over it, instead of all: the timed
   * kernel checked at GPU shapes, where the full CPU reference would take minutes (the GEMMs compute
   * only these rows of it; see `Workload.reference`). Every column of a sampled row is checked.
   */
  readonly verifyRows?: number;
}

export interface RunReport {
  readonly workload: string;
  readonly shape: WorkloadShape;
  readonly ranks: number;
  /** GPU devices the ranks were placed on. */
  readonly devices: number;
  readonly backend: string;
  /** The chunk plan that ran, by name (e.g. `one-shot-reduce-scatter(@C, axis=0)`): defaults may depend on the placement. */
  readonly plan: string;
  readonly order: string;
  readonly dtype: WorkloadDType;
  /** How the kernel's dots were lowered. */
  readonly target?: 'simt' | 'subgroup-matrix';
  /** The tile of the kernel's first dot (M×N of its result, K of its operands), where it has one. */
  readonly block?: BlockShape;
  /** Over several devices: how the transfers between them were scheduled (RunOptions.phasing). */
  readonly phasing?: 'overlap' | 'sequential';
  /** Every output matched the reference on its checked region. */
  readonly verified: boolean;
  readonly maxAbsError: number;
  /** Time of the fused kernel, all ranks, in milliseconds: the median of the timed runs after a checked one. */
  readonly fusedMs: number;
  /** Median, fastest and slowest of the timed runs. */
  readonly timings: Summary;
  /** Phases (dispatches) per device. */
  readonly phases: readonly number[];
  /** How `fusedMs` was measured: GPU timestamps, or the host's clock where the adapter has none. */
  readonly timing: 'timestamp-query' | 'wall-clock';
  /** With `timeCommunication`: GPU time per run of the phases that run no tiles, each timed on its own. */
  readonly commMs?: Summary;
  /** The adapter's description, e.g. `llvmpipe (LLVM 19.1.7, 256 bits)`. */
  readonly adapter: string;
  /** Whether Dawn bounds-checked the kernels' memory accesses (false: `disable_robustness`). */
  readonly robustness: boolean;
  /** Under an MPI job: how many processes and hosts ran, and which ranks each ran where. */
  readonly processes?: ProcessesReport;
}
