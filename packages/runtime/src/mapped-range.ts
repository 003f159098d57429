/**
 * Views of a mapped GPUBuffer for the native addons (host copy, MPI transport): getMappedRange's
 * views, its refusals as UsageErrors, and the anchors that prove a range mapped without an
 * ArrayBuffer over all of it.
 */
import { UsageError } from './errors.js';

export const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;
export const labelOf = (b: GPUBuffer) => b.label || 'unlabelled';

/**
 * The smallest range getMappedRange gives (offsets are multiples of 8): the anchors an addon copies
 * between. An ArrayBuffer over a mapped range counts as V8 external memory until it is unmapped, and
 * with 64 MiB or more held at once (two transfers' pieces of 4 MiB, read-back and upload) V8 ran
 * major collections mid-run, up to 14 ms with the JS thread stopped (two H200s; on lavapipe 3 in 20
 * rounds of 64 MiB held, 10 of 96 MiB: benchmarks/peer-copy.md); an anchor counts 8 bytes.
 */
export const ANCHOR_BYTES = 8;

/**
 * `buffer.getMappedRange(offset, size)`; what it refuses (a range past what was mapped, or one
 * handed out already) as a UsageError starting with `who` (the call and the buffer), then `hint`.
 */
export function mappedRange(buffer: GPUBuffer, who: string, offset: number, size: number, hint = ''): Uint8Array {
  try {
    return new Uint8Array(buffer.getMappedRange(offset, size));
  } catch (e) {
    throw new UsageError(`${who} has no mapped range [${offset}, ${offset + size}) to hand out${hint}: ${(e as Error).message}`, { cause: e });
  }
}

/** The first `bytes` of a mapped buffer as one view (getMappedRange's sizes are multiples of 4). */
export function mappedBytes(buffer: GPUBuffer, who: string, bytes: number, hint = ''): Uint8Array {
  return mappedRange(buffer, who, 0, roundUp(bytes, 4), hint).subarray(0, bytes);
}

/**
 * [head, tail]: the first and the last anchor of a mapped buffer's first `bytes` (at least 16, so the
 * two do not overlap). getMappedRange refuses a range past what was mapped, so the pair proves to an
 * addon that every byte between them is mapped.
 */
export function mappedAnchors(buffer: GPUBuffer, who: string, bytes: number, hint = ''): [Uint8Array, Uint8Array] {
  const tailOffset = Math.floor((bytes - 1) / ANCHOR_BYTES) * ANCHOR_BYTES;
  return [mappedRange(buffer, who, 0, ANCHOR_BYTES, hint), mappedRange(buffer, who, tailOffset, roundUp(bytes - tailOffset, 4), hint)];
}
