/** The error for input a caller got wrong: an unknown workload or tensor, a bad option, a shape that cannot be split. */
import { SyncopateError } from '@syncopate/ir';

/**
 * Bad input from whoever called (a library user or the CLI's command line), as opposed to a kernel
 * that does not compile. The CLI prints its message on one line and exits with code 2.
 */
export class UsageError extends SyncopateError {}
