/**
 * The pass manager: runs passes in order over a module, verifying between them, printing the IR after
 * the ones asked for and timing each, as MLIR's does. Before any pass runs it checks `printAfter` and
 * the pass options against the pipeline. The first failure stops the pipeline; every
 * diagnostic that comes out says which pass (or `<input>`) it belongs to.
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { error, hasErrors, print, verify, type Diagnostic, type Module } from '@syncopate/ir';
import type { Pass, PassContext } from './pass.js';
import { checkPassOptions } from './pass-options.js';

export interface PipelineOptions {
  /**
   * Verify the module before the first pass and after each one (default true); after a pass that
   * returns the frozen module it was given, unchanged, the verification before it stands.
   */
  readonly verifyEach?: boolean;
  /** Print the IR after every pass, or after the passes named. */
  readonly printAfter?: 'all' | readonly string[];
  /** Called with each dump as soon as it is made, so IR printed before a later failure is not lost. */
  readonly onDump?: (pass: string, ir: string) => void;
  /** The verifier `verifyEach` runs (default `verify` from `@syncopate/ir`); extra checks go here. */
  readonly verifier?: (module: Module) => readonly Diagnostic[];
}

export interface PassDump {
  readonly pass: string;
  readonly ir: string;
}

export interface PassTiming {
  readonly pass: string;
  readonly ms: number;
}

export interface PipelineResult {
  readonly module: Module;
  /** `print(module)` after each pass `printAfter` asked for, in pipeline order. */
  readonly dumps: readonly PassDump[];
  /** One entry per pass run, in pipeline order; verification and printing are not counted. */
  readonly timings: readonly PassTiming[];
}

type Diagnostics = readonly Diagnostic[];

/** What verification of the module handed to the pipeline is reported as (no pass name can be this). */
export const INPUT_STAGE = '<input>';

interface Settings {
  readonly verifier: ((module: Module) => Diagnostics) | undefined;
  readonly shouldPrint: (pass: string) => boolean;
  readonly onDump: ((pass: string, ir: string) => void) | undefined;
}

export function runPipeline(
  passes: readonly Pass[],
  module: Module,
  ctx: PassContext,
  options: PipelineOptions = {},
): E.Either<Diagnostics, PipelineResult> {
  const settings = settingsFrom(options);
  const start: PipelineResult = { module, dumps: [], timings: [] };
  return pipe(
    checkPrintAfter(passes, options.printAfter),
    E.chain(() => checkOptions(passes, ctx.options)),
    E.chain(() => verifyAfter(INPUT_STAGE, module, settings)),
    E.chain(() =>
      passes.reduce<E.Either<Diagnostics, PipelineResult>>(
        (state, pass) => pipe(state, E.chain(runStep(pass, ctx, settings))),
        E.right(start),
      ),
    ),
  );
}

function settingsFrom(options: PipelineOptions): Settings {
  const { printAfter } = options;
  return {
    verifier: options.verifyEach === false ? undefined : (options.verifier ?? verify),
    shouldPrint: (pass) => printAfter === 'all' || (printAfter?.includes(pass) ?? false),
    onDump: options.onDump,
  };
}

/** A misspelt `printAfter` name would otherwise print nothing and say nothing. */
function checkPrintAfter(passes: readonly Pass[], printAfter: PipelineOptions['printAfter']): E.Either<Diagnostics, void> {
  if (printAfter === undefined || printAfter === 'all') return E.right(undefined);
  const inPipeline = new Set(passes.map((p) => p.name));
  const unknown = printAfter.filter((name) => !inPipeline.has(name));
  if (unknown.length === 0) return E.right(undefined);
  return E.left(
    unknown.map((name) =>
      error('pipeline/unknown-pass', `printAfter names '${name}', which is not in the pipeline '${formatPipeline(passes)}'`),
    ),
  );
}

/** A misspelt option would otherwise change nothing and say nothing; checked before any pass runs. */
function checkOptions(passes: readonly Pass[], options: PassContext['options']): E.Either<Diagnostics, void> {
  const problems = checkPassOptions(passes, options);
  return problems.length > 0 ? E.left(problems) : E.right(undefined);
}

/** One pass: run it, then verify, record its timing and print what was asked for. */
function runStep(pass: Pass, ctx: PassContext, settings: Settings) {
  return (state: PipelineResult): E.Either<Diagnostics, PipelineResult> => {
    const started = performance.now();
    const outcome = runGuarded(pass, state.module, ctx);
    const ms = performance.now() - started;
    return pipe(
      outcome,
      E.mapLeft((ds) => tagWith(pass.name, ds)),
      // As MLIR's pass manager does for a pass that preserves everything: a pass that hands back the
      // very module it was given, frozen so nothing could have changed it in place, changed nothing,
      // and that module has just been verified.
      E.chain((module) => (module === state.module && Object.isFrozen(module) ? E.right(module) : verifyAfter(pass.name, module, settings))),
      E.map((module) => ({
        module,
        dumps: settings.shouldPrint(pass.name) ? [...state.dumps, dump(pass.name, module, settings)] : state.dumps,
        timings: [...state.timings, { pass: pass.name, ms }],
      })),
    );
  };
}

/** A pass that throws, or returns something other than an Either, fails with a diagnostic, not a stack trace. */
function runGuarded(pass: Pass, module: Module, ctx: PassContext): E.Either<Diagnostics, Module> {
  let outcome: unknown;
  try {
    outcome = pass.run(module, ctx);
  } catch (thrown) {
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return E.left([error('pass/crashed', `pass '${pass.name}' crashed: ${message}`, { pass: pass.name })]);
  }
  if (!isEither(outcome)) {
    return E.left([error('pass/bad-result', `pass '${pass.name}' returned neither E.left nor E.right`, { pass: pass.name })]);
  }
  if (E.isLeft(outcome) && outcome.left.length === 0) {
    return E.left([error('pass/failed', `pass '${pass.name}' failed without a diagnostic`, { pass: pass.name })]);
  }
  return outcome;
}

function isEither(x: unknown): x is E.Either<Diagnostics, Module> {
  return typeof x === 'object' && x !== null && '_tag' in x && (x._tag === 'Left' || x._tag === 'Right');
}

function verifyAfter(stage: string, module: Module, settings: Settings): E.Either<Diagnostics, Module> {
  if (!settings.verifier) return E.right(module);
  const diagnostics = settings.verifier(module);
  return hasErrors(diagnostics) ? E.left(tagWith(stage, diagnostics)) : E.right(module);
}

/** Keeps a pass name already set, so a pass that runs a nested pipeline keeps its inner attribution. */
function tagWith(pass: string, diagnostics: Diagnostics): Diagnostics {
  return diagnostics.map((d) => (d.pass === undefined ? { ...d, pass } : d));
}

function dump(pass: string, module: Module, settings: Settings): PassDump {
  const ir = print(module);
  settings.onDump?.(pass, ir);
  return { pass, ir };
}

/** `attach-plan,verify-plan,...`: the pipeline as `PassRegistry.parsePipeline` reads it back. */
export function formatPipeline(passes: readonly Pass[]): string {
  return passes.map((p) => p.name).join(',');
}

/** An aligned table: one row per pass with its milliseconds and share of the total, then the total. */
export function formatTimings(timings: readonly PassTiming[]): string {
  const total = timings.reduce((sum, t) => sum + t.ms, 0);
  const rows = [
    ...timings.map((t) => [t.pass, t.ms.toFixed(3), total > 0 ? `${((100 * t.ms) / total).toFixed(1)}%` : '-']),
    ['total', total.toFixed(3), ''],
  ];
  const header = ['pass', 'ms', 'share'];
  const nameWidth = Math.max(header[0]!.length, ...rows.map((r) => r[0]!.length));
  const msWidth = Math.max(header[1]!.length, ...rows.map((r) => r[1]!.length));
  const shareWidth = Math.max(header[2]!.length, ...rows.map((r) => r[2]!.length));
  const line = ([name, ms, share]: readonly string[]) =>
    `${name!.padEnd(nameWidth)}  ${ms!.padStart(msWidth)}  ${share!.padStart(shareWidth)}`.trimEnd();
  return [header, ...rows].map(line).join('\n');
}
