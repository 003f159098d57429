/** The run API's typed errors: what the caller handed in does not fit what the kernel declares. */
import { UsageError } from './usage-error.js';
import { closestName } from './closest-name.js';

/**
 * A tensor's data or binding does not fit its declaration: `tensor` and, where it is one rank's
 * array, `rank` say where; `expected` and `found` say what.
 */
export class TensorInputError extends UsageError {
  constructor(
    readonly tensor: string,
    readonly rank: number | undefined,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`tensor ${tensor}${rank === undefined ? '' : `, rank ${rank}`}: expected ${expected}, found ${found}`);
  }
}

/** `name` is none of the kernel's tensors, `known`: the error says which are, and the nearest. */
export function unknownTensorError(name: string, known: readonly string[]): TensorInputError {
  const near = closestName(name, known);
  return new TensorInputError(name, undefined, `one of the kernel's tensors (${known.join(', ')})${near ? `: did you mean ${near}?` : ''}`, 'a name it does not declare');
}
