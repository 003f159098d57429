/**
 * `compile`: a local tiled kernel and a chunk plan in, the kernel rewritten for that plan out (today:
 * the plan attached and verified; the Syncopate passes and WGSL codegen join `defaultPipeline`).
 */
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { ChunkPlan, Diagnostic, Module } from '@syncopate/ir';
import { formatPipeline, runPipeline, type Pass, type PassDump, type PassOptions, type PassTiming, type PipelineOptions } from '@syncopate/passes';
import { CompileError } from './compile-error.js';
import { defaultPipeline } from './pipeline.js';

export interface CompileOptions {
  /** The passes to run, in order (default `defaultPipeline()`). */
  readonly pipeline?: readonly Pass[];
  /**
   * Each pass's settings under its name (`{ 'reorder-tiles': { order: 'grouped' } }`), as `ctx.options`.
   * A key naming no pass of the pipeline, a field the pass does not declare or a value it does not
   * take is a type error here and a diagnostic at run time (`options/unknown-pass`, ...).
   */
  readonly passOptions?: PassOptions;
  /** Print the IR after every pass, or after the passes named (see `PipelineOptions`). */
  readonly printAfter?: PipelineOptions['printAfter'];
  readonly onDump?: PipelineOptions['onDump'];
  /** Verify before the first pass and after each one (default true). */
  readonly verifyEach?: boolean;
}

export interface CompiledKernel {
  readonly module: Module;
  readonly plan: ChunkPlan;
  /** The passes that ran, as pipeline text: `attach-plan,...`. */
  readonly pipeline: string;
  readonly dumps: readonly PassDump[];
  readonly timings: readonly PassTiming[];
}

export function compile(kernel: Module, plan: ChunkPlan, options: CompileOptions = {}): E.Either<readonly Diagnostic[], CompiledKernel> {
  const pipeline = options.pipeline ?? defaultPipeline();
  // `PassOptions` is an interface (open to custom passes' keys), so it lacks the index signature of
  // `ctx.options`; whatever a caller hands in, runPipeline checks all of it before the first pass.
  const ctx = { plan, options: (options.passOptions ?? {}) as Readonly<Record<string, unknown>> };
  const { verifyEach, printAfter, onDump } = options;
  return pipe(
    runPipeline(pipeline, kernel, ctx, { verifyEach, printAfter, onDump }),
    E.map(({ module, dumps, timings }) => ({ module, plan, pipeline: formatPipeline(pipeline), dumps, timings })),
  );
}

/** `compile`, for callers who would rather catch: throws `CompileError` carrying the diagnostics. */
export function compileOrThrow(kernel: Module, plan: ChunkPlan, options: CompileOptions = {}): CompiledKernel {
  return pipe(
    compile(kernel, plan, options),
    E.getOrElse((diagnostics): CompiledKernel => {
      throw new CompileError(diagnostics);
    }),
  );
}
