/**
 * The command lines of `syncopate bench` and `syncopate tune`: the workloads (one, or `all`), and the
 * lists they sweep (`--order` and `--chunks-per-rank` take comma-separated values: a tile-order
 * ablation or a chunk-size sweep is one command; for `tune` they are the candidates). Shape options
 * apply to every workload; each keeps its own defaults otherwise.
 */
import { DEFAULT_TUNE_CHUNKS, DEFAULT_TUNE_ORDERS } from '../autotune.js';
import { getWorkload, UsageError, WORKLOAD_NAMES, type Workload, type WorkloadDType, type WorkloadShape } from '../../workloads/index.js';
import { RUN_ORDERS, type RunOptions, type RunOrder } from '../run-report.js';
import { DEFAULT_SEED, DTYPES, fileName, integer, oneOf, optional, planOptions, type Values } from './args.js';

export const DEFAULT_BENCH_RUNS = 20;
export const DEFAULT_BENCH_WARMUP = 5;
export const DEFAULT_TUNE_RUNS = 10;

/** What bench and tune share: which configurations to run and how often. */
export interface SweepOptions {
  readonly workloads: readonly Workload[];
  /** Axes given on the command line; the others come from each workload's defaults. */
  readonly shape: Partial<WorkloadShape>;
  /** Given ranks, or each workload's default. */
  readonly ranks: number | undefined;
  readonly dtype: WorkloadDType;
  readonly orders: readonly RunOrder[];
  readonly chunksPerRank: readonly number[];
  /** Per workload, the `--gather` and `--reduction` it takes (planOptions). */
  readonly plans: ReadonlyMap<string, ReturnType<typeof planOptions>>;
  readonly devices: number | undefined;
  readonly ranksPerDevice: number | undefined;
  readonly seed: number;
  /** false (`--no-robustness`): the devices skip Dawn's bounds checks (`OpenGpuOptions.robustness`). */
  readonly robustness?: boolean;
  /** `--verify-rows`: check this many sampled output rows, not all (RunWorkloadOptions.verifyRows). */
  readonly verifyRows?: number;
  readonly runs: number;
  readonly warmup: number;
  readonly json: boolean;
}

export interface BenchCommand extends SweepOptions {
  readonly kind: 'bench';
  /** Where to write bench.json, bench.md and the plots (and trace.json with timeline.svg). */
  readonly out: string | undefined;
  /** A file for the Chrome trace of one more fused run of the first benchmark. */
  readonly trace: string | undefined;
  /** Each workload at the order and chunk count `syncopate tune` chose (tuning first when the cache has none). */
  readonly tuned: boolean;
  /** The processes mpirun must have started (`--processes`). */
  readonly processes?: number;
}

/** `syncopate tune`: `orders` and `chunksPerRank` are the candidates. */
export interface TuneCommand extends SweepOptions {
  readonly kind: 'tune';
}

function list(flag: string, text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new UsageError(`--${flag} takes a comma-separated list without empty items, got '${text}'`);
  return [...new Set(items)];
}

function sweepOptions(command: string, name: string | undefined, v: Values, defaults: { orders: readonly RunOrder[]; chunks: readonly number[]; runs: number }): SweepOptions {
  if (name === undefined) throw new UsageError(`${command} needs a workload or all: syncopate ${command} <${WORKLOAD_NAMES.join('|')}|all>`);
  const workloads = name === 'all' ? WORKLOAD_NAMES.map(getWorkload) : [getWorkload(name)];
  const shape: { -readonly [A in keyof WorkloadShape]?: number } = {};
  for (const axis of ['m', 'n', 'k'] as const) {
    const value = integer(axis, v[axis], 1);
    if (value !== undefined) shape[axis] = value;
  }
  const devices = integer('devices', v.devices, 1, 64);
  const ranks = integer('ranks', v.ranks, 1);
  if (devices !== undefined && ranks !== undefined && devices > ranks) {
    throw new UsageError(`--devices ${devices} is more than the ${ranks} ranks: a device would hold no rank`);
  }
  return {
    workloads,
    shape,
    ranks,
    dtype: oneOf('dtype', v.dtype, DTYPES, 'f32'),
    orders: list('order', v.order)?.map((o) => oneOf<RunOrder>('order', o, RUN_ORDERS, 'chunk-arrival')) ?? defaults.orders,
    chunksPerRank: list('chunks-per-rank', v['chunks-per-rank'])?.map((c) => integer('chunks-per-rank', c, 1)!) ?? defaults.chunks,
    plans: new Map(workloads.map((w) => [w.name, planOptions(w, v, name === 'all' ? 'skip' : 'refuse')])),
    devices,
    ranksPerDevice: integer('ranks-per-device', v['ranks-per-device'], 1),
    seed: integer('seed', v.seed, 0, 0xffffffff) ?? DEFAULT_SEED,
    runs: integer('runs', v.runs, 1) ?? defaults.runs,
    warmup: integer('warmup', v.warmup, 0) ?? DEFAULT_BENCH_WARMUP,
    json: v.json ?? false,
    ...(v['no-robustness'] && { robustness: false }),
    ...optional('verifyRows', integer('verify-rows', v['verify-rows'], 1)),
  };
}

function tuned(v: Values): boolean {
  if (!v.tuned) return false;
  const swept = (['order', 'chunks-per-rank'] as const).find((o) => v[o] !== undefined);
  if (swept !== undefined) throw new UsageError(`--tuned takes the order and chunk count from the tune cache; leave out --${swept}`);
  return true;
}

export function benchCommand(name: string | undefined, v: Values): BenchCommand {
  return {
    kind: 'bench',
    ...sweepOptions('bench', name, v, { orders: ['chunk-arrival'], chunks: [1], runs: DEFAULT_BENCH_RUNS }),
    out: fileName('out', v.out, 'a directory name'),
    trace: fileName('trace', v.trace),
    tuned: tuned(v),
    ...(v.processes !== undefined && { processes: integer('processes', v.processes, 1) }),
  };
}

export function tuneCommand(name: string | undefined, v: Values): TuneCommand {
  return { kind: 'tune', ...sweepOptions('tune', name, v, { orders: DEFAULT_TUNE_ORDERS, chunks: DEFAULT_TUNE_CHUNKS, runs: DEFAULT_TUNE_RUNS }) };
}

/** One run per workload of the command, at the first order and chunk count given. */
export function configurations(cmd: SweepOptions): RunOptions[] {
  return cmd.workloads.map((w) => ({
    workload: w.name,
    ranks: cmd.ranks ?? w.defaultRanks,
    shape: { ...w.defaults, ...cmd.shape },
    dtype: cmd.dtype,
    chunksPerRank: cmd.chunksPerRank[0] ?? 1,
    order: cmd.orders[0] ?? 'chunk-arrival',
    backend: 'auto' as const,
    seed: cmd.seed,
    ...cmd.plans.get(w.name),
    ...(cmd.devices === undefined ? {} : { devices: cmd.devices }),
    ...(cmd.ranksPerDevice === undefined ? {} : { ranksPerDevice: cmd.ranksPerDevice }),
    ...(cmd.robustness === false && { robustness: false }),
    ...(cmd.verifyRows === undefined ? {} : { verifyRows: cmd.verifyRows }),
  }));
}

/** The runs a bench command makes, one per workload, order and chunk count. */
export function benchRuns(cmd: SweepOptions): RunOptions[] {
  return configurations(cmd).flatMap((run) => cmd.orders.flatMap((order) => cmd.chunksPerRank.map((chunksPerRank) => ({ ...run, order, chunksPerRank }))));
}
