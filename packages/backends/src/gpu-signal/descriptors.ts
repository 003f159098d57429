/**
 * The chunk parts as data the kernel reads (a read-only storage buffer), so that one generic publish
 * routine serves every part: code size stays linear in the number of tensors, not chunks.
 *
 * Per part, DESCRIPTOR_WORDS words: chunk, tensor, kind (0 copy, 1 reduce-add), lock (or NO_LOCK), src,
 * dst, need, first dependent (an offset from the first descriptor), dependent count, elements, lead
 * (the part whose counter its requirements count on), first member and member count (a merged
 * reduce-add's lead: the parts it sums and publishes; 0 members otherwise), then lo and extent for
 * MAX_DIMS axes (the part's axes, right-aligned: leading unused axes have lo 0, extent 1). The
 * dependents and members lists follow the descriptors.
 */
import type { ChunkTable } from './chunk-table.js';
import { NEVER } from '../placement/device-view.js';

export const MAX_DIMS = 4;
export const DESCRIPTOR_WORDS = 13 + 2 * MAX_DIMS;
export const NO_LOCK = 0xffffffff;

export const FIELD = {
  chunk: 0,
  tensor: 1,
  kind: 2,
  lock: 3,
  src: 4,
  dst: 5,
  need: 6,
  depStart: 7,
  depCount: 8,
  elements: 9,
  lead: 10,
  memberStart: 11,
  memberCount: 12,
  lo: 13,
  extent: 13 + MAX_DIMS,
} as const;

export interface ChunkDescriptors {
  readonly words: readonly number[];
  readonly dependentsAt: number;
}

/**
 * `need[p]`: part p's requirements on the device the descriptors are for (see placement/device-view.ts).
 * A merged lead needs what all its members need: they all count on its counter.
 */
export function chunkDescriptors(table: ChunkTable, need: readonly number[], tensorIndex: (name: string) => number): ChunkDescriptors {
  const descriptors: number[] = [];
  const lists: number[] = [];
  const leadNeed = (members: readonly number[]) => (members.some((m) => need[m] === NEVER) ? NEVER : members.reduce((n, m) => n + need[m]!, 0));
  const dependentsAt = table.parts.length * DESCRIPTOR_WORDS;
  for (const part of table.parts) {
    const { chunk } = table.entries[part.chunk]!;
    const extents = part.region.hi.map((h, i) => h - part.region.lo[i]!);
    const pad = MAX_DIMS - extents.length;
    if (pad < 0) throw new RangeError(`chunk %${chunk.value.name}: regions of more than ${MAX_DIMS} axes are not supported`);
    descriptors.push(
      part.chunk,
      tensorIndex(chunk.tensor),
      chunk.kind === 'copy' ? 0 : 1,
      part.lock < 0 ? NO_LOCK : part.lock,
      chunk.src,
      chunk.dst,
      part.members.length > 0 ? leadNeed(part.members) : need[part.index]!,
      dependentsAt + lists.length,
      part.dependents.length,
      extents.reduce((a, b) => a * b, 1),
      part.lead,
      dependentsAt + lists.length + part.dependents.length,
      part.members.length,
      ...Array<number>(pad).fill(0),
      ...part.region.lo,
      ...Array<number>(pad).fill(1),
      ...extents,
    );
    lists.push(...part.dependents, ...part.members);
  }
  return { words: [...descriptors, ...lists], dependentsAt };
}
