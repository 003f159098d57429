/**
 * What a pass is: a named, pure function from a module to a new module or the diagnostics that say
 * why it could not make one. Passes edit through `editModule`, so the module they are given stays as it was.
 */
import * as E from 'fp-ts/lib/Either.js';
import { Immer, type Draft } from 'immer';
import { deepFreeze, SyncopateError, type ChunkPlan, type Diagnostic, type Module } from '@syncopate/ir';
import { checkFieldsOf, type OptionSchema, type OptionsOf } from './pass-options.js';

/** What every pass of one pipeline run can see besides the module. */
export interface PassContext {
  /** The chunk plan being compiled in, if any. */
  readonly plan?: ChunkPlan;
  /**
   * Each pass's settings under its own name (`{ 'reorder-tiles': { order: 'grouped' } }`), holding only
   * the fields that pass declares; the pass manager rejects anything else before the first pass runs.
   */
  readonly options: Readonly<Record<string, unknown>>;
}

export interface Pass {
  /** Unique in a registry; what pipeline text and `printAfter` name it by. */
  readonly name: string;
  /** One sentence: what the pass does to the module. */
  readonly description: string;
  /** The fields the pass reads from `ctx.options[name]`; a pass that declares none takes no options. */
  readonly options?: OptionSchema;
  readonly run: (module: Module, ctx: PassContext) => E.Either<readonly Diagnostic[], Module>;
}

/** A pass's body: the module, the context, and the pass's own options, already checked against what it declares. */
export type PassRun<O> = (module: Module, ctx: PassContext, options: O) => E.Either<readonly Diagnostic[], Module>;

/** Letters, digits, `_`, `.` and `-`: no commas or spaces, so pipeline text names every pass unambiguously. */
const PASS_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/**
 * A pass that takes no options, or one that declares the fields it reads from `ctx.options[name]`
 * (built with `option`): its `run` is handed them typed, and a field it does not declare, or a value
 * its field does not accept, is a diagnostic before `run` is called, as it is in a pipeline before
 * the first pass.
 */
export function definePass(name: string, description: string, run: PassRun<object>): Pass;
export function definePass<S extends OptionSchema>(name: string, description: string, options: S, run: PassRun<OptionsOf<S>>): Pass;
export function definePass(name: string, description: string, ...rest: [PassRun<object>] | [OptionSchema, PassRun<object>]): Pass {
  if (!PASS_NAME.test(name)) {
    throw new SyncopateError(`pass name '${name}' must start with a letter and hold only letters, digits, '_', '.' and '-'`);
  }
  const [options, body] = rest.length === 1 ? [undefined, rest[0]] : rest;
  const run: Pass['run'] = (module, ctx) => {
    const own = ctx.options[name];
    const problems = checkFieldsOf(name, options, own);
    return problems.length > 0 ? E.left(problems) : body(module, ctx, (own ?? {}) as object);
  };
  return Object.freeze({ name, description, ...(options && { options: Object.freeze({ ...options }) }), run });
}

// Re-exported so pass authors need no import of immer to type their draft helpers or add readonly data to a draft.
export { castDraft, type Draft } from 'immer';

// A private instance, so a caller's `setAutoFreeze(false)` cannot change what passes return. It does
// not freeze: immer's own freezing walks every new value a recipe assigns (a pass's new chunks or ops)
// several times over, and `deepFreeze` below does the same work once, stopping at frozen parts.
const immer = new Immer({ autoFreeze: false });

/**
 * Returns a new module with `recipe`'s edits applied to a draft of `module`; `module` itself is not
 * touched, parts the recipe leaves alone are shared, and the result is frozen.
 */
export function editModule(module: Module, recipe: (draft: Draft<Module>) => void): Module {
  return deepFreeze(immer.produce(module, recipe));
}
