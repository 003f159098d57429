/**
 * The `syncopate` command line, callable in-process: `main(argv, io)` returns the exit code and
 * writes only through `io`. Bad usage (a file that cannot be read included) is one line on `err` and
 * code 2; an IR or plan file that is malformed, or a kernel that does not compile, prints where and
 * what and gives 1; any other error is one line and 1 (its stack too with `SYNCOPATE_DEBUG=1`).
 */
import { formatDiagnostic, IRVerifyError } from '@syncopate/ir';
import { CompileError } from '../../api/compile-error.js';
import { UsageError } from '../../workloads/index.js';
import { parseCommandLine, type Command } from './args.js';
import { benchCommandRun } from './bench-command.js';
import { compileCommand, runCommand, type CliIO } from './commands.js';
import { tuneCommandRun } from './tune-command.js';
import { layerCommandRun } from './layer-command.js';
import { TUNE_OVER_PROCESSES } from '../tp-layer-runner.js';
import { SourceError } from './source.js';
import { usage } from './usage.js';

export type { CliIO } from './commands.js';
export { formatRunReport, quantile, timingStats, type TimingStats } from './report.js';
export { benchRuns, type BenchCommand } from './bench-args.js';
export { parseCommandLine, type Command, type CompileCommand, type KernelSource, type RunCommand } from './args.js';
export { SourceError } from './source.js';
export { usage } from './usage.js';

export interface MainIO extends CliIO {
  /** Environment to read `SYNCOPATE_DEBUG` from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Told of an error that is not the user's to fix (not bad usage, not a kernel that does not compile), after it is reported. */
  readonly onFailure?: (thrown: unknown) => void;
}

/** Runs the command line `argv` (without `node` and the script); resolves to the exit code. */
export async function main(argv: readonly string[], io: MainIO): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (thrown) {
    return reportThrown(thrown, io);
  }
  return execute(command, io);
}

/** Runs a parsed command, reporting what it throws as `main` does. */
export async function execute(command: Command, io: MainIO): Promise<number> {
  try {
    if (command.kind === 'help') {
      io.out(usage());
      return 0;
    }
    if (command.kind === 'compile') return compileCommand(command, io);
    // Each process would search alone (and write one tune cache together).
    if (io.processes && io.processes.size > 1) {
      if (command.kind === 'tune') throw new UsageError('tune cannot run over several processes yet: run it without mpirun');
      if (command.kind === 'layer' && command.action === 'tune') throw new UsageError(TUNE_OVER_PROCESSES);
    }
    if (command.kind === 'bench') return await benchCommandRun(command, io);
    if (command.kind === 'layer') return await layerCommandRun(command, io);
    return command.kind === 'tune' ? await tuneCommandRun(command, io) : await runCommand(command, io);
  } catch (thrown) {
    return reportThrown(thrown, io);
  }
}

function reportThrown(thrown: unknown, io: MainIO): number {
  if (thrown instanceof UsageError) {
    io.err(`syncopate: ${oneLine(thrown.message)}`);
    return 2;
  }
  if (thrown instanceof SourceError) {
    const [first, ...rest] = thrown.lines;
    io.err(`syncopate: ${first ?? ''}`);
    for (const line of rest) io.err(line);
    return 1;
  }
  if (thrown instanceof CompileError || thrown instanceof IRVerifyError) {
    io.err(`syncopate: ${thrown instanceof CompileError ? 'the kernel did not compile' : 'the kernel is not valid IR'}:`);
    for (const d of thrown.diagnostics) io.err(`  ${formatDiagnostic(d)}`);
    return 1;
  }
  const message = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  io.err(`syncopate: ${oneLine(message)}`);
  const env = io.env ?? process.env;
  if (env.SYNCOPATE_DEBUG === '1' && thrown instanceof Error && thrown.stack) io.err(thrown.stack);
  io.onFailure?.(thrown);
  return 1;
}

function oneLine(s: string): string {
  return s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ');
}
