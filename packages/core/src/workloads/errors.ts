/** The error for input a caller got wrong: an unknown workload, a bad option, a shape that cannot be split. */
import { SyncopateError } from '@syncopate/ir';

/**
 * Bad input from whoever called (a library user or the CLI's command line), as opposed to a kernel
 * that does not compile. The CLI prints its message on one line and exits with code 2.
 */
export class UsageError extends SyncopateError {}

/** Throws `UsageError` unless `rank` is one of `ranks` ranks (for `Workload.checkedRegion`). */
export function checkRank(rank: number, ranks: number): void {
  if (!Number.isInteger(rank) || rank < 0 || rank >= ranks) throw new UsageError(`rank ${rank} is out of range for ${ranks} ranks`);
}
