/** The error for input a caller got wrong: an unknown workload, a bad option, a shape that cannot be split. */
import { SyncopateError } from '@syncopate/ir';
import type { WorkloadOptions } from './types.js';

/**
 * Bad input from whoever called (a library user or the CLI's command line), as opposed to a kernel
 * that does not compile. The CLI prints its message on one line and exits with code 2.
 */
export class UsageError extends SyncopateError {}

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
