/**
 * `align-chunks`: aligns the kernel's tiles with the plan's chunks and rejects a plan that leaves
 * data uncovered, writes elements twice, sends data its source does not have, or could deadlock.
 * The alignment itself is an analysis (`alignChunks`), memoised per module for the passes after.
 */
import * as E from 'fp-ts/lib/Either.js';
import { alignChunks } from './analysis/align.js';
import { checkTileAlignment } from './analysis/tile-alignment.js';
import { validatePlan } from './analysis/validate-plan.js';
import { definePass, type Pass } from './pass.js';
import { option, type OptionSchema } from './pass-options.js';

export interface AlignOptions {
  /** `aligned`: refuse tiles that span a chunk boundary (`align/straddle`); `any` (default): allow them. */
  readonly tiles?: 'any' | 'aligned';
}

const alignOptionFields: OptionSchema<AlignOptions> = { tiles: option.oneOf('any', 'aligned') };

export const alignChunksPass: Pass = definePass(
  'align-chunks',
  'intersects every tile access with every chunk and validates the plan: coverage, overlaps, availability, store conflicts, deadlock',
  alignOptionFields,
  (module, _ctx, { tiles = 'any' }) => {
    const problems = [...validatePlan(module), ...(tiles === 'aligned' ? checkTileAlignment(module) : [])];
    if (problems.length > 0) return E.left(problems);
    alignChunks(module);
    return E.right(module);
  },
);
