/** The passes `compile` runs when it is not given a pipeline. */
import { alignChunksPass, attachPlan, insertBarriers, reorderTiles, type Pass } from '@syncopate/passes';

/** In order; a fresh array each call, so a caller may extend it without changing anyone else's. */
export function defaultPipeline(): Pass[] {
  return [attachPlan, alignChunksPass, reorderTiles, insertBarriers];
}
