/**
 * What a send or receive moves: the first `bytes` of a Uint8Array, or of a mapped GPUBuffer as the
 * addon takes it (src/host-copy.ts does the same for host copies).
 */
import { UsageError } from '../errors.js';
import type { AddonRange } from './addon.js';

/** MPI counts are C ints: one message holds at most 2^31 - 1 bytes. */
export const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

/**
 * The smallest range getMappedRange gives (offsets are multiples of 8). An ArrayBuffer over a mapped
 * range counts as V8 external memory until unmapped, and with 64 MiB or more held V8 ran major
 * collections mid-run (benchmarks/peer-copy.md); two anchors count 16 bytes.
 */
const ANCHOR_BYTES = 8;

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;
const labelOf = (b: GPUBuffer) => b.label || 'unlabelled';

function mappedRange(buffer: GPUBuffer, call: string, offset: number, size: number): Uint8Array {
  try {
    return new Uint8Array(buffer.getMappedRange(offset, size));
  } catch (e) {
    throw new UsageError(
      `${call}: ${labelOf(buffer)} has no mapped range [${offset}, ${offset + size}) to hand out (mapped from 0 over the bytes, and no range taken from it yet?): ${(e as Error).message}`,
      { cause: e },
    );
  }
}

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
  if (bytes < 2 * ANCHOR_BYTES) return mappedRange(target, call, 0, roundUp(bytes, 4)).subarray(0, bytes);
  const tailOffset = Math.floor((bytes - 1) / ANCHOR_BYTES) * ANCHOR_BYTES;
  return [mappedRange(target, call, 0, ANCHOR_BYTES), mappedRange(target, call, tailOffset, roundUp(bytes - tailOffset, 4))];
}
