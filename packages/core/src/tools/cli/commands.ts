/** `syncopate compile` and `syncopate run`, given a parsed command; each returns the exit code. */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { RankProcesses } from '../../api/processes.js';
import { UsageError } from '../../workloads/index.js';
import * as E from 'fp-ts/lib/Either.js';
import { emitPlacedKernels, type CodegenOptions } from '@syncopate/backends';
import { print, type Diagnostic } from '@syncopate/ir';
import { planToJson } from '@syncopate/passes';
import { compile, type CompiledKernel, type CompileOptions } from '../../api/compile.js';
import { CompileError } from '../../api/compile-error.js';
import { emitWgsl, runWorkload, type LoweredWorkload, type RunWorkloadOptions } from '../run.js';
import { traceRun } from '../trace.js';
import type { RunReport } from '../run-report.js';
import { checkTraceFile, writeTrace, writeWgslDump } from './outputs.js';
import type { CompileCommand, RunCommand } from './args.js';
import { WARMUP_RUNS } from './args.js';
import { alignedTable, formatMs, formatRunReport, timingStats, type TimingStats } from './report.js';
import { adapterBufferLimits, checkRunFits } from './limits.js';
import { formatDiagnosticIn, loadSource, planChunkNames, planOfModule, type LoadedSource } from './source.js';

/** Where the CLI writes: each call is one line or block of lines, without its final newline. */
export interface CliIO {
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
  /** A progress line that replaces the previous one (a terminal's stderr); '' clears it. */
  readonly progress?: (s: string) => void;
  /** Started under mpirun: the job this process is one of (cli/mpi-job.ts). */
  readonly processes?: RankProcesses;
}

/**
 * The options of a run as one process of an MPI job: its group, and by default a device per
 * process. A job of one process runs as if started alone. With `expected` (`--processes`), a job of
 * another size, or none (no mpirun), is refused here, before any device opens.
 */
export function asJob<T extends { readonly devices?: number }>(options: T, processes: RankProcesses | undefined, expected?: number): T & { readonly processes?: RankProcesses } {
  const size = processes?.size ?? 1;
  if (expected !== undefined && size !== expected) {
    if (processes) throw new UsageError(`--processes ${expected}, but mpirun started ${size}: give mpirun -n ${expected}`);
    throw new UsageError(`--processes ${expected}: this process was not started by mpirun; run mpirun -n ${expected} syncopate ...${onPath('mpirun') ? '' : ' (mpirun is not on PATH: install Open MPI 4, e.g. bash scripts/setup-mpi.sh, or apt-get install openmpi-bin libopenmpi-dev)'}`);
  }
  if (!processes || size === 1) return options;
  return { ...options, processes, devices: options.devices ?? size };
}

/** Whether an executable `name` is in one of PATH's directories. */
function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, name)));
}

function reportDiagnostics(io: CliIO, source: LoadedSource, diagnostics: readonly Diagnostic[], what = 'did not compile'): number {
  io.err(`syncopate: ${source.label} ${what}:`);
  const planChunks = source.planFile === undefined ? undefined : planChunkNames(source.kernel, source.plan);
  for (const d of diagnostics) io.err(`  ${formatDiagnosticIn({ ...source, planChunks }, d)}`);
  return 1;
}

function compileOptions(cmd: CompileCommand, io: CliIO | undefined): CompileOptions {
  const base: CompileOptions = { passOptions: { 'reorder-tiles': { order: cmd.order } } };
  if (io === undefined || cmd.dumpIrAfter === undefined) return base;
  // Printed as each pass finishes, so the IR before a failing pass is still shown.
  return { ...base, printAfter: cmd.dumpIrAfter, onDump: (pass, ir) => io.out(`// ----- IR after ${pass} -----\n${ir.trimEnd()}`) };
}

/** `--target`: named without an adapter, so subgroup matrices mean the H100's f16 -> f32 16x16x16. */
function codegenOf(cmd: CompileCommand): CodegenOptions {
  return cmd.target === undefined ? {} : { target: cmd.target };
}

function emitted(cmd: CompileCommand, compiled: CompiledKernel): string {
  // Every chunk of the compiled module: the plan's, and for an IR file those it declared itself.
  if (cmd.emit === 'plan') return planToJson(planOfModule(compiled.module, compiled.plan.name));
  if (cmd.emit === 'wgsl') return emitWgsl(compiled, codegenOf(cmd));
  return print(compiled.module);
}

export function compileCommand(cmd: CompileCommand, io: CliIO): number {
  const source = loadSource(cmd);
  if (cmd.timedRuns !== undefined) return timeCompile(cmd, cmd.timedRuns, source, io);
  const result = compile(source.kernel, source.plan, compileOptions(cmd, io));
  if (E.isLeft(result)) return reportDiagnostics(io, source, result.left);
  let text: string;
  try {
    if (cmd.dumpWgsl !== undefined) dumpWgsl(cmd, cmd.dumpWgsl, result.right, io);
    text = emitted(cmd, result.right);
  } catch (e) {
    if (e instanceof CompileError) return reportDiagnostics(io, source, e.diagnostics, 'did not lower to WGSL');
    throw e;
  }
  io.out(text.trimEnd());
  return 0;
}

/** `--dump-wgsl` of compile: the kernel on one device, as `--emit wgsl` prints it. */
function dumpWgsl(cmd: CompileCommand, dir: string, compiled: CompiledKernel, io: CliIO): void {
  const placed = emitPlacedKernels(compiled.module, [], codegenOf(cmd));
  if (E.isLeft(placed)) throw new CompileError(placed.left);
  reportDump(io, dir, writeWgslDump(dir, { module: compiled.module, placed: placed.right }));
}

function reportDump(io: CliIO, dir: string, files: readonly string[]): void {
  io.err(`syncopate: wrote ${files.join(', ')} into ${dir}`);
}

/** What was timed: the workload's fields for a workload, the files for an IR file. */
type TimedSource =
  | { readonly workload: string; readonly shape: { m: number; n: number; k: number }; readonly dtype: string }
  | { readonly ir: string; readonly plan: string | null };

type CompileTiming = TimedSource & TimingStats & {
  readonly ranks: number;
  readonly order: string;
  readonly chunks: number;
  readonly tiles: number;
  readonly warmups: number;
  readonly runs: number;
  readonly passes: readonly ({ pass: string } & TimingStats)[];
  /**
   * Lowering each compiled kernel to WGSL for one device (`--emit wgsl`, at `--target`), timed after
   * its compile, and the WGSL's size; or why it did not lower.
   */
  readonly wgsl: (TimingStats & { readonly target: string; readonly bytes: number }) | { readonly target: string; readonly failed: string };
  /** Per run, the compile and the WGSL together (the compile alone where the WGSL failed). */
  readonly total: TimingStats;
};

function timedSource(cmd: CompileCommand): TimedSource {
  if (cmd.source.kind === 'ir') return { ir: cmd.source.file, plan: cmd.planFile ?? null };
  const { workload, options } = cmd.source;
  return { workload: workload.name, shape: { ...options.shape }, dtype: options.dtype };
}

function timeCompile(cmd: CompileCommand, runs: number, source: LoadedSource, io: CliIO): number {
  const { kernel, plan } = source;
  const options = compileOptions(cmd, undefined);
  const totals: number[] = [];
  const lowerings: number[] = [];
  const perPass = new Map<string, number[]>();
  const target = cmd.target ?? 'simt';
  let wgslBytes = 0;
  let failed: string | undefined;
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    const started = performance.now();
    const result = compile(kernel, plan, options);
    const ms = performance.now() - started;
    if (E.isLeft(result)) return reportDiagnostics(io, source, result.left);
    const lowered = failed === undefined ? timeLowering(result.right, codegenOf(cmd)) : undefined;
    if (lowered && 'failed' in lowered) failed = lowered.failed;
    if (i < WARMUP_RUNS) continue;
    totals.push(ms);
    if (lowered && 'ms' in lowered) {
      lowerings.push(lowered.ms);
      wgslBytes = lowered.bytes;
    }
    for (const t of result.right.timings) perPass.set(t.pass, [...(perPass.get(t.pass) ?? []), t.ms]);
  }
  const timing: CompileTiming = {
    ...timedSource(cmd),
    ranks: kernel.ranks,
    order: cmd.order,
    chunks: kernel.chunks.length + plan.chunks.length,
    tiles: kernel.kernel.grid.reduce((a, b) => a * b, 1),
    warmups: WARMUP_RUNS,
    runs,
    ...timingStats(totals),
    passes: [...perPass].map(([pass, samples]) => ({ pass, ...timingStats(samples) })),
    wgsl: failed === undefined ? { target, ...timingStats(lowerings), bytes: wgslBytes } : { target, failed },
    total: timingStats(failed === undefined ? totals.map((ms, i) => ms + lowerings[i]!) : totals),
  };
  io.out(cmd.json ? JSON.stringify(timing, null, 2) : formatCompileTiming(timing));
  return 0;
}

/** One lowering to WGSL, timed; or the first diagnostic of a kernel that does not lower. */
function timeLowering(compiled: CompiledKernel, codegen: CodegenOptions): { ms: number; bytes: number } | { failed: string } {
  const started = performance.now();
  try {
    const bytes = emitWgsl(compiled, codegen).length;
    return { ms: performance.now() - started, bytes };
  } catch (e) {
    if (e instanceof CompileError) return { failed: e.diagnostics[0]?.message ?? e.message };
    throw e;
  }
}

function formatCompileTiming(t: CompileTiming): string {
  const head =
    `compile ${'workload' in t ? t.workload : t.ir} ranks=${t.ranks}: median ${formatMs(t.medianMs)} ms ` +
    `(p10 ${formatMs(t.p10Ms)}, p90 ${formatMs(t.p90Ms)}) over ${t.runs} runs`;
  const shape = 'workload' in t ? `${t.shape.m}x${t.shape.n}x${t.shape.k} ${t.dtype}, ` : '';
  const about = `  ${shape}${t.tiles} tiles, ${t.chunks} chunks, order ${t.order}; median per pass:`;
  const passes = alignedTable(t.passes.map((p) => [`    ${p.pass}`, `${formatMs(p.medianMs)} ms`]));
  const wgsl =
    'failed' in t.wgsl
      ? `  WGSL (${t.wgsl.target}): not timed, it does not lower: ${t.wgsl.failed}`
      : `  then the WGSL (${t.wgsl.target}, ${t.wgsl.bytes} bytes): median ${formatMs(t.wgsl.medianMs)} ms ` +
        `(p10 ${formatMs(t.wgsl.p10Ms)}, p90 ${formatMs(t.wgsl.p90Ms)}); compile and WGSL: median ${formatMs(t.total.medianMs)} ms`;
  return [head, about, passes, wgsl].join('\n');
}

export async function runCommand(cmd: RunCommand, io: CliIO): Promise<number> {
  if (cmd.trace !== undefined && io.processes && io.processes.size > 1) throw new UsageError('--trace: a run over several processes cannot be traced yet; trace it in one process (without mpirun)');
  if (cmd.trace !== undefined) checkTraceFile(cmd.trace);
  const limits = await adapterBufferLimits();
  if (limits !== undefined) checkRunFits(cmd.options, limits);
  const dumpDir = cmd.dumpWgsl;
  // Written before the run, so the kernels are there to read should the run fail.
  const job = asJob(cmd.options, io.processes, cmd.processes);
  const options: RunWorkloadOptions = dumpDir === undefined ? job : { ...job, onLowered: (l: LoweredWorkload) => reportDump(io, dumpDir, writeWgslDump(dumpDir, l)) };
  let report: RunReport;
  if (cmd.trace === undefined) report = await runWorkload(options);
  else {
    const traced = await traceRun(options);
    writeTrace(cmd.trace, traced.trace);
    io.err(`syncopate: wrote the trace of one more run into ${cmd.trace} (open it in https://ui.perfetto.dev or chrome://tracing)`);
    report = traced.report;
  }
  io.out(cmd.json ? JSON.stringify(report, null, 2) : formatRunReport(report));
  return report.verified ? 0 : 1;
}
