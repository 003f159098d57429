/**
 * The autotuner: for one workload configuration on one adapter, find the GEMM tile, tile order and
 * chunk count at which its fused variant runs fastest, each run verified. Its key names the adapter,
 * workload, shape, dtype, ranks and devices; the CLI keeps results in a JSON cache on disk
 * (cli/tune-cache.ts: Node only, so this module stays usable in a browser).
 *
 * The search is coordinate descent, so that trials grow as tiles + orders × chunk counts rather than
 * their product: first every candidate tile (`tuneBlocks`, or `blocks`) at the first order and chunk
 * count, then every order × chunk count at the fastest verified tile (the pair already timed is not
 * timed again). It assumes the tile, which sets the compute rate, ranks the same at any order and
 * chunk count. An explicit tile equal to the one the workload's own choice ran is skipped. Last, the
 * fastest candidate is timed against sequential phasing (no transfer beside compute: the sequential
 * variant, `candidateBackend`) in alternating rounds (phasingTrial), and a tuned run never keeps an
 * overlap that loses: over two devices with one queue each it can (two H200s: a2a-gemm's fused run
 * 0.90–0.93x sequential; the write-up is in git history, `git show 7ead932:benchmarks/README.md`), and
 * on one device where there is little communication to hide (one H100: a2a-gemm's 0.1 ms of moves
 * beside 2.5 ms of GEMM, fused 0.98x: benchmarks/results/h100-2026-11-27n/call3/suite.jsonl).
 * Before that, over more than two ranks (where both plans are one), a workload whose gather or
 * reduction is not named is timed with the other plan at the fastest candidate, and the faster kept:
 * the plan, so every variant of a tuned run moves its data alike. Gathers one-shot (ring attention over
 * two H100s ran 1.5x faster so; on one H100 the f16 ag-gemm's fused kernel ran slower; the write-up is
 * in git history, `git show e8c8730:benchmarks/README.md`); reductions the other way than the placement's
 * default (`Workload.defaultReduction`: gemm-rs one-shot on one device, the ring over several, each measured
 * faster there only on the rows run: `git show da4e168:benchmarks/README.md`).
 *
 * A candidate that throws (a tile whose pipeline the adapter cannot create: 128x128x64 f16 needs more
 * workgroup memory than lavapipe's 32 KiB) is a failed trial with its message, not the end of the
 * tune; `tune` throws only when no candidate verified.
 */
import { benchPhasings, candidateBackend } from './bench.js';
import { devicesOf } from '../api/run-devices.js';
import { runWorkload, type RunWorkloadOptions } from './run.js';
import { sameBlock, tuneBlocks } from './tune-blocks.js';
import { getWorkload, PLAN_WORKLOADS, type BlockShape, type GatherPlan, type ReductionPlan } from '../workloads/index.js';
import { RUN_ORDERS, type RunOrder } from './run-report.js';

export { blockLabel, tuneBlocks } from './tune-blocks.js';

export interface TuneCandidate {
  readonly order: RunOrder;
  readonly chunksPerRank: number;
  /** The GEMM tile; absent: the workload's own choice (`wideTensorCoreBlock` on tensor cores, else `simtGemmBlock`). */
  readonly block?: BlockShape;
  /** `sequential`: transfers between devices not beside compute (RunOptions.phasing); absent: overlap. */
  readonly phasing?: 'sequential';
  /** `one-shot`: the input gathered so (WorkloadOptions.gather); absent: as the tune was asked. */
  readonly gather?: GatherPlan;
  /** The partial sums reduced so (WorkloadOptions.reduction); absent: as the tune was asked. */
  readonly reduction?: ReductionPlan;
}

export interface TuneTrial extends TuneCandidate {
  /** Median of the timed runs; NaN when it did not verify (and is not a candidate). */
  readonly ms: number;
  readonly verified: boolean;
  /** Why the candidate could not run (its message); absent when it ran. */
  readonly error?: string;
  /**
   * The phasing trial (sequential): overlap's speedup over it (sequential ms / overlap ms), the median
   * of their alternating rounds' ratios (sequential is kept where it is below 1), and its 95% interval.
   */
  readonly overlapRatio?: number;
  readonly overlapInterval?: readonly [number, number];
  /** The phasing trial's rounds (TuneOptions.phasingRounds). */
  readonly rounds?: number;
}

export interface TuneResult {
  readonly key: string;
  /** `block` absent: the workload's own tile (and in entries cached before tiles were tuned). */
  readonly best: TuneCandidate & { readonly ms: number };
  readonly trials: readonly TuneTrial[];
  readonly adapter: string;
  readonly date: string;
}

/** How far a tune is: `total` drops when a tile turns out to be one already run. */
export interface TuneProgress {
  readonly done: number;
  readonly total: number;
}

export const DEFAULT_TUNE_ORDERS: readonly RunOrder[] = ['row-major', 'grouped', 'chunk-arrival'];
export const DEFAULT_TUNE_CHUNKS: readonly number[] = [1, 2, 4];

type Configuration = Pick<RunWorkloadOptions, 'workload' | 'shape' | 'dtype' | 'ranks' | 'devices' | 'ranksPerDevice' | 'gather' | 'reduction'>;

export function tuneKey(adapter: string, o: Configuration): string {
  const { m, n, k } = o.shape;
  // A plan named (not the workload's default) keys apart; keys without one stay as they were.
  const plans = `${o.gather ? ` gather=${o.gather}` : ''}${o.reduction ? ` reduction=${o.reduction}` : ''}`;
  return `${adapter} | ${o.workload} ${m}x${n}x${k} ${o.dtype} ranks=${o.ranks} devices=${o.devices ?? 1} per-device=${o.ranksPerDevice ?? 'auto'}${plans}`;
}

export interface TuneOptions extends Omit<RunWorkloadOptions, 'order' | 'chunksPerRank' | 'backend' | 'block'> {
  readonly orders?: readonly RunOrder[];
  readonly chunksPerRank?: readonly number[];
  /** Candidate tiles, `undefined` for the workload's own (default `tuneBlocks(workload, shape, dtype)`). */
  readonly blocks?: readonly (BlockShape | undefined)[];
  /** Rounds of the phasing trial (default PHASING_ROUNDS_PER_RUN × `timedRuns`: 40 at its default of 10). */
  readonly phasingRounds?: number;
  readonly onTrial?: (trial: TuneTrial, progress: TuneProgress) => void;
}

/**
 * The phasing trial's rounds for each of a candidate's timed runs. A round runs only the two programs
 * (milliseconds each), so rounds are cheap beside the trial's sessions, compiles and checks. On two
 * H200s, at one a run (ten rounds) the trials of the suite's two-device rows had intervals as wide as
 * 0.59–2.24 (a2a-gemm); at four, with rounds that open untimed (timed-rounds.ts), 0.98–1.12 at the
 * widest, and they agreed with the bench's own rounds (benchmarks/README.md, Method notes;
 * benchmarks/results/2gpu-2026-11-27o/call4/suite.jsonl).
 */
export const PHASING_ROUNDS_PER_RUN = 4;

/**
 * Overlap against sequential phasing for the fastest overlapped candidate, the two alone in alternating
 * rounds (benchPhasings: both sessions open, each round runs both, the speedup is the median of the
 * rounds' ratios with its bootstrap interval): trials timed one after the other flipped the choice
 * between calls on two H200s (`git show f5a7c01:benchmarks/README.md`). Sequential is kept
 * where overlap is slower in the median of the rounds' ratios: keeping it only where overlap was slower
 * beyond the interval left gemm-rs f16 overlapped at 0.91x (two H100s; the result files are in git
 * history, `git show 8a80f49:benchmarks/results/2gpu-2026-11-26i/call5/suite.jsonl`). The trial's `ms`
 * is the sequential variant's median in those rounds, `overlapRatio` the rounds' sequential / overlap.
 */
async function phasingTrial(o: TuneOptions, overlap: TuneTrial): Promise<{ readonly trial: TuneTrial; readonly keepSequential: boolean }> {
  const { order, chunksPerRank, block } = overlap;
  const plans = planOf(overlap);
  const candidate = { order, chunksPerRank, ...(block && { block }), ...plans, phasing: 'sequential' as const };
  try {
    const rounds = o.phasingRounds ?? PHASING_ROUNDS_PER_RUN * (o.timedRuns ?? 10);
    const r = await benchPhasings({ ...o, order, chunksPerRank, block, ...plans, runs: rounds, warmup: o.warmupRuns ?? 3 });
    const { verified } = r.sequential;
    const trial = { ...candidate, ms: verified ? r.sequential.ms.median : NaN, verified, overlapRatio: r.overlapRatio, overlapInterval: r.overlapInterval, rounds };
    return { trial, keepSequential: verified && r.overlap.verified && r.overlapRatio < 1 };
  } catch (e) {
    return { trial: { ...candidate, ms: NaN, verified: false, error: e instanceof Error ? e.message : String(e) }, keepSequential: false };
  }
}

/** The plans a candidate names (gather, reduction), for the runs and results that carry them on. */
function planOf(c: TuneCandidate): Pick<TuneCandidate, 'gather' | 'reduction'> {
  return { ...(c.gather && { gather: c.gather }), ...(c.reduction && { reduction: c.reduction }) };
}

/** The other plan the tune times (see the module comment); undefined where there is none to try. */
function otherPlan(o: TuneOptions, devices: number): Pick<TuneCandidate, 'gather' | 'reduction'> | undefined {
  if (o.ranks <= 2) return undefined;
  if (PLAN_WORKLOADS.gather.includes(o.workload)) return o.gather === undefined ? { gather: 'one-shot' } : undefined;
  const own = getWorkload(o.workload).defaultReduction?.(devices);
  return own !== undefined && o.reduction === undefined ? { reduction: own === 'ring' ? 'one-shot' : 'ring' } : undefined;
}

function fastest(trials: readonly TuneTrial[]): TuneTrial | undefined {
  return trials.filter((t) => t.verified).sort((a, b) => a.ms - b.ms)[0];
}

function distinct(blocks: readonly (BlockShape | undefined)[]): (BlockShape | undefined)[] {
  return blocks.filter((b, i) => blocks.findIndex((c) => sameBlock(b, c)) === i);
}

/** Times the candidates (see the module comment) and returns the fastest verified one; throws when none verified. */
export async function tune(o: TuneOptions): Promise<TuneResult> {
  const orders = o.orders ?? DEFAULT_TUNE_ORDERS;
  const chunks = o.chunksPerRank ?? DEFAULT_TUNE_CHUNKS;
  const blocks = distinct(o.blocks ?? tuneBlocks(o.workload, o.shape, o.dtype));
  const unknown = orders.find((order) => !RUN_ORDERS.includes(order));
  if (unknown !== undefined) throw new RangeError(`tune: unknown order '${unknown}'`);
  const [firstOrder, firstChunks] = [orders[0], chunks[0]];
  if (firstOrder === undefined || firstChunks === undefined || blocks.length === 0) throw new RangeError('tune: needs at least one order, chunk count and tile');

  const trials: TuneTrial[] = [];
  const errors: unknown[] = [];
  const tilesRun: BlockShape[] = [];
  let untimedTiles = blocks;
  // every order × chunk count but the first, which the tiles were timed at
  const pairs = orders.flatMap((order) => chunks.map((chunksPerRank) => ({ order, chunksPerRank }))).slice(1);
  const planTrial = otherPlan(o, devicesOf(o));
  let trialsAfterTiles = pairs.length + (planTrial ? 1 : 0) + 1;
  let adapter = 'unknown adapter';
  const time = async (candidate: TuneCandidate): Promise<void> => {
    let trial: TuneTrial;
    try {
      const r = await runWorkload({ ...o, ...candidate, block: candidate.block, backend: candidateBackend(candidate.phasing), timedRuns: o.timedRuns ?? 10, warmupRuns: o.warmupRuns ?? 3 });
      adapter = r.adapter;
      if (r.block) tilesRun.push(r.block);
      trial = { ...candidate, ms: r.verified ? r.fusedMs : NaN, verified: r.verified };
    } catch (e) {
      errors.push(e);
      trial = { ...candidate, ms: NaN, verified: false, error: e instanceof Error ? e.message : String(e) };
    }
    // a tile the workload's own choice already ran would time the same kernel again
    untimedTiles = untimedTiles.filter((b) => b === undefined || !tilesRun.some((t) => sameBlock(t, b)));
    trials.push(trial);
    o.onTrial?.(trial, { done: trials.length, total: trials.length + untimedTiles.length + trialsAfterTiles });
  };

  while (untimedTiles.length > 0) {
    const block = untimedTiles[0];
    untimedTiles = untimedTiles.slice(1);
    await time({ order: firstOrder, chunksPerRank: firstChunks, ...(block && { block }) });
  }
  const fastestTile = fastest(trials);
  const tile = fastestTile ? fastestTile.block : blocks[0];
  for (const pair of pairs) {
    trialsAfterTiles--;
    await time({ ...pair, ...(tile && { block: tile }) });
  }
  const ownPlanBest = fastest(trials);
  if (planTrial && ownPlanBest) {
    trialsAfterTiles--;
    const { order, chunksPerRank, block } = ownPlanBest;
    await time({ order, chunksPerRank, ...(block && { block }), ...planTrial });
  }
  const overlapBest = fastest(trials);
  let best = overlapBest;
  if (overlapBest) {
    trialsAfterTiles--;
    const phasing = await phasingTrial(o, overlapBest);
    trials.push(phasing.trial);
    o.onTrial?.(phasing.trial, { done: trials.length, total: trials.length });
    if (phasing.keepSequential) best = phasing.trial;
  }

  if (best === undefined) {
    // every trial threw: the configuration itself is at fault, so its own error (a UsageError, say) stands
    if (errors.length === trials.length) throw errors[0];
    const failed = trials.find((t) => t.error !== undefined);
    const why = failed ? `; ${errors.length} could not run (first: ${failed.error})` : '';
    throw new Error(`tune: no candidate of ${o.workload} matched the CPU reference${why}`);
  }
  const { order, chunksPerRank, block, phasing, ms } = best;
  return { key: tuneKey(adapter, o), best: { order, chunksPerRank, ...(block && { block }), ...(phasing && { phasing }), ...planOf(best), ms }, trials, adapter, date: new Date().toISOString() };
}
