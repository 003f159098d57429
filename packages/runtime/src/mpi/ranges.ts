/**
 * What a send or receive moves: the first `bytes` of a Uint8Array, or of a mapped GPUBuffer as the
 * addon takes it (the views of src/mapped-range.ts, as host copies take them).
 */
import { UsageError } from '../errors.js';
import type { AddonRange } from './addon.js';
import { ANCHOR_BYTES, labelOf, mappedAnchors, mappedBytes } from '../mapped-range.js';

/** What a refused range's message adds: the two rules of getMappedRange a transport range can break. */
const HINT = ' (mapped from 0 over the bytes, and no range taken from it yet?)';

/** MPI counts are C ints: one message holds at most 2^31 - 1 bytes. */
export const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

/**
 * The first `bytes` of `target` for the addon. A GPUBuffer must be mapped from offset 0 over at
 * least `bytes` (rounded up to 4), with no range handed out of it yet (getMappedRange refuses
 * overlapping ones): from 16 bytes on, [head, tail], its first and last anchors, which prove to the
 * addon that every byte between is mapped; below, one view. Throws a UsageError otherwise.
 */
export function transportRange(target: GPUBuffer | Uint8Array, bytes: number, call: string): AddonRange {
  if (!(Number.isSafeInteger(bytes) && bytes >= 0 && bytes <= MAX_MESSAGE_BYTES)) {
    throw new UsageError(`${call}: bytes must be a whole number from 0 to ${MAX_MESSAGE_BYTES} (2^31 - 1, an MPI count), got ${bytes}`);
  }
  if (target instanceof Uint8Array) {
    if (bytes > target.length) throw new UsageError(`${call}: ${bytes} bytes do not fit a Uint8Array of ${target.length}`);
    return target;
  }
  if (typeof target?.getMappedRange !== 'function') throw new UsageError(`${call}: expected a mapped GPUBuffer or a Uint8Array`);
  if (target.mapState !== 'mapped') throw new UsageError(`${call}: GPUBuffer ${labelOf(target)} is ${target.mapState}, not mapped`);
  if (bytes > target.size) throw new UsageError(`${call}: ${bytes} bytes do not fit GPUBuffer ${labelOf(target)} of ${target.size}`);
  // A message of no bytes needs no memory (and getMappedRange no range of it).
  if (bytes === 0) return new Uint8Array(0);
  const who = `${call}: ${labelOf(target)}`;
  if (bytes < 2 * ANCHOR_BYTES) return mappedBytes(target, who, bytes, HINT);
  return mappedAnchors(target, who, bytes, HINT);
}
