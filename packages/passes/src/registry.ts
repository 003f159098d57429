/**
 * Passes by name, so a pipeline can be written as text (`attach-plan,verify-plan`) as MLIR's
 * `--pass-pipeline` is, and framework authors can add their own passes beside the built-in ones.
 */
import * as E from 'fp-ts/lib/Either.js';
import { error, SyncopateError, type Diagnostic } from '@syncopate/ir';
import { attachPlan } from './attach-plan.js';
import { alignChunksPass } from './align-chunks.js';
import { insertBarriers } from './insert-barriers.js';
import { reorderTiles } from './reorder-tiles.js';
import type { Pass } from './pass.js';

export class PassRegistry {
  private readonly passes = new Map<string, Pass>();

  /** Adds `pass`; a second pass of the same name throws, since pipeline text could not tell them apart. */
  register(pass: Pass): this {
    if (this.passes.has(pass.name)) throw new SyncopateError(`a pass named '${pass.name}' is already registered`);
    this.passes.set(pass.name, pass);
    return this;
  }

  get(name: string): Pass | undefined {
    return this.passes.get(name);
  }

  /** Registered names, in registration order. */
  names(): readonly string[] {
    return [...this.passes.keys()];
  }

  /** Reads `a,b , c` into passes; every unknown or empty name is reported, not just the first. */
  parsePipeline(text: string): E.Either<Diagnostic[], Pass[]> {
    if (text.trim() === '') return E.right([]);
    const passes: Pass[] = [];
    const problems: Diagnostic[] = [];
    text.split(',').forEach((raw, index) => {
      const name = raw.trim();
      const pass = this.passes.get(name);
      if (pass) passes.push(pass);
      else if (name === '') problems.push(error('pipeline/syntax', `pipeline '${text}': pass name missing at position ${index + 1}`));
      else problems.push(error('pipeline/unknown-pass', `unknown pass '${name}'; known passes: ${this.names().join(', ')}`));
    });
    return problems.length > 0 ? E.left(problems) : E.right(passes);
  }
}

/** A fresh registry holding the built-in passes; fresh, so one caller's registrations stay its own. */
export function defaultRegistry(): PassRegistry {
  return new PassRegistry().register(attachPlan).register(alignChunksPass).register(reorderTiles).register(insertBarriers);
}
