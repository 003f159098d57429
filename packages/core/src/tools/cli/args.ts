/**
 * The command line, read into a typed command with `node:util`'s `parseArgs`. Everything a user can
 * get wrong here throws `UsageError` with one line that names the option and the value. Files named
 * by `--ir` and `--plan` are only named here; `compileCommand` reads them (./source.ts).
 */
import { parseArgs } from 'node:util';
import { MATMUL_TARGET_NAMES, type MatmulTargetName } from '@syncopate/backends';
import { defaultPipeline } from '../../api/pipeline.js';
import { benchCommand, tuneCommand, type BenchCommand, type TuneCommand } from './bench-args.js';
import { LAYER_NAME, layerCommand, type LayerCommand } from './layer-args.js';
import { COLLECTIVE_PLANS, getWorkload, PLAN_WORKLOADS, UsageError, type GatherPlan, type ReductionPlan, type Workload, type WorkloadDType, type WorkloadOptions } from '../../workloads/index.js';
import { RUN_BACKENDS, RUN_ORDERS, RUN_TARGETS, type RunBackend, type RunOptions, type RunOrder, type RunTarget } from '../run-report.js';

export type Emit = 'ir' | 'plan' | 'wgsl';
export const EMITS: readonly Emit[] = ['ir', 'plan', 'wgsl'];
export const DTYPES: readonly WorkloadDType[] = ['f32', 'f16'];

export const DEFAULT_SEED = 1;
export const DEFAULT_TIMED_RUNS = 50;
export const WARMUP_RUNS = 5;

/** What `compile` compiles: a built-in workload, or a kernel written in the textual IR. */
export type KernelSource =
  | { readonly kind: 'workload'; readonly workload: Workload; readonly options: WorkloadOptions }
  | { readonly kind: 'ir'; readonly file: string };

export interface CompileCommand {
  readonly kind: 'compile';
  readonly source: KernelSource;
  /** A plan in the JSON form (docs/plans.md) used instead of the workload's; with `--ir`, added to the module's chunks. */
  readonly planFile: string | undefined;
  readonly order: RunOrder;
  readonly emit: Emit;
  /** Timed compiles for `--time`; undefined when not timing. */
  readonly timedRuns: number | undefined;
  readonly json: boolean;
  readonly dumpIrAfter: 'all' | readonly string[] | undefined;
  /** A directory to write each device's WGSL and plan.json into (`--dump-wgsl`). */
  readonly dumpWgsl?: string;
  /** How dots lower in the WGSL it prints or dumps (`--target`); absent: SIMT. */
  readonly target?: MatmulTargetName;
}

export interface RunCommand {
  readonly kind: 'run';
  readonly options: RunOptions;
  readonly json: boolean;
  /** A file to write the Chrome trace of one more run into (`--trace`). */
  readonly trace?: string;
  /** A directory to write each device's WGSL and plan.json into (`--dump-wgsl`). */
  readonly dumpWgsl?: string;
  /** The processes mpirun must have started (`--processes`); refused before any device opens otherwise. */
  readonly processes?: number;
}

export type Command = { readonly kind: 'help' } | CompileCommand | RunCommand | BenchCommand | TuneCommand | LayerCommand;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  ranks: { type: 'string' },
  m: { type: 'string' },
  n: { type: 'string' },
  k: { type: 'string' },
  dtype: { type: 'string' },
  'chunks-per-rank': { type: 'string' },
  gather: { type: 'string' },
  reduction: { type: 'string' },
  order: { type: 'string' },
  emit: { type: 'string' },
  time: { type: 'boolean' },
  runs: { type: 'string' },
  'dump-ir-after': { type: 'string' },
  json: { type: 'boolean' },
  backend: { type: 'string' },
  seed: { type: 'string' },
  devices: { type: 'string' },
  'ranks-per-device': { type: 'string' },
  ir: { type: 'string' },
  plan: { type: 'string' },
  warmup: { type: 'string' },
  out: { type: 'string' },
  tuned: { type: 'boolean' },
  trace: { type: 'string' },
  'dump-wgsl': { type: 'string' },
  target: { type: 'string' },
  'no-robustness': { type: 'boolean' },
  'verify-rows': { type: 'string' },
  seq: { type: 'string' },
  hidden: { type: 'string' },
  heads: { type: 'string' },
  'head-dim': { type: 'string' },
  ffn: { type: 'string' },
  variant: { type: 'string' },
  check: { type: 'string' },
  attention: { type: 'string' },
  processes: { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type Values = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const COMMON: readonly OptionName[] = ['help', 'ranks', 'm', 'n', 'k', 'dtype', 'chunks-per-rank', 'gather', 'reduction', 'order'];
const ALLOWED: Record<'compile' | 'run' | 'bench' | 'tune', readonly OptionName[]> = {
  compile: [...COMMON, 'emit', 'time', 'runs', 'dump-ir-after', 'json', 'ir', 'plan', 'dump-wgsl', 'target'],
  run: [...COMMON, 'backend', 'seed', 'json', 'devices', 'ranks-per-device', 'trace', 'dump-wgsl', 'target', 'no-robustness', 'verify-rows', 'processes'],
  bench: [...COMMON, 'seed', 'json', 'devices', 'ranks-per-device', 'runs', 'warmup', 'out', 'trace', 'tuned', 'no-robustness', 'verify-rows', 'processes'],
  tune: [...COMMON, 'seed', 'json', 'devices', 'ranks-per-device', 'runs', 'warmup', 'no-robustness', 'verify-rows'],
};
const COMMANDS = ['compile', 'run', 'bench', 'tune', 'help'] as const;
/** What the IR file itself says (ranks, shapes, dtypes, how A's shards move), so they do not go with `--ir`. */
const WORKLOAD_ONLY: readonly OptionName[] = ['ranks', 'm', 'n', 'k', 'dtype', 'chunks-per-rank', 'gather', 'reduction'];

/** parseArgs's messages are long and end in advice about `--`; say the same in one short line. */
function parseError(e: unknown): UsageError | undefined {
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return undefined;
  const message = (e as Error).message;
  const option = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option '${option}'`);
  if (message.includes('does not take an argument')) return new UsageError(`option ${option} takes no value`);
  if (message.includes('ambiguous')) {
    return new UsageError(`option ${option} needs a value (write ${option}=VALUE for a value that starts with '-')`);
  }
  if (message.includes('argument missing')) return new UsageError(`option ${option} needs a value`);
  return new UsageError(message.split('\n')[0]!);
}

export function integer(flag: string, text: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (text === undefined) return undefined;
  const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? (min === 1 ? 'a positive integer' : `an integer >= ${min}`) : `an integer from ${min} to ${max}`;
    throw new UsageError(`--${flag} must be ${range}, got '${text}'`);
  }
  return value;
}

export function oneOf<T extends string>(flag: string, text: string | undefined, allowed: readonly T[], fallback: T): T {
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text)) throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, got '${text}'`);
  return text as T;
}

function dumpIrAfter(text: string | undefined): 'all' | readonly string[] | undefined {
  if (text === undefined) return undefined;
  if (text === 'all') return 'all';
  const known = defaultPipeline().map((p) => p.name);
  const names = text.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new UsageError(`--dump-ir-after: unknown pass '${unknown[0]}'; the passes are ${known.join(', ')} (or all)`);
  }
  return names;
}

/**
 * `--gather` and `--reduction` as `workload` takes them. Either given for a workload without that
 * collective is refused, unless `others` is 'skip' (`bench all`: the other workloads keep their plan).
 */
export function planOptions(workload: Workload, v: Values, others: 'refuse' | 'skip' = 'refuse'): { gather?: GatherPlan; reduction?: ReductionPlan } {
  const out: { gather?: GatherPlan; reduction?: ReductionPlan } = {};
  for (const flag of ['gather', 'reduction'] as const) {
    if (v[flag] === undefined) continue;
    const plan = oneOf(flag, v[flag], COLLECTIVE_PLANS, 'ring');
    const takers = PLAN_WORKLOADS[flag];
    if (takers.includes(workload.name)) out[flag] = plan;
    else if (others === 'refuse') throw new UsageError(`--${flag} applies to ${takers.join(' and ')}, not ${workload.name}`);
  }
  return out;
}

function workloadOptions(workload: Workload, v: Values): WorkloadOptions {
  const shape = {
    m: integer('m', v.m, 1) ?? workload.defaults.m,
    n: integer('n', v.n, 1) ?? workload.defaults.n,
    k: integer('k', v.k, 1) ?? workload.defaults.k,
  };
  const chunksPerRank = integer('chunks-per-rank', v['chunks-per-rank'], 1);
  return {
    ranks: integer('ranks', v.ranks, 1) ?? workload.defaultRanks,
    shape,
    dtype: oneOf('dtype', v.dtype, DTYPES, 'f32'),
    ...(chunksPerRank === undefined ? {} : { chunksPerRank }),
    ...planOptions(workload, v),
  };
}

export function fileName(flag: string, text: string | undefined, what = 'a file name'): string | undefined {
  if (text === undefined) return undefined;
  if (text.trim() === '') throw new UsageError(`--${flag} needs ${what}, got '${text}'`);
  return text;
}

function kernelSource(name: string | undefined, v: Values): KernelSource {
  const ir = fileName('ir', v.ir);
  if (ir === undefined) {
    if (name === undefined) throw new UsageError('compile needs a workload or --ir FILE: syncopate compile <workload>; see syncopate help');
    const workload = getWorkload(name);
    return { kind: 'workload', workload, options: workloadOptions(workload, v) };
  }
  if (name !== undefined) throw new UsageError(`compile takes a workload or --ir FILE, not both (got '${name}' and --ir ${ir})`);
  const given = WORKLOAD_ONLY.find((o) => v[o] !== undefined);
  if (given !== undefined) throw new UsageError(`--${given} does not apply with --ir: the IR file declares the ranks, shapes and dtypes`);
  return { kind: 'ir', file: ir };
}

function compileCommand(name: string | undefined, v: Values): CompileCommand {
  const timedRuns = v.time ? (integer('runs', v.runs, 1) ?? DEFAULT_TIMED_RUNS) : undefined;
  if (!v.time) {
    if (v.runs !== undefined) throw new UsageError('--runs applies only with --time');
    if (v.json) throw new UsageError('--json applies to run and to compile --time');
  } else {
    if (v.emit !== undefined) throw new UsageError('--time prints timings only; leave out --emit');
    if (v['dump-ir-after'] !== undefined) throw new UsageError('--time prints timings only; leave out --dump-ir-after');
    if (v['dump-wgsl'] !== undefined) throw new UsageError('--time prints timings only; leave out --dump-wgsl');
  }
  const target = v.target === undefined ? undefined : oneOf<MatmulTargetName>('target', v.target, MATMUL_TARGET_NAMES, 'simt');
  if (target !== undefined && v.emit !== 'wgsl' && v['dump-wgsl'] === undefined) {
    throw new UsageError('--target chooses how dots lower to WGSL; it applies with --emit wgsl or --dump-wgsl');
  }
  return {
    kind: 'compile',
    source: kernelSource(name, v),
    planFile: fileName('plan', v.plan),
    order: oneOf('order', v.order, RUN_ORDERS, 'chunk-arrival'),
    emit: oneOf('emit', v.emit, EMITS, 'ir'),
    timedRuns,
    json: v.json ?? false,
    dumpIrAfter: dumpIrAfter(v['dump-ir-after']),
    ...optional('dumpWgsl', fileName('dump-wgsl', v['dump-wgsl'], 'a directory name')),
    ...(target === undefined ? {} : { target }),
  };
}

/** `{ [key]: value }`, or nothing when the option was not given. */
export function optional<K extends string, T>(key: K, value: T | undefined): { [P in K]?: T } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: T };
}

function runCommand(workload: Workload, v: Values): RunCommand {
  const options = workloadOptions(workload, v);
  const devices = integer('devices', v.devices, 1, 64);
  const ranksPerDevice = integer('ranks-per-device', v['ranks-per-device'], 1);
  if (devices !== undefined && devices > options.ranks) {
    throw new UsageError(`--devices ${devices} is more than the ${options.ranks} ranks: a device would hold no rank`);
  }
  if (ranksPerDevice !== undefined && ranksPerDevice * (devices ?? 1) < options.ranks) {
    throw new UsageError(`--ranks-per-device ${ranksPerDevice} on ${devices ?? 1} device(s) holds ${ranksPerDevice * (devices ?? 1)} ranks, fewer than ${options.ranks}`);
  }
  return {
    kind: 'run',
    options: {
      workload: workload.name,
      ...options,
      order: oneOf<RunOrder>('order', v.order, RUN_ORDERS, 'chunk-arrival'),
      backend: oneOf<RunBackend>('backend', v.backend, RUN_BACKENDS, 'auto'),
      target: oneOf<RunTarget>('target', v.target, RUN_TARGETS, 'auto'),
      seed: integer('seed', v.seed, 0, 0xffffffff) ?? DEFAULT_SEED,
      ...(devices === undefined ? {} : { devices }),
      ...(ranksPerDevice === undefined ? {} : { ranksPerDevice }),
      ...(v['no-robustness'] && { robustness: false }),
      ...optional('verifyRows', integer('verify-rows', v['verify-rows'], 1)),
    },
    json: v.json ?? false,
    ...optional('trace', fileName('trace', v.trace)),
    ...optional('dumpWgsl', fileName('dump-wgsl', v['dump-wgsl'], 'a directory name')),
    ...optional('processes', integer('processes', v.processes, 1)),
  };
}

/** Reads `argv` (without `node` and the script); throws `UsageError` for anything it cannot accept. */
export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }) as typeof parsed;
  } catch (e) {
    throw parseError(e) ?? e;
  }
  const { values, positionals } = parsed;
  const [command, name, ...extra] = positionals;
  if (values.help || command === undefined || command === 'help') return { kind: 'help' };
  if (command !== 'compile' && command !== 'run' && command !== 'bench' && command !== 'tune') {
    throw new UsageError(`unknown command '${command}'; the commands are ${COMMANDS.join(', ')}`);
  }
  if (name === LAYER_NAME) {
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    if (command === 'compile') throw new UsageError(`${LAYER_NAME} is a program of ten kernels: run, bench and tune take it; compile takes one kernel's workload`);
    return layerCommand(command, values);
  }
  const allowed = ALLOWED[command];
  for (const option of Object.keys(values) as OptionName[]) {
    if (!allowed.includes(option)) throw new UsageError(`option --${option} does not apply to ${command}`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  if (command === 'compile') return compileCommand(name, values);
  if (command === 'bench') return benchCommand(name, values);
  if (command === 'tune') return tuneCommand(name, values);
  if (name === undefined) throw new UsageError(`${command} needs a workload: syncopate ${command} <workload>; see syncopate help`);
  return runCommand(getWorkload(name), values);
}
