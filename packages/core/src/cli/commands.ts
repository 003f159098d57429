/** `syncopate compile` and `syncopate run`, given a parsed command; each returns the exit code. */
import * as E from 'fp-ts/lib/Either.js';
import { formatDiagnostic, print, type ChunkPlan, type Diagnostic, type Module } from '@syncopate/ir';
import { planToJson } from '@syncopate/passes';
import { compile, type CompiledKernel, type CompileOptions } from '../compile.js';
import { emitWgsl, runWorkload } from '../run.js';
import type { CompileCommand, RunCommand } from './args.js';
import { WARMUP_RUNS } from './args.js';
import { alignedTable, formatMs, formatRunReport, timingStats, type TimingStats } from './report.js';

/** Where the CLI writes: each call is one line or block of lines, without its final newline. */
export interface CliIO {
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
}

function reportDiagnostics(io: CliIO, workload: string, diagnostics: readonly Diagnostic[]): number {
  io.err(`syncopate: ${workload} did not compile:`);
  for (const d of diagnostics) io.err(`  ${formatDiagnostic(d)}`);
  return 1;
}

function compileOptions(cmd: CompileCommand, io: CliIO | undefined): CompileOptions {
  const base: CompileOptions = { passOptions: { 'reorder-tiles': { order: cmd.order } } };
  if (io === undefined || cmd.dumpIrAfter === undefined) return base;
  // Printed as each pass finishes, so the IR before a failing pass is still shown.
  return { ...base, printAfter: cmd.dumpIrAfter, onDump: (pass, ir) => io.out(`// ----- IR after ${pass} -----\n${ir.trimEnd()}`) };
}

function emitted(cmd: CompileCommand, compiled: CompiledKernel): string {
  if (cmd.emit === 'plan') return planToJson(compiled.plan);
  if (cmd.emit === 'wgsl') return emitWgsl(compiled);
  return print(compiled.module);
}

export function compileCommand(cmd: CompileCommand, io: CliIO): number {
  const { kernel, plan } = cmd.workload.build(cmd.options);
  if (cmd.timedRuns !== undefined) return timeCompile(cmd, cmd.timedRuns, kernel, plan, io);
  const result = compile(kernel, plan, compileOptions(cmd, io));
  if (E.isLeft(result)) return reportDiagnostics(io, cmd.workload.name, result.left);
  io.out(emitted(cmd, result.right).trimEnd());
  return 0;
}

interface CompileTiming extends TimingStats {
  readonly workload: string;
  readonly ranks: number;
  readonly shape: { m: number; n: number; k: number };
  readonly dtype: string;
  readonly order: string;
  readonly chunks: number;
  readonly tiles: number;
  readonly warmups: number;
  readonly runs: number;
  readonly passes: readonly ({ pass: string } & TimingStats)[];
}

function timeCompile(cmd: CompileCommand, runs: number, kernel: Module, plan: ChunkPlan, io: CliIO): number {
  const options = compileOptions(cmd, undefined);
  const totals: number[] = [];
  const perPass = new Map<string, number[]>();
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    const started = performance.now();
    const result = compile(kernel, plan, options);
    const ms = performance.now() - started;
    if (E.isLeft(result)) return reportDiagnostics(io, cmd.workload.name, result.left);
    if (i < WARMUP_RUNS) continue;
    totals.push(ms);
    for (const t of result.right.timings) perPass.set(t.pass, [...(perPass.get(t.pass) ?? []), t.ms]);
  }
  const timing: CompileTiming = {
    workload: cmd.workload.name,
    ranks: cmd.options.ranks,
    shape: { ...cmd.options.shape },
    dtype: cmd.options.dtype,
    order: cmd.order,
    chunks: plan.chunks.length,
    tiles: kernel.kernel.grid.reduce((a, b) => a * b, 1),
    warmups: WARMUP_RUNS,
    runs,
    ...timingStats(totals),
    passes: [...perPass].map(([pass, samples]) => ({ pass, ...timingStats(samples) })),
  };
  io.out(cmd.json ? JSON.stringify(timing, null, 2) : formatCompileTiming(timing));
  return 0;
}

function formatCompileTiming(t: CompileTiming): string {
  const head =
    `compile ${t.workload} ranks=${t.ranks}: median ${formatMs(t.medianMs)} ms ` +
    `(p10 ${formatMs(t.p10Ms)}, p90 ${formatMs(t.p90Ms)}) over ${t.runs} runs`;
  const { m, n, k } = t.shape;
  const about = `  ${m}x${n}x${k} ${t.dtype}, ${t.tiles} tiles, ${t.chunks} chunks, order ${t.order}; median per pass:`;
  const passes = alignedTable(t.passes.map((p) => [`    ${p.pass}`, `${formatMs(p.medianMs)} ms`]));
  return [head, about, passes].join('\n');
}

export async function runCommand(cmd: RunCommand, io: CliIO): Promise<number> {
  const report = await runWorkload(cmd.options);
  io.out(cmd.json ? JSON.stringify(report, null, 2) : formatRunReport(report));
  return report.verified ? 0 : 1;
}
