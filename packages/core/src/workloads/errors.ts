/** Checks of workload options, each failing with `UsageError`. */
import { UsageError } from '../api/usage-error.js';
import type { WorkloadOptions } from './types.js';

export { UsageError };

/** Throws `UsageError` unless `rank` is one of `ranks` ranks (for `Workload.checkedRegion`). */
export function checkRank(rank: number, ranks: number): void {
  if (!Number.isInteger(rank) || rank < 0 || rank >= ranks) throw new UsageError(`rank ${rank} is out of range for ${ranks} ranks`);
}

/** Throws `UsageError` unless `x` is a positive integer; `what` names it in the message. */
export function positiveInteger(what: string, x: number): void {
  if (!Number.isInteger(x) || x < 1) throw new UsageError(`${what} must be a positive integer, got ${x}`);
}

/** The checks every matrix workload starts with: ranks, M, N and K positive integers, f32 or f16, chunksPerRank. */
export function checkMatrixOptions(workload: string, o: WorkloadOptions): void {
  positiveInteger('ranks', o.ranks);
  for (const axis of ['m', 'n', 'k'] as const) positiveInteger(`${workload}: ${axis.toUpperCase()}`, o.shape[axis]);
  if (o.dtype !== 'f32' && o.dtype !== 'f16') throw new UsageError(`dtype must be f32 or f16, got ${String(o.dtype)}`);
  if (o.chunksPerRank !== undefined) positiveInteger('chunksPerRank', o.chunksPerRank);
}
