/**
 * The tensor-parallel layer as a workload of the tools: run it checked (`runTpLayer`), time the fused
 * layer against the sequential one in the same rounds (`benchTpLayer`), and search its plan options
 * (`tuneTpLayer`). Each opens its device group, loads what it runs through the public API, and checks
 * before it times: against the CPU reference where that is cheap, else against the sequential layer's
 * output at the same shape (the sequential layer moves every chunk between dispatches, so it shares
 * no overlap logic with the fused one).
 *
 * Under an MPI job (`processes`) each process opens its block of the devices and runs its ranks; every
 * process runs the same runs, the check combines every process's ranks (`layerErrorOver`), and each
 * time is a run's slowest process (`slowestPerRun`).
 */
import { placeRanks } from '@syncopate/runtime';
import { openDeviceGroup, type DeviceGroup } from '../api/index.js';
import { placeProcesses, type RankProcesses } from '../api/processes.js';
import { UsageError } from '../api/usage-error.js';
import { combineLayerErrors, layerError, ownRowsByRank, TP_LAYER_TOLERANCE, type LayerError } from '../layers/check.js';
import { tpLayerShape, type TpLayerConfig } from '../layers/config.js';
import { tpLayerInputs } from '../layers/inputs.js';
import { tpLayerReference } from '../layers/reference.js';
import type { TpLayerGemmTarget } from '../layers/gemm-target.js';
import { tpLayer, type LoadedTpLayer, type TpLayerGemmName, type TpLayerTensors, type TpLayerVariant } from '../layers/tp-layer.js';
import { COLLECTIVE_PLANS, type GatherPlan, type ReductionPlan } from '../workloads/index.js';
import { gatherOver, processLayout, slowestPerRun, type ProcessesReport } from './process-report.js';
import { adapterLabel } from './run.js';
import { summarize, type Summary } from './stats.js';

/** What the layer's output is checked against: `auto` takes the CPU reference up to `REFERENCE_MAX_FLOP`. */
export type TpLayerCheck = 'auto' | 'reference' | 'sequential';
export const TP_LAYER_CHECKS: readonly TpLayerCheck[] = ['auto', 'reference', 'sequential'];

/**
 * The default bound on each GPU wait: lavapipe compiles a shader at its first dispatch (tens of seconds
 * for the layer's larger kernels on a busy 2-core machine), past the runtime's 30 s default.
 */
export const LAYER_GPU_WAIT_MS = 120_000;

/** The float64 reference's multiply-adds that `auto` still takes (a few seconds in Node). */
export const REFERENCE_MAX_FLOP = 2e9;

export interface TpLayerRunOptions {
  readonly config: TpLayerConfig;
  /** Devices the ranks are spread over, of every process (default 1, or one a process under `processes`). */
  readonly devices?: number;
  readonly variant?: TpLayerVariant;
  /** How the four GEMMs lower (default auto: tensor cores where every device has them). */
  readonly target?: TpLayerGemmTarget;
  readonly check?: TpLayerCheck;
  /** Seed of `tpLayerInputs` (default 1). */
  readonly seed?: number;
  /** Timed runs after `warmup` untimed ones (defaults 10 and 2). */
  readonly runs?: number;
  readonly warmup?: number;
  /** The bound on each GPU wait (default `LAYER_GPU_WAIT_MS`). */
  readonly timeoutMs?: number;
  /** The MPI job this process is one of (`joinProcessGroup`): each process runs its block of the devices. */
  readonly processes?: RankProcesses;
}

export interface TpLayerCheckResult extends LayerError {
  readonly against: 'reference' | 'sequential';
  readonly tolerance: number;
  readonly verified: boolean;
}

export interface TpLayerRunReport {
  readonly layer: 'tp-layer';
  readonly config: TpLayerConfig;
  readonly variant: TpLayerVariant;
  readonly devices: number;
  readonly adapter: string;
  /** How the GEMMs and attention were lowered: 'simt' or 'subgroup-matrix'. */
  readonly gemmTarget: string;
  readonly attentionTarget: string;
  readonly check: TpLayerCheckResult;
  /** Host wall clock around the layer's ten steps, per run (over processes, each run's slowest process). */
  readonly ms: Summary;
  /** Under an MPI job: the processes, hosts, devices and ranks. */
  readonly processes?: ProcessesReport;
}

/** The float64 reference's multiply-adds for `config`: the five GEMMs and attention's two products. */
export function referenceFlop(config: TpLayerConfig): number {
  const { seq: S, hidden: H, ffn: F } = config;
  return S * H * (3 * H + H + 2 * F + F) + S * S * H;
}

function checkAgainst(config: TpLayerConfig, check: TpLayerCheck): 'reference' | 'sequential' {
  if (check === 'auto') return referenceFlop(config) <= REFERENCE_MAX_FLOP ? 'reference' : 'sequential';
  return check;
}

function checked(config: TpLayerConfig, against: 'reference' | 'sequential', error: LayerError): TpLayerCheckResult {
  const tolerance = TP_LAYER_TOLERANCE[config.dtype];
  return { against, tolerance, ...error, verified: error.relative <= tolerance };
}

function load(group: DeviceGroup, o: TpLayerRunOptions, config: TpLayerConfig, variant: TpLayerVariant): Promise<LoadedTpLayer> {
  return tpLayer(config, { variant }).load(group, { target: o.target ?? 'auto' });
}

/** Rank → its own rows of the output: this process's ranks of a run, or every rank of the CPU reference. */
type LayerRows = ReadonlyMap<number, ArrayLike<number>>;

/** One run's output, the own rows of each rank this process runs (copied off the devices). */
async function outputRows(layer: LoadedTpLayer, tensors: TpLayerTensors): Promise<Map<number, Float32Array>> {
  return ownRowsByRank(await (await layer.run(tensors)).readRanks(), layer.shape);
}

/**
 * How far `actual` (this process's ranks) is from `expected` over every rank of the job: each process's
 * error over its own ranks, combined over the processes (`layerErrorOver`).
 */
async function errorOver(job: RankProcesses | undefined, actual: LayerRows, expected: LayerRows): Promise<LayerError> {
  const ranks = [...actual.keys()];
  const own = layerError(
    ranks.map((r) => actual.get(r)!),
    ranks.map((r) => expected.get(r)!),
  );
  return job ? layerErrorOver(job, own) : own;
}

/** The error over every process's ranks from each process's `own` (the same in every process): exactly `layerError` over all the ranks at once. */
export async function layerErrorOver(job: RankProcesses, own: LayerError): Promise<LayerError> {
  return combineLayerErrors((await gatherOver(job, [own.maxAbs, own.scale])).map(([maxAbs, scale]) => ({ maxAbs: maxAbs!, scale: scale!, relative: maxAbs! / scale! })));
}

/** Per run, the slowest process's time (the times themselves outside an MPI job). */
function slowest(job: RankProcesses | undefined, times: number[]): Promise<number[]> {
  return job ? slowestPerRun(job, times) : Promise.resolve(times);
}

/** The answer `layer`'s output is checked against: the CPU's, or the sequential layer's on the same group and tensors. */
async function expectedRows(group: DeviceGroup, o: TpLayerRunOptions, against: 'reference' | 'sequential', tensors: TpLayerTensors): Promise<LayerRows> {
  if (against === 'reference') return new Map(tpLayerReference(o.config, tpLayerInputs(o.config, o.seed ?? 1)).map((rows, rank) => [rank, rows]));
  const sequential = await load(group, o, o.config, 'sequential');
  try {
    return await outputRows(sequential, tensors);
  } finally {
    sequential.destroy();
  }
}

async function timeRuns(layer: LoadedTpLayer, tensors: TpLayerTensors, warmup: number, runs: number): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await layer.run(tensors);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await timed(() => layer.run(tensors)));
  return times;
}

/** Host milliseconds `run` takes, awaited (the layer's runs wait for their GPU work). */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

function counts(o: TpLayerRunOptions): { runs: number; warmup: number } {
  const runs = o.runs ?? 10;
  const warmup = o.warmup ?? 2;
  if (!Number.isInteger(runs) || runs < 1) throw new UsageError(`tp-layer: runs must be a positive integer, got ${runs}`);
  if (!Number.isInteger(warmup) || warmup < 0) throw new UsageError(`tp-layer: warmup must be a non-negative integer, got ${warmup}`);
  return { runs, warmup };
}

/**
 * Opens the devices (under an MPI job, this process's block of them), runs `body`, closes them. The
 * config, and the ranks and devices over the processes, are checked first, before any device opens.
 */
async function withGroup<T>(o: TpLayerRunOptions, body: (group: DeviceGroup, job: RankProcesses | undefined) => Promise<T>): Promise<T> {
  const { ranks } = tpLayerShape(o.config);
  const job = o.processes && o.processes.size > 1 ? o.processes : undefined;
  const devices = o.devices ?? job?.size ?? 1;
  if (job) {
    let rankDevice: number[];
    try {
      rankDevice = placeRanks(ranks, devices);
    } catch (e) {
      throw new UsageError((e as Error).message.replace(/^placeRanks: /, ''));
    }
    placeProcesses(ranks, rankDevice, devices, job.size);
  }
  const group = await openDeviceGroup({ devices, timeoutMs: o.timeoutMs ?? LAYER_GPU_WAIT_MS, ...(job && { processes: job }) });
  try {
    return await body(group, job);
  } finally {
    group.close();
  }
}

/** The devices of the group over every process, its adapter, and under an MPI job its layout. */
async function groupFacts(group: DeviceGroup, job: RankProcesses | undefined, ranks: number): Promise<{ devices: number; adapter: string; processes?: ProcessesReport }> {
  const devices = group.deviceCount;
  const adapter = adapterLabel(group.devices[0]!, devices);
  if (!job) return { devices, adapter };
  return { devices, adapter, processes: await processLayout(job, group.placement(ranks), group.processes!.deviceProcess, group.handles) };
}

/** Runs the layer once checked, then `runs` times timed. `verified` false in the report is a wrong answer, not an error. */
export async function runTpLayer(o: TpLayerRunOptions): Promise<TpLayerRunReport> {
  const { runs, warmup } = counts(o);
  const variant = o.variant ?? 'fused';
  const against = checkAgainst(o.config, o.check ?? 'auto');
  return withGroup(o, async (group, job) => {
    const layer = await load(group, o, o.config, variant);
    try {
      const tensors = await layer.tensors(tpLayerInputs(o.config, o.seed ?? 1));
      const actual = await outputRows(layer, tensors);
      const check = checked(o.config, against, await errorOver(job, actual, await expectedRows(group, o, against, tensors)));
      const ms = summarize(await slowest(job, await timeRuns(layer, tensors, warmup, runs)));
      const { processes, ...facts } = await groupFacts(group, job, o.config.ranks);
      return { layer: 'tp-layer', config: o.config, variant, ...facts, gemmTarget: layer.gemmTarget, attentionTarget: layer.attentionTarget, check, ms, ...(processes && { processes }) };
    } finally {
      layer.destroy();
    }
  });
}

export interface TpLayerBenchReport {
  readonly layer: 'tp-layer';
  readonly config: TpLayerConfig;
  readonly devices: number;
  readonly adapter: string;
  /** The fused layer's output against the sequential one's, and both against the CPU where that is cheap. */
  readonly check: { readonly fusedVsSequential: TpLayerCheckResult; readonly vsReference?: { readonly fused: TpLayerCheckResult; readonly sequential: TpLayerCheckResult } };
  readonly verified: boolean;
  readonly rounds: number;
  /** Host wall clock around the ten steps, one run of each variant a round, in alternating order. */
  readonly ms: { readonly fused: Summary; readonly sequential: Summary };
  /** Median sequential time over median fused time: above 1, the fused layer is faster. */
  readonly fusedOverSequential: number;
  /** Per variant, each step's median time run alone (once a round), for where the time goes. */
  readonly stepsMedianMs: Readonly<Record<TpLayerVariant, Readonly<Record<string, number>>>>;
  /** How the GEMMs and attention were lowered, per variant. */
  readonly gemmTarget: Readonly<Record<TpLayerVariant, string>>;
  readonly attentionTarget: Readonly<Record<TpLayerVariant, string>>;
  /** Each GEMM step's collective alone (the sequential program with its tiles left out): median ms. */
  readonly collectiveAloneMs: Readonly<Record<TpLayerGemmName, number>>;
  /**
   * The layer with perfect overlap: every step that is not a GEMM as the fused layer ran it, and each
   * GEMM step as the longer of its compute (the sequential step less its collective) and its
   * collective. Optimistic over several devices, where a device's own copies to and from the host
   * cannot overlap its dispatches (DESIGN.md).
   */
  readonly overlapBoundMs: number;
  /** Median fused time over the bound: 1 is perfect overlap. */
  readonly fusedOverBound: number;
  /** Under an MPI job: the processes, hosts, devices and ranks (every time above a run's slowest process). */
  readonly processes?: ProcessesReport;
}

/** Each GEMM's step in `LoadedTpLayer.steps`. */
const GEMM_STEPS: Readonly<Record<TpLayerGemmName, string>> = { qkv: 'all-gather+qkv', outProj: 'out-proj+reduce-scatter', gateUp: 'all-gather+gate-up', down: 'down+reduce-scatter' };

/** Each GEMM step's collective alone in `layer` (its tiles' phases left out): median of `runs` after `warmup`. */
async function collectivesAlone(job: RankProcesses | undefined, layer: LoadedTpLayer, tensors: TpLayerTensors, warmup: number, runs: number): Promise<Record<TpLayerGemmName, number>> {
  const out: Partial<Record<TpLayerGemmName, number>> = {};
  for (const [gemm, name] of Object.entries(GEMM_STEPS) as [TpLayerGemmName, string][]) {
    const step = layer.steps(tensors).find((s) => s.name === name)!;
    const run = () => layer.program(step.kernel).run(step.tensors, { communicationOnly: true });
    for (let i = 0; i < warmup; i++) await run();
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(await timed(run));
    out[gemm] = summarize(await slowest(job, times)).median;
  }
  return out as Record<TpLayerGemmName, number>;
}

/** The perfect-overlap bound (`TpLayerBenchReport.overlapBoundMs`) from the steps' medians and the collectives alone. */
export function overlapBound(steps: TpLayerBenchReport['stepsMedianMs'], collectives: Readonly<Record<TpLayerGemmName, number>>): number {
  const gemmOf = new Map(Object.entries(GEMM_STEPS).map(([gemm, step]) => [step, gemm as TpLayerGemmName]));
  return Object.entries(steps.fused).reduce((sum, [step, ms]) => {
    const gemm = gemmOf.get(step);
    return sum + (gemm === undefined ? ms : Math.max(collectives[gemm], steps.sequential[step]! - collectives[gemm]));
  }, 0);
}

/**
 * Both variants on the same devices and input tensors: checked against each other (and the CPU where
 * cheap), then `runs` rounds, each running both once in alternating order, then each step alone.
 */
export async function benchTpLayer(o: Omit<TpLayerRunOptions, 'variant'>): Promise<TpLayerBenchReport> {
  const { runs: rounds, warmup } = counts(o);
  const reference = checkAgainst(o.config, o.check ?? 'auto') === 'reference';
  return withGroup(o, async (group, job) => {
    const loaded: Partial<Record<TpLayerVariant, LoadedTpLayer>> = {};
    try {
      loaded.fused = await load(group, o, o.config, 'fused');
      loaded.sequential = await load(group, o, o.config, 'sequential');
      const layers = loaded as Record<TpLayerVariant, LoadedTpLayer>;
      const inputs = tpLayerInputs(o.config, o.seed ?? 1);
      const tensors = await layers.fused.tensors(inputs);
      const fusedOut = await outputRows(layers.fused, tensors);
      const sequentialOut = await outputRows(layers.sequential, tensors);
      const fusedVsSequential = checked(o.config, 'sequential', await errorOver(job, fusedOut, sequentialOut));
      let vsReference: TpLayerBenchReport['check']['vsReference'];
      if (reference) {
        const expected = new Map(tpLayerReference(o.config, inputs).map((rows, rank) => [rank, rows]));
        vsReference = { fused: checked(o.config, 'reference', await errorOver(job, fusedOut, expected)), sequential: checked(o.config, 'reference', await errorOver(job, sequentialOut, expected)) };
      }
      const verified = fusedVsSequential.verified && (vsReference === undefined || (vsReference.fused.verified && vsReference.sequential.verified));

      for (let i = 0; i < warmup; i++) for (const layer of Object.values(layers)) await layer.run(tensors);
      const times: Record<TpLayerVariant, number[]> = { fused: [], sequential: [] };
      const steps: Record<TpLayerVariant, Record<string, number[]>> = { fused: {}, sequential: {} };
      for (let round = 0; round < rounds; round++) {
        const order: TpLayerVariant[] = round % 2 === 0 ? ['fused', 'sequential'] : ['sequential', 'fused'];
        for (const v of order) times[v].push(await timed(() => layers[v].run(tensors)));
        for (const v of order) {
          for (const step of layers[v].steps(tensors)) (steps[v][step.name] ??= []).push(await timed(() => layers[v].program(step.kernel).run(step.tensors)));
        }
      }
      // Every process ran the same runs in the same order: each run as long as its slowest process.
      const ms = { fused: summarize(await slowest(job, times.fused)), sequential: summarize(await slowest(job, times.sequential)) };
      const medians = async (s: Record<string, number[]>) => {
        const out: Record<string, number> = {};
        for (const [name, xs] of Object.entries(s)) out[name] = summarize(await slowest(job, xs)).median;
        return out;
      };
      const stepsMedianMs = { fused: await medians(steps.fused), sequential: await medians(steps.sequential) };
      const collectiveAloneMs = await collectivesAlone(job, layers.sequential, tensors, warmup, rounds);
      const { processes, ...facts } = await groupFacts(group, job, o.config.ranks);
      const overlapBoundMs = overlapBound(stepsMedianMs, collectiveAloneMs);
      return {
        layer: 'tp-layer',
        config: o.config,
        ...facts,
        check: { fusedVsSequential, ...(vsReference && { vsReference }) },
        verified,
        rounds,
        ms,
        fusedOverSequential: ms.sequential.median / ms.fused.median,
        stepsMedianMs,
        gemmTarget: { fused: layers.fused.gemmTarget, sequential: layers.sequential.gemmTarget },
        attentionTarget: { fused: layers.fused.attentionTarget, sequential: layers.sequential.attentionTarget },
        collectiveAloneMs,
        overlapBoundMs,
        fusedOverBound: ms.fused.median / overlapBoundMs,
        ...(processes && { processes }),
      };
    } finally {
      Object.values(loaded).forEach((layer) => layer.destroy());
    }
  });
}

/** One plan the tuner tried: the fused layer with these options, checked against the sequential layer. */
export interface TpLayerCandidate {
  readonly chunksPerRank: number;
  readonly gather: GatherPlan;
  readonly reduction: ReductionPlan;
  readonly check: TpLayerCheckResult;
  readonly ms: Summary;
}

export interface TpLayerTuneReport {
  readonly layer: 'tp-layer';
  readonly config: TpLayerConfig;
  readonly devices: number;
  readonly adapter: string;
  /** The sequential layer at the config's own options: the baseline and the answer every candidate is checked against. */
  readonly sequential: Summary;
  /** Every candidate, fastest verified first; refused ones (a chunk count the shape cannot split) left out. */
  readonly candidates: readonly TpLayerCandidate[];
  /** The fastest verified candidate; undefined if none verified. */
  readonly best: TpLayerCandidate | undefined;
}

export interface TpLayerTuneOptions extends Omit<TpLayerRunOptions, 'variant' | 'check'> {
  /** Chunk counts to try (default 1, 2, 4). */
  readonly chunksPerRank?: readonly number[];
}

/** Why `tune tp-layer` refuses an MPI job of several processes. */
export const TUNE_OVER_PROCESSES = 'tune tp-layer cannot run over several processes yet (each process would search and time its candidates alone): run it without mpirun';

/**
 * Tries the fused layer at every chunk count × gather plan × reduction plan, each checked against the
 * sequential layer's output and timed `runs` times; candidates are timed one after another, each
 * after its own warm-up. Slow by design: 12 loads of the layer at the defaults.
 */
export async function tuneTpLayer(o: TpLayerTuneOptions): Promise<TpLayerTuneReport> {
  const { runs, warmup } = counts(o);
  const chunkCounts = o.chunksPerRank ?? [1, 2, 4];
  if (o.processes && o.processes.size > 1) throw new UsageError(TUNE_OVER_PROCESSES);
  return withGroup(o, async (group) => {
    const baseline = await load(group, o, o.config, 'sequential');
    const tensors = await baseline.tensors(tpLayerInputs(o.config, o.seed ?? 1));
    try {
      const expected = await outputRows(baseline, tensors);
      const sequential = summarize(await timeRuns(baseline, tensors, warmup, runs));
      const candidates: TpLayerCandidate[] = [];
      for (const chunksPerRank of chunkCounts) {
        for (const gather of COLLECTIVE_PLANS) {
          for (const reduction of COLLECTIVE_PLANS) {
            const config = { ...o.config, chunksPerRank, gather, reduction };
            let layer: LoadedTpLayer;
            try {
              layer = await load(group, o, config, 'fused');
            } catch (e) {
              if (e instanceof UsageError) continue; // this chunk count does not split the shape
              throw e;
            }
            try {
              const check = checked(config, 'sequential', layerError([...(await outputRows(layer, tensors)).values()], [...expected.values()]));
              candidates.push({ chunksPerRank, gather, reduction, check, ms: summarize(await timeRuns(layer, tensors, warmup, runs)) });
            } finally {
              layer.destroy();
            }
          }
        }
      }
      const rank = (c: TpLayerCandidate) => (c.check.verified ? c.ms.median : Infinity);
      candidates.sort((a, b) => rank(a) - rank(b));
      const best = candidates.find((c) => c.check.verified);
      return { layer: 'tp-layer', config: o.config, devices: group.devices.length, adapter: adapterLabel(group.devices[0]!, group.devices.length), sequential, candidates, best };
    } finally {
      Object.values(tensors).forEach((t) => t.destroy());
      baseline.destroy();
    }
  });
}
