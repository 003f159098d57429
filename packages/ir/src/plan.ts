/** A chunk plan: which region of which tensor moves from which rank to which, at which step. */
import type { Box, ChunkKind, CommBackend } from './types.js';

/** One chunk of a plan, before it becomes an SSA chunk value in a module. */
export interface ChunkSpec {
  readonly tensor: string;
  readonly region: Box;
  readonly src: number;
  readonly dst: number;
  readonly step: number;
  readonly kind?: ChunkKind;
  readonly backend?: CommBackend;
}

export interface ChunkPlan {
  /** What made the plan, e.g. `ring-all-gather(A, axis=0)`; for messages and printing. */
  readonly name?: string;
  readonly ranks: number;
  readonly chunks: readonly ChunkSpec[];
}
