/**
 * `align-chunks`: aligns the kernel's tiles with the plan's chunks and rejects a plan that leaves
 * data uncovered, writes elements twice, sends data its source does not have, or could deadlock.
 * The alignment itself is an analysis (`alignChunks`), memoised per module for the passes after.
 */
import * as E from 'fp-ts/lib/Either.js';
import { alignChunks } from './analysis/align.js';
import { validatePlan } from './analysis/validate-plan.js';
import { definePass, type Pass } from './pass.js';

export const alignChunksPass: Pass = definePass(
  'align-chunks',
  'intersects every tile access with every chunk and validates the plan: coverage, overlaps, availability, store conflicts, deadlock',
  (module) => {
    const problems = validatePlan(module);
    if (problems.length > 0) return E.left(problems);
    alignChunks(module);
    return E.right(module);
  },
);
