/**
 * What `syncopate compile` compiles, loaded: a workload's kernel and plan, or a kernel read from a
 * file of textual IR and a plan read from a file of the plan JSON form. Problems with the files reach
 * the user as `SourceError`s that name the file (and the line and column where there is one); a file
 * that cannot be read at all is a `UsageError` (exit code 2), like any other bad argument.
 */
import { readFileSync } from 'node:fs';
import * as E from 'fp-ts/lib/Either.js';
import {
  formatDiagnostic,
  IRParseError,
  parse,
  SyncopateError,
  verify,
  type ChunkPlan,
  type ChunkSpec,
  type Diagnostic,
  type Module,
} from '@syncopate/ir';
import { attachPlan, PlanFormatError, planFromJson } from '@syncopate/passes';
import { UsageError } from '../../workloads/index.js';
import type { CompileCommand } from './args.js';
import { findJsonSyntaxError } from './json-error.js';

/** A kernel and a plan to compile, and how to name them to the user. */
export interface LoadedSource {
  readonly kernel: Module;
  readonly plan: ChunkPlan;
  /** The workload's name, or the IR file (with ` with plan FILE` when a plan file was given). */
  readonly label: string;
  /** The file `loc`s in diagnostics point into, when the kernel came from one. */
  readonly irFile: string | undefined;
  /** The plan file, when the plan came from one. */
  readonly planFile: string | undefined;
}

/**
 * A file given on the command line whose contents are wrong: not IR, not valid IR, not a plan.
 * `lines` is what the CLI prints, the first line a summary naming the file.
 */
export class SourceError extends SyncopateError {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

const WHY: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
};

/** The file's text (a leading byte-order mark dropped); `UsageError` naming the file and why when it cannot be read. */
export function readSourceFile(flag: string, file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    const why = WHY[code] ?? (e instanceof Error ? e.message : String(e));
    throw new UsageError(`cannot read the ${flag} file '${file}': ${why}`);
  }
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** What a diagnostic can point into: the IR file its `loc`s are in, and the plan file its chunks came from. */
export interface DiagnosticFiles {
  readonly irFile?: string | undefined;
  readonly planFile?: string | undefined;
  /** Names of the chunks attached from the plan file, to their index in its `chunks`. */
  readonly planChunks?: ReadonlyMap<string, number>;
}

/**
 * A diagnostic on one line, led by where it points: `FILE:LINE:COLUMN: ` for an op of the IR file,
 * `PLAN: chunks[I]: ` for a chunk of the plan file, nothing otherwise (`formatDiagnostic`'s form).
 */
export function formatDiagnosticIn(files: DiagnosticFiles, d: Diagnostic): string {
  if (files.irFile !== undefined && d.loc !== undefined) {
    return `${files.irFile}:${d.loc.line}:${d.loc.column}: ${formatDiagnostic({ ...d, loc: undefined })}`;
  }
  const index = d.op === 'chunk' && d.value !== undefined ? files.planChunks?.get(d.value) : undefined;
  if (files.planFile !== undefined && index !== undefined) return `${files.planFile}: chunks[${index}]: ${formatDiagnostic(d)}`;
  return formatDiagnostic(d);
}

/** The value names `attach-plan` gives the chunks of `plan` in `kernel`, each to its index in the plan. */
export function planChunkNames(kernel: Module, plan: ChunkPlan): Map<string, number> {
  const attached = attachPlan.run(kernel, { plan, options: {} });
  if (E.isLeft(attached)) return new Map();
  return new Map(attached.right.chunks.slice(kernel.chunks.length).map((c, i) => [c.value.name, i]));
}

/** Parses and verifies `text`, a module of textual IR from `file`; `SourceError` naming the file, line and column otherwise. */
export function loadModule(file: string, text: string): Module {
  let module: Module;
  try {
    module = parse(text);
  } catch (e) {
    if (e instanceof IRParseError) throw new SourceError([`${file}:${e.line}:${e.column}: ${e.message.replace(/^\d+:\d+: /, '')}`]);
    throw e;
  }
  const problems = verify(module);
  if (problems.length > 0) {
    throw new SourceError([`${file} is not valid IR:`, ...problems.map((d) => `  ${formatDiagnosticIn({ irFile: file }, d)}`)]);
  }
  return module;
}

/** Reads `text`, a plan of the JSON form from `file`; `SourceError` naming the file and where the first problem is. */
export function loadPlan(file: string, text: string): ChunkPlan {
  try {
    return planFromJson(text);
  } catch (e) {
    if (!(e instanceof PlanFormatError)) throw e;
    if (e.path !== '(file)') throw new SourceError([`${file}: ${e.path}: ${e.problem}`]);
    const syntax = findJsonSyntaxError(text);
    if (syntax) throw new SourceError([`${file}:${syntax.line}:${syntax.column}: not valid JSON: ${syntax.message}`]);
    throw new SourceError([`${file}: ${oneLine(e.problem)}`]);
  }
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ');

/** The chunks `module` declares, as a plan (what `--emit plan` prints for a kernel from an IR file). */
export function planOfModule(module: Module, name?: string): ChunkPlan {
  const chunks: ChunkSpec[] = module.chunks.map((c) => ({
    tensor: c.tensor,
    region: { lo: [...c.region.lo], hi: [...c.region.hi] },
    src: c.src,
    dst: c.dst,
    step: c.step,
    kind: c.kind,
    backend: c.backend,
  }));
  return { ...(name === undefined ? {} : { name }), ranks: module.ranks, chunks };
}

/**
 * The kernel and plan of a compile command. An IR file without `--plan` compiles with the chunks it
 * declares (an empty plan is attached); with `--plan`, the plan's chunks are added to them.
 */
export function loadSource(cmd: CompileCommand): LoadedSource {
  // Both files read before either is parsed: one that cannot be read is refused before any other work.
  const irText = cmd.source.kind === 'ir' ? readSourceFile('--ir', cmd.source.file) : undefined;
  const planText = cmd.planFile === undefined ? undefined : readSourceFile('--plan', cmd.planFile);
  const withPlan = cmd.planFile === undefined ? '' : ` with plan ${cmd.planFile}`;
  if (cmd.source.kind === 'workload') {
    // The tile `run` takes on a device with subgroup matrices, so the WGSL printed is the one that runs there.
    const { workload, options } = cmd.source;
    const tensorCore = cmd.target === 'subgroup-matrix' && options.block === undefined ? workload.tensorCoreBlock?.(options) : undefined;
    const built = workload.build(tensorCore ? { ...options, block: tensorCore } : options);
    const plan = planText === undefined ? built.plan : loadPlan(cmd.planFile!, planText);
    return { kernel: built.kernel, plan, label: `${cmd.source.workload.name}${withPlan}`, irFile: undefined, planFile: cmd.planFile };
  }
  const kernel = loadModule(cmd.source.file, irText!);
  const plan = planText === undefined ? undefined : loadPlan(cmd.planFile!, planText);
  return { kernel, plan: plan ?? { ranks: kernel.ranks, chunks: [] }, label: `${cmd.source.file}${withPlan}`, irFile: cmd.source.file, planFile: cmd.planFile };
}
