/**
 * What a pass is: a named, pure function from a module to a new module or the diagnostics that say
 * why it could not make one. Passes edit through `editModule`, so the module they are given stays as it was.
 */
import type { Either } from 'fp-ts/lib/Either.js';
import { Immer, type Draft } from 'immer';
import { deepFreeze, SyncopateError, type ChunkPlan, type Diagnostic, type Module } from '@syncopate/ir';

/** What every pass of one pipeline run can see besides the module. */
export interface PassContext {
  /** The chunk plan being compiled in, if any. */
  readonly plan?: ChunkPlan;
  /** Free-form settings for passes that take any, keyed by whatever the pass documents. */
  readonly options: Readonly<Record<string, unknown>>;
}

export interface Pass {
  /** Unique in a registry; what pipeline text and `printAfter` name it by. */
  readonly name: string;
  /** One sentence: what the pass does to the module. */
  readonly description: string;
  readonly run: (module: Module, ctx: PassContext) => Either<readonly Diagnostic[], Module>;
}

/** Letters, digits, `_`, `.` and `-`: no commas or spaces, so pipeline text names every pass unambiguously. */
const PASS_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;

export function definePass(name: string, description: string, run: Pass['run']): Pass {
  if (!PASS_NAME.test(name)) {
    throw new SyncopateError(`pass name '${name}' must start with a letter and hold only letters, digits, '_', '.' and '-'`);
  }
  return Object.freeze({ name, description, run });
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
