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
  const dependentsAt = table.parts.length * DESCRIPTOR_WORDS;
  const words = new Array<number>(descriptorWords(table));
  writeChunkDescriptors(words, 0, table, need, tensorIndex);
  return { words, dependentsAt };
}

/** Words of the descriptors and the lists after them. */
export function descriptorWords(table: ChunkTable): number {
  return table.parts.reduce((n, p) => n + DESCRIPTOR_WORDS + p.dependents.length + p.members.length, 0);
}

/**
 * The descriptors written into `words` from `at` on (offsets within them count from `at`): at 64
 * ranks a hundred thousand words, written by the tables buffer straight into its typed array
 * (`descriptorWords` long from `at`). Returns the index after the last word.
 */
export function writeChunkDescriptors(words: { [i: number]: number }, at: number, table: ChunkTable, need: readonly number[], tensorIndex: (name: string) => number): number {
  const leadNeed = (members: readonly number[]) => (members.some((m) => need[m] === NEVER) ? NEVER : members.reduce((n, m) => n + need[m]!, 0));
  const dependentsAt = table.parts.length * DESCRIPTOR_WORDS;
  // Written in place (thousands of parts at 64 ranks): no array per part.
  const tensors = new Map<string, number>();
  let list = dependentsAt;
  for (const part of table.parts) {
    const { chunk } = table.entries[part.chunk]!;
    const axes = part.region.lo.length;
    const pad = MAX_DIMS - axes;
    if (pad < 0) throw new RangeError(`chunk %${chunk.value.name}: regions of more than ${MAX_DIMS} axes are not supported`);
    let tensor = tensors.get(chunk.tensor);
    if (tensor === undefined) tensors.set(chunk.tensor, (tensor = tensorIndex(chunk.tensor)));
    const d = at + part.index * DESCRIPTOR_WORDS;
    let elements = 1;
    for (let i = 0; i < MAX_DIMS; i++) {
      const axis = i - pad;
      const extent = axis < 0 ? 1 : part.region.hi[axis]! - part.region.lo[axis]!;
      words[d + FIELD.lo + i] = axis < 0 ? 0 : part.region.lo[axis]!;
      words[d + FIELD.extent + i] = extent;
      elements *= extent;
    }
    words[d + FIELD.chunk] = part.chunk;
    words[d + FIELD.tensor] = tensor;
    words[d + FIELD.kind] = chunk.kind === 'copy' ? 0 : 1;
    words[d + FIELD.lock] = part.lock < 0 ? NO_LOCK : part.lock;
    words[d + FIELD.src] = part.src ?? chunk.src;
    words[d + FIELD.dst] = chunk.dst;
    words[d + FIELD.need] = part.members.length > 0 ? leadNeed(part.members) : need[part.index]!;
    words[d + FIELD.depStart] = list;
    words[d + FIELD.depCount] = part.dependents.length;
    words[d + FIELD.elements] = elements;
    words[d + FIELD.lead] = part.lead;
    words[d + FIELD.memberStart] = list + part.dependents.length;
    words[d + FIELD.memberCount] = part.members.length;
    for (const x of part.dependents) words[at + list++] = x;
    for (const x of part.members) words[at + list++] = x;
  }
  return at + list;
}
