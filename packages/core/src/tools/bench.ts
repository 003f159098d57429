/**
 * A workload three ways, same kernels, same transfers, same numerics, each verified against the CPU
 * reference before it is timed:
 *  - sequential: every chunk moves between dispatches, the whole collective before the kernel's
 *    tiles (ag-gemm) or after them (gemm-rs): no overlap;
 *  - decomposed: every chunk moves between dispatches, the kernel cut into a dispatch per arrival
 *    step so that chunks move beside the compute (stream-level overlap, as PyTorch's async tensor
 *    parallelism does it);
 *  - fused: chunks within a device move inside one dispatch (gpu-signal), between devices between
 *    phases (peer-copy): what `compile()` emits.
 */
import type { BlockShape } from '../workloads/index.js';
import type { RunReport } from './run-report.js';
import { mulberry32 } from '../workloads/random.js';
import { timeInRounds, type TimedPart } from './timed-rounds.js';
import { devicesOf } from '../api/run-devices.js';
import { runWorkload, type RunWorkloadOptions } from './run.js';
import { PeerCopier, placeRanks, type HostCopier, type HostCopyStores } from '@syncopate/runtime';
import { summarize, type Summary } from './stats.js';
import { burnGpus } from './gpu-burn.js';
import type { PlacedSession } from '../api/placed-session.js';
import type { PlacedKernels } from '@syncopate/backends';

/** What a placed lowering runs: each device's WGSL, tables and phases. */
function loweringKey(placed: PlacedKernels): string {
  return JSON.stringify(placed.devices.map(({ kernel, view }) => [kernel.wgsl, Array.from(kernel.tables.data), kernel.phases, view]));
}

export const BENCH_VARIANTS = ['sequential', 'decomposed', 'fused'] as const;
export type BenchVariant = (typeof BENCH_VARIANTS)[number];

/** How each variant runs: its chunks' backend and its phasing (CodegenOptions.phasing). */
export const VARIANT_OPTIONS: Record<BenchVariant, Pick<RunWorkloadOptions, 'backend'> & { phasing: 'overlap' | 'sequential' }> = {
  sequential: { backend: 'peer-copy', phasing: 'sequential' },
  decomposed: { backend: 'peer-copy', phasing: 'overlap' },
  fused: { backend: 'auto', phasing: 'overlap' },
};

/**
 * The backend a fused run at a phasing runs with. At sequential phasing every chunk moves between
 * dispatches, those within a device too: that is the sequential variant. Moved inside the kernel instead
 * (gpu-signal), a2a-gemm's within-device chunks kept a sequential-phased fused run at 0.96x the sequential
 * variant (two H200s), so a tuned choice not to overlap would still lose.
 */
export const candidateBackend = (phasing: 'overlap' | 'sequential' | undefined): 'auto' | 'peer-copy' => (phasing === 'sequential' ? 'peer-copy' : 'auto');

/**
 * A variant's backend and phasing; the fused variant takes `o.phasing` where given (a tuned choice,
 * autotune.ts), with the backend the tuner timed it with (`candidateBackend`).
 */
function variantOptions(o: BenchOptions, variant: BenchVariant): Pick<RunWorkloadOptions, 'backend' | 'codegen'> {
  if (variant === 'fused' && o.phasing === 'sequential') return { backend: candidateBackend(o.phasing), codegen: { ...o.codegen, phasing: o.phasing } };
  const { backend, phasing } = VARIANT_OPTIONS[variant];
  return { backend, codegen: { ...o.codegen, phasing } };
}

export interface BenchOptions extends Omit<RunWorkloadOptions, 'backend' | 'timedRuns' | 'warmupRuns'> {
  /** Check each variant against the CPU reference (default true; see RunWorkloadOptions.verify). */
  readonly verify?: boolean;
  /** Timed runs per variant (default 20). */
  readonly runs?: number;
  /** Untimed runs per variant before them (default 5). */
  readonly warmup?: number;
  /** Called after each variant (and after the compute-only run), e.g. for a progress bar. */
  readonly onVariant?: (variant: BenchVariant | 'compute-only', report: RunReport) => void;
  /** Also time the kernel without its transfers, for the overlap efficiency (default true). */
  readonly computeOnly?: boolean;
  /**
   * Over several devices: after each round a kernel that only computes (gpu-burn.ts) runs for this
   * many times the round's length, so that the GPUs spend most of the time computing and their clocks
   * stay where a busy job has them (benchVariantsInTurn). Default 2 where `warmupBusyMs` > 0 (GPUs), else 0.
   * Where it is above 0 and the host exposes `gc` (`node --expose-gc`), a full collection runs first, so
   * that none falls inside a round.
   */
  readonly busyBetweenRounds?: number;
}

export interface VariantResult {
  readonly ms: Summary;
  readonly verified: boolean;
  readonly maxAbsError: number;
  /** How chunks travelled, e.g. `peer-copy` or `gpu-signal+peer-copy`. */
  readonly backend: string;
  /** The chunk plan that ran (RunReport.plan). */
  readonly plan: string;
  /** Dispatches per run on each device. */
  readonly phases: readonly number[];
  /** How the dots lowered: SIMT or subgroup matrices (tensor cores). */
  readonly target?: 'simt' | 'subgroup-matrix';
  /** The GEMM tile that ran (RunReport.block), where the kernel has a dot. */
  readonly block?: BlockShape;
  /** Over several devices: how the transfers between them were scheduled (RunReport.phasing). */
  readonly phasing?: 'overlap' | 'sequential';
  /**
   * Over several devices: each round's time, in order (benchVariantsInTurn). Runs far apart in time
   * that differ by far more than neighbouring ones ran at different GPU clocks (two H200s: up to 2x).
   */
  readonly rounds?: readonly number[];
  /** Beside `rounds`: the variant's place in each round's order (0: first), for order effects (benchmarks' round-positions). */
  readonly positions?: readonly number[];
}

export interface BenchReport {
  readonly workload: string;
  readonly shape: RunReport['shape'];
  readonly ranks: number;
  readonly devices: number;
  readonly dtype: string;
  readonly order: string;
  readonly chunksPerRank: number;
  readonly adapter: string;
  /** Whether Dawn bounds-checked the kernels (RunReport.robustness). */
  readonly robustness: boolean;
  readonly timing: RunReport['timing'];
  readonly variants: Record<BenchVariant, VariantResult>;
  /**
   * Sequential / fused and decomposed / fused: on one device median over median; over several devices
   * the median of the rounds' ratios (medianRoundRatio), each from runs at one GPU clock state, with
   * its 95% bootstrap interval (roundRatioInterval).
   */
  readonly speedup: {
    readonly overSequential: number;
    readonly overDecomposed: number;
    readonly overSequentialInterval?: readonly [number, number];
    readonly overDecomposedInterval?: readonly [number, number];
  };
  /**
   * How much of the communication the fused variant hid: compute-only is the kernel compiled without
   * its plan (the same tiles, no chunk moves), timed like the variants; comm-only is the sequential
   * variant's communication timed on its own (`commMeasured`: on one device its phases that run no
   * tiles, GPU timestamps; on several, its runs without the tiles' phases, wall clock), or, on one
   * device without timestamps, sequential minus compute-only (derived); efficiency is
   * (sequential − fused) / min(compute-only, comm-only): 1 when the shorter of the two is fully hidden.
   * Absent when `computeOnly: false`.
   */
  readonly overlap?: {
    readonly computeOnlyMs: Summary;
    readonly commOnlyMs: number;
    readonly commMeasured: boolean;
    readonly efficiency: number;
    /**
     * Over several devices: the fused variant's own communication timed alone (its runs without the
     * tile phases: the transfers between devices and the phases that land them). Less than comm-only
     * where ranks share a device, since fused moves the chunks within a device inside its tiles'
     * dispatches rather than between phases. The cost model predicts fused from it.
     */
    readonly fusedCommOnlyMs?: number;
  };
  /**
   * Set where the fused and decomposed variants lowered to the same program (the same WGSL, tables and
   * phases on every device): ranks each on a device of their own have no chunk within a device, so
   * both move every chunk by peer-copy between the same phases, and their times differ by noise only.
   */
  readonly fusedIsDecomposed?: true;
  /**
   * Set where the fused and sequential variants lowered to the same program: a fused row at a tuned
   * sequential phasing (the tuner's trial had overlap slower). Its ratio to sequential is then that of
   * a program timed against itself, the rounds' noise (on two H200s 0.96–0.99x).
   */
  readonly fusedIsSequential?: true;
  /** Over several devices: how the peer copies crossed the host (runtime's host-copy.ts). */
  readonly hostCopy?: HostCopier['kind'];
  /** Over several devices, with the native host copy: how it wrote the destination (HostCopierOptions.stores). */
  readonly hostCopyStores?: HostCopyStores;
}

/**
 * The overlap figures of `BenchReport.overlap` from the sequential, fused and compute-only medians,
 * and the communication's when it was timed alone (else sequential minus compute-only).
 */
export function overlapEfficiency(sequentialMs: number, fusedMs: number, computeOnlyMs: number, measuredCommMs?: number): { commOnlyMs: number; efficiency: number } {
  const commOnlyMs = measuredCommMs ?? Math.max(0, sequentialMs - computeOnlyMs);
  const hideable = Math.min(computeOnlyMs, commOnlyMs);
  return { commOnlyMs, efficiency: hideable > 0 ? (sequentialMs - fusedMs) / hideable : NaN };
}

const variantResult = (report: RunReport, ms: Summary): VariantResult => ({
  ms,
  verified: report.verified,
  maxAbsError: report.maxAbsError,
  backend: report.backend,
  plan: report.plan,
  phases: report.phases,
  ...(report.target ? { target: report.target } : {}),
  ...(report.block ? { block: report.block } : {}),
  ...(report.phasing ? { phasing: report.phasing } : {}),
});

/** What timing the variants gives benchWorkload. */
interface TimedVariants {
  readonly variants: Record<BenchVariant, VariantResult>;
  /** The report of the last variant run (for the adapter, devices and timing of the bench). */
  readonly last: RunReport;
  /** Medians of the sequential and the fused variant's communication alone, where they were timed. */
  readonly commMs?: number;
  readonly fusedCommMs?: number;
  /** The kernel without its transfers, where it was timed beside the variants. */
  readonly compute?: { readonly report: RunReport; readonly ms: Summary };
  readonly fusedIsDecomposed?: boolean;
  readonly fusedIsSequential?: boolean;
  readonly hostCopy?: HostCopier['kind'];
  readonly hostCopyStores?: HostCopyStores;
}

/** Each variant in its own session, one after another; on one device each timed on the GPU. */
async function benchVariantsApart(o: BenchOptions): Promise<TimedVariants> {
  const variants = {} as Record<BenchVariant, VariantResult>;
  let last: RunReport | undefined;
  let commMs: number | undefined;
  const lowered = new Map<string, string>();
  for (const variant of BENCH_VARIANTS) {
    const report = await runWorkload({
      ...o,
      ...variantOptions(o, variant),
      timedRuns: o.runs ?? 20,
      warmupRuns: o.warmup ?? 5,
      onLowered: async (l) => {
        lowered.set(variant, loweringKey(l.placed));
        await o.onLowered?.(l);
      },
      // The sequential variant runs communication and compute apart: time the former on its own.
      ...(variant === 'sequential' ? { timeCommunication: o.runs ?? 20 } : {}),
    });
    if (variant === 'sequential') commMs = report.commMs?.median;
    variants[variant] = variantResult(report, report.timings);
    o.onVariant?.(variant, report);
    last = report;
  }
  return { variants, last: last!, ...(commMs === undefined ? {} : { commMs }), ...sameProgramFlags(lowered) };
}

/** Which variants the fused one lowered to exactly (`lowered`: each variant's loweringKey). */
function sameProgramFlags(lowered: ReadonlyMap<string, string>): Pick<TimedVariants, 'fusedIsDecomposed' | 'fusedIsSequential'> {
  const fused = lowered.get('fused');
  return { fusedIsDecomposed: fused !== undefined && fused === lowered.get('decomposed'), fusedIsSequential: fused !== undefined && fused === lowered.get('sequential') };
}

/**
 * A full collection where the host exposes one (`node --expose-gc`), between rounds rather than in
 * them: every mapped range of a transfer is an ArrayBuffer of external memory, and the collections
 * its pressure starts took 10–38 ms in a two-device run on two H200s (the result file is in git
 * history: `git show d909dbf:benchmarks/results/h200x2-2026-11-26d/call10/log.txt`), far longer than a
 * round's parts.
 */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') gc();
}

/** BenchOptions.busyBetweenRounds where the GPU's clocks move (warmupBusyMs > 0). */
const DEFAULT_BUSY_BETWEEN_ROUNDS = 2;

/**
 * The median over rounds of `numerator[r] / denominator[r]`: each round ran both parts back to back,
 * so a ratio compares two runs at one clock state, whichever state the round landed in.
 */
export function medianRoundRatio(numerator: readonly number[], denominator: readonly number[]): number {
  return summarize(roundRatios(numerator, denominator)).median;
}

/** Each round's numerator / denominator; the two must have run the same rounds. */
function roundRatios(numerator: readonly number[], denominator: readonly number[]): number[] {
  if (numerator.length !== denominator.length) throw new RangeError(`rounds: ${numerator.length} against ${denominator.length}`);
  return numerator.map((x, r) => x / denominator[r]!);
}

/**
 * Runs over several devices are timed on the host's clock, and two things move them besides the code:
 * the host's copies drift from one session to the next, and the GPUs' clocks follow the load with a lag
 * of seconds. On two H200s, under runs that mostly wait on the host, an SM clock sat at 345 MHz for
 * tens of seconds and took 2.5 s to climb back to 1,980 (nvidia-smi every 50 ms,
 * benchmarks/results/h200x2-2026-11-26b/call5/clocks.csv.xz): blocks of one program timed seconds apart came out up
 * to 2x apart, and a row's ratios move with the state too (gemm-rs f16 at 0.74x in rounds at low
 * clocks, its compute alone 1.21 ms against 0.47–0.64 at busy ones; the result file is in git history:
 * `git show d909dbf:benchmarks/results/h200x2-2026-11-26c/call2/suite.jsonl`).
 *
 * So the parts — the three variants, the sequential and the fused variant's communication alone
 * (PlacedSession.run's `communicationOnly`) and, with `computeOnly`, the kernel without its transfers —
 * have their sessions open at once (sharing one host copier) and are timed in rounds (timed-rounds.ts:
 * every part once a round, in a shuffled order, after an untimed run of the round's first part), and
 * the speedups are the medians of the rounds' ratios (medianRoundRatio: a round takes milliseconds,
 * far less than a clock change). Before the rounds (`warmupBusyMs`, then
 * `warmup` rounds) and after each (`busyBetweenRounds`) a kernel that only computes keeps the GPUs busy
 * (gpu-burn.ts), so every round runs at the clocks of a busy job, as runs on one device are timed.
 * Each variant is still checked on its first run, as runWorkload does.
 */
async function benchVariantsInTurn(o: BenchOptions): Promise<TimedVariants> {
  const { variants: timed, times, ...rest } = await timeInTurn(o, BENCH_VARIANTS, true);
  const variants = {} as Record<BenchVariant, VariantResult>;
  for (const v of BENCH_VARIANTS) variants[v] = timed[v]!;
  return { ...rest, variants, commMs: summarize(times.get('comm')!).median, fusedCommMs: summarize(times.get('fused-comm')!).median };
}

/**
 * `benchVariantsInTurn` for the variants named; with `aloneParts`, also the communication alone (of
 * the sequential and the fused variant, where they are named) and, with `computeOnly`, the kernel
 * without its transfers.
 */
async function timeInTurn(o: BenchOptions, named: readonly BenchVariant[], aloneParts: boolean) {
  const lowered = new Map<string, string>();
  const copier = new PeerCopier({ ...o.peerCopy, ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }) });
  const reports = {} as Record<BenchVariant | 'compute', RunReport>;
  const parts = new Map<string, TimedPart>();
  let times = new Map<string, number[]>();
  let orders: string[][] = [];
  const runs = o.runs ?? 20;
  let gpus: readonly GPUDevice[] = [];
  const timeParts = async () => {
    // The burn kernel keeps the GPUs busy (and their clocks up) before and between the rounds.
    const busyFactor = o.busyBetweenRounds ?? ((o.warmupBusyMs ?? 0) > 0 ? DEFAULT_BUSY_BETWEEN_ROUNDS : 0);
    await burnGpus(gpus, o.warmupBusyMs ?? 0);
    const between = async (ms: number) => {
      if (busyFactor > 0) collectGarbage();
      await burnGpus(gpus, busyFactor * ms);
    };
    ({ times, orders } = await timeInRounds(parts, { runs, warmup: o.warmup ?? 5, between }));
  };
  // Each part's session opens inside the previous one's, so all are open for the timing.
  const opening: { name: BenchVariant | 'compute'; options: RunWorkloadOptions }[] = [
    ...named.map((variant) => ({ name: variant, options: { ...o, ...variantOptions(o, variant) } })),
    ...(aloneParts && (o.computeOnly ?? true) ? [{ name: 'compute' as const, options: { ...o, backend: 'auto' as const, withoutTransfers: true } }] : []),
  ];
  const open = async (i: number): Promise<void> => {
    const next = opening[i];
    if (next === undefined) return timeParts();
    reports[next.name] = await runWorkload({
      ...next.options,
      copier,
      timedRuns: 0,
      warmupRuns: 0,
      onLowered: async (l) => {
        lowered.set(next.name, loweringKey(l.placed));
        await o.onLowered?.(l);
      },
      afterTimedRuns: async (session, { devices }) => {
        const placed = session as PlacedSession;
        gpus = devices.flatMap((d) => (d ? [d.device] : []));
        const wallMs = (communicationOnly: boolean) => async () => (await placed.run({ communicationOnly })).wallMs;
        parts.set(next.name, wallMs(false));
        if (aloneParts && next.name === 'sequential') parts.set('comm', wallMs(true));
        if (aloneParts && next.name === 'fused') parts.set('fused-comm', wallMs(true));
        await open(i + 1);
      },
    });
  };
  try {
    await open(0);
  } finally {
    copier.destroy();
  }
  const variants: Partial<Record<BenchVariant, VariantResult>> = {};
  for (const v of named) {
    variants[v] = { ...variantResult(reports[v], summarize(times.get(v)!)), rounds: times.get(v)!, positions: orders.map((order) => order.indexOf(v)) };
    o.onVariant?.(v, reports[v]);
  }
  const compute = reports.compute && { report: reports.compute, ms: summarize(times.get('compute')!) };
  if (compute) o.onVariant?.('compute-only', compute.report);
  return {
    variants,
    times,
    last: reports[named[named.length - 1]!],
    ...(compute && { compute }),
    ...sameProgramFlags(lowered),
    hostCopy: copier.hostCopy.kind,
    ...(copier.hostCopy.stores && { hostCopyStores: copier.hostCopy.stores }),
  };
}

/** What benchPhasings measured: each variant, and sequential / overlap over the rounds. */
export interface PhasingComparison {
  readonly sequential: VariantResult;
  readonly overlap: VariantResult;
  /** The median of the rounds' sequential / overlap (medianRoundRatio) and its 95% interval. */
  readonly overlapRatio: number;
  readonly overlapInterval: readonly [number, number];
}

/**
 * The fused variant at overlap phasing against the sequential variant, those two alone in alternating
 * rounds (as benchWorkload times them over several devices, without the decomposed variant and the
 * parts timed alone: the tuner's phasing trial, at two fifths of a bench's runs). On one device too:
 * there the sequential program is the choice where the moves are too small to pay for the signalling.
 */
export async function benchPhasings(o: BenchOptions): Promise<PhasingComparison> {
  const { variants } = await timeInTurn({ ...o, phasing: 'overlap' }, ['sequential', 'fused'], false);
  const [sequential, overlap] = [variants.sequential!, variants.fused!];
  return {
    sequential,
    overlap,
    overlapRatio: medianRoundRatio(sequential.rounds!, overlap.rounds!),
    overlapInterval: roundRatioInterval(sequential.rounds!, overlap.rounds!),
  };
}

/** Whether the ranks land on more than one device (as runWorkload places them; a bad placement is its to report). */
function spansDevices(o: BenchOptions): boolean {
  try {
    return new Set(placeRanks(o.ranks, devicesOf(o), o.ranksPerDevice)).size > 1;
  } catch {
    return false;
  }
}

/** Resampled medians of a bootstrap interval (roundRatioInterval). */
const BOOTSTRAP_RESAMPLES = 2000;

/**
 * A bootstrap interval of medianRoundRatio: the rounds resampled with replacement, the central `level`
 * of the resampled medians. What a row's rounds can resolve: on two H200s a program timed against
 * itself in a second session came out 0.94x with an interval of 0.75–1.01 (the write-up and its result
 * files are in git history: `git show f5a7c01:benchmarks/README.md`, 2gpu-2026-11-26i). Seeded from the
 * rounds' count, so a report is reproducible from its rounds.
 */
export function roundRatioInterval(numerator: readonly number[], denominator: readonly number[], level = 0.95): readonly [number, number] {
  const ratios = roundRatios(numerator, denominator);
  if (ratios.length === 0) throw new RangeError('rounds: 0 against 0');
  const random = mulberry32(ratios.length);
  const medians = Array.from({ length: BOOTSTRAP_RESAMPLES }, () => summarize(ratios.map(() => ratios[Math.floor(random() * ratios.length)]!)).median).sort((a, b) => a - b);
  const cut = Math.floor(((1 - level) / 2) * BOOTSTRAP_RESAMPLES);
  return [medians[cut]!, medians[BOOTSTRAP_RESAMPLES - 1 - cut]!];
}

/** BenchReport.speedup: from the rounds where the variants ran in rounds (with their intervals), else median over median. */
function speedups({ sequential, decomposed, fused }: Record<BenchVariant, VariantResult>): BenchReport['speedup'] {
  if (sequential.rounds && decomposed.rounds && fused.rounds) {
    return {
      overSequential: medianRoundRatio(sequential.rounds, fused.rounds),
      overDecomposed: medianRoundRatio(decomposed.rounds, fused.rounds),
      overSequentialInterval: roundRatioInterval(sequential.rounds, fused.rounds),
      overDecomposedInterval: roundRatioInterval(decomposed.rounds, fused.rounds),
    };
  }
  return { overSequential: sequential.ms.median / fused.ms.median, overDecomposed: decomposed.ms.median / fused.ms.median };
}

export async function benchWorkload(o: BenchOptions): Promise<BenchReport> {
  const { variants, last, commMs, fusedCommMs, compute, fusedIsDecomposed, fusedIsSequential, hostCopy, hostCopyStores } = spansDevices(o) ? await benchVariantsInTurn(o) : await benchVariantsApart(o);
  const fused = variants.fused.ms.median;
  let overlap: BenchReport['overlap'];
  if (o.computeOnly ?? true) {
    let computeMs = compute?.ms;
    if (computeMs === undefined) {
      const alone = await runWorkload({ ...o, backend: 'auto', withoutTransfers: true, timedRuns: o.runs ?? 20, warmupRuns: o.warmup ?? 5 });
      o.onVariant?.('compute-only', alone);
      computeMs = alone.timings;
    }
    overlap = {
      computeOnlyMs: computeMs,
      commMeasured: commMs !== undefined,
      ...overlapEfficiency(variants.sequential.ms.median, fused, computeMs.median, commMs),
      ...(fusedCommMs !== undefined && { fusedCommOnlyMs: fusedCommMs }),
    };
  }
  return {
    workload: o.workload,
    shape: o.shape,
    ranks: o.ranks,
    devices: last.devices,
    dtype: o.dtype,
    order: o.order,
    chunksPerRank: o.chunksPerRank ?? 1,
    adapter: last.adapter,
    robustness: last.robustness,
    timing: last.timing,
    variants,
    speedup: speedups(variants),
    ...(overlap === undefined ? {} : { overlap }),
    ...(fusedIsDecomposed && { fusedIsDecomposed }),
    ...(fusedIsSequential && { fusedIsSequential }),
    ...(hostCopy && { hostCopy }),
    ...(hostCopyStores && { hostCopyStores }),
  };
}

/** Milliseconds in bench tables: three decimals below 10 ms, two above. */
export const formatBenchMs = (ms: number): string => (ms < 10 ? ms.toFixed(3) : ms.toFixed(2));

/**
 * A Markdown table: one row per report, each variant's median (min–max), the speedups, the overlap
 * figures and verification.
 */
export function benchTable(reports: readonly BenchReport[]): string {
  const rows = reports.map((r) => {
    const cell = (v: BenchVariant) => {
      const { median, min, max } = r.variants[v].ms;
      return Number.isNaN(min) ? formatBenchMs(median) : `${formatBenchMs(median)} (${formatBenchMs(min)}–${formatBenchMs(max)})`;
    };
    const verified = BENCH_VARIANTS.every((v) => r.variants[v].verified) ? 'yes' : 'NO';
    const { m, n, k } = r.shape;
    const o = r.overlap;
    // A comm-only figure that was not timed alone (one device without GPU timestamps) says so; the fused
    // variant's own, where it was timed, goes beside it.
    const fusedComm = o?.fusedCommOnlyMs === undefined ? '' : ` (fused ${formatBenchMs(o.fusedCommOnlyMs)})`;
    const comm = o ? formatBenchMs(o.commOnlyMs) + (o.commMeasured ? '' : ' (seq − compute)') + fusedComm : '–';
    const overlap = o ? [formatBenchMs(o.computeOnlyMs.median), comm, Number.isNaN(o.efficiency) ? '–' : o.efficiency.toFixed(2)] : ['–', '–', '–'];
    const ratio = (x: number, interval?: readonly [number, number]) => `${x.toFixed(2)}x${interval ? ` (${interval[0].toFixed(2)}–${interval[1].toFixed(2)})` : ''}`;
    const overSequential = `${ratio(r.speedup.overSequential, r.speedup.overSequentialInterval)}${r.fusedIsSequential ? ' (same program)' : ''}`;
    const overDecomposed = `${ratio(r.speedup.overDecomposed, r.speedup.overDecomposedInterval)}${r.fusedIsDecomposed ? ' (same program)' : ''}`;
    return `| ${r.workload} | ${m}x${n}x${k} | ${r.ranks} | ${r.devices} | ${r.order} | ${r.chunksPerRank} | ${cell('sequential')} | ${cell('decomposed')} | ${cell('fused')}${r.variants.fused.phasing === 'sequential' ? ' (sequential phasing, tuned)' : ''} | ${overSequential} | ${overDecomposed} | ${overlap.join(' | ')} | ${verified} |`;
  });
  return [
    '| workload | shape | ranks | devices | order | chunks/rank | sequential ms | decomposed ms | fused ms | fused vs sequential | fused vs decomposed | compute-only ms | comm-only ms | overlap efficiency | verified |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The geometric mean of positive numbers (NaN for none). */
export function geometricMean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
}

export interface BenchSummary {
  /**
   * Geometric mean over the rows of fused's speedup over sequential, and the best. A row whose fused
   * variant is the sequential program (BenchReport.fusedIsSequential) counts at 1: its measured ratio
   * is a program against itself.
   */
  readonly geomeanOverSequential: number;
  readonly bestOverSequential: number;
  /** As geomeanOverSequential, a row whose fused variant is the decomposed program counting at 1. */
  readonly geomeanOverDecomposed: number;
  /** Rows where fused beat decomposed, of those where the two are different programs. */
  readonly fusedFasterThanDecomposed: number;
  /** Rows where fused and decomposed are the same program (BenchReport.fusedIsDecomposed). */
  readonly sameProgram: number;
  /** Rows where fused and sequential are the same program (BenchReport.fusedIsSequential). */
  readonly sameAsSequential: number;
  /**
   * Of the rows timed in rounds (with intervals) whose fused and sequential variants are different
   * programs: those whose interval of fused over sequential lies above 1 (faster beyond the spread)
   * and below 1 (slower beyond it); the rest are within it.
   */
  readonly resolved?: { readonly rows: number; readonly faster: number; readonly slower: number };
  readonly rows: number;
  readonly allVerified: boolean;
}

export function summarizeBench(reports: readonly BenchReport[]): BenchSummary {
  const seq = reports.map((r) => (r.fusedIsSequential ? 1 : r.speedup.overSequential));
  const dec = reports.map((r) => (r.fusedIsDecomposed ? 1 : r.speedup.overDecomposed));
  return {
    geomeanOverSequential: geometricMean(seq),
    bestOverSequential: Math.max(...seq),
    geomeanOverDecomposed: geometricMean(dec),
    fusedFasterThanDecomposed: reports.filter((r) => !r.fusedIsDecomposed && r.speedup.overDecomposed > 1).length,
    sameProgram: reports.filter((r) => r.fusedIsDecomposed).length,
    sameAsSequential: reports.filter((r) => r.fusedIsSequential).length,
    ...resolvedRows(reports.filter((r) => !r.fusedIsSequential)),
    rows: reports.length,
    allVerified: reports.every((r) => Object.values(r.variants).every((v) => v.verified)),
  };
}

function resolvedRows(reports: readonly BenchReport[]): Pick<BenchSummary, 'resolved'> {
  const intervals = reports.flatMap((r) => (r.speedup.overSequentialInterval ? [r.speedup.overSequentialInterval] : []));
  if (intervals.length === 0) return {};
  return { resolved: { rows: intervals.length, faster: intervals.filter(([lo]) => lo > 1).length, slower: intervals.filter(([, hi]) => hi < 1).length } };
}

/** The summary as one line, as `bench` prints it under the table. */
export function formatBenchSummary(s: BenchSummary): string {
  return (
    `fused vs sequential: geometric mean ${s.geomeanOverSequential.toFixed(2)}x, best ${s.bestOverSequential.toFixed(2)}x` +
    (s.resolved ? ` (of ${s.resolved.rows} rows in rounds, ${s.resolved.faster} faster and ${s.resolved.slower} slower beyond their 95% intervals)` : '') +
    (s.sameAsSequential > 0 ? ` (${s.sameAsSequential} more the same program, counted at 1.00x)` : '') +
    '; ' +
    `vs decomposed: geometric mean ${s.geomeanOverDecomposed.toFixed(2)}x, faster in ${s.fusedFasterThanDecomposed} of ${s.rows - s.sameProgram}` +
    (s.sameProgram > 0 ? ` (${s.sameProgram} more the same program, counted at 1.00x)` : '') +
    (s.allVerified ? '; every variant verified' : '; SOME VARIANTS DID NOT MATCH THE REFERENCE')
  );
}
