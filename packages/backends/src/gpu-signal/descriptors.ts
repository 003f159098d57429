/**
 * The chunk table as data the kernel reads (a read-only storage buffer), so that one generic publish
 * routine serves every chunk: code size stays linear in the number of tensors, not chunks.
 *
 * Per chunk, DESCRIPTOR_WORDS words: tensor, kind (0 copy, 1 reduce-add), lock (or NO_LOCK), src, dst,
 * need, first dependent (an offset from the first descriptor), dependent count, elements, then lo and extent for MAX_DIMS axes (the
 * region's axes, right-aligned: leading unused axes have lo 0, extent 1).
 */
import type { ChunkTable } from './chunk-table.js';

export const MAX_DIMS = 4;
export const DESCRIPTOR_WORDS = 9 + 2 * MAX_DIMS;
export const NO_LOCK = 0xffffffff;

export const FIELD = { tensor: 0, kind: 1, lock: 2, src: 3, dst: 4, need: 5, depStart: 6, depCount: 7, elements: 8, lo: 9, extent: 9 + MAX_DIMS } as const;

export interface ChunkDescriptors {
  /** Descriptors, then the dependents lists, then the chunks ready at launch. */
  readonly words: readonly number[];
  readonly dependentsAt: number;
  readonly readyAt: number;
}

export function chunkDescriptors(table: ChunkTable, tensorIndex: (name: string) => number): ChunkDescriptors {
  const descriptors: number[] = [];
  const dependents: number[] = [];
  const dependentsAt = table.entries.length * DESCRIPTOR_WORDS;
  for (const e of table.entries) {
    const { chunk } = e;
    const extents = chunk.region.hi.map((h, i) => h - chunk.region.lo[i]!);
    const pad = MAX_DIMS - extents.length;
    if (pad < 0) throw new RangeError(`chunk %${chunk.value.name}: regions of more than ${MAX_DIMS} axes are not supported`);
    descriptors.push(
      tensorIndex(chunk.tensor),
      chunk.kind === 'copy' ? 0 : 1,
      e.lock < 0 ? NO_LOCK : e.lock,
      chunk.src,
      chunk.dst,
      e.need,
      dependentsAt + dependents.length,
      e.dependents.length,
      extents.reduce((a, b) => a * b, 1),
      ...Array<number>(pad).fill(0),
      ...chunk.region.lo,
      ...Array<number>(pad).fill(1),
      ...extents,
    );
    dependents.push(...e.dependents);
  }
  const readyAt = dependentsAt + dependents.length;
  return { words: [...descriptors, ...dependents, ...table.ready], dependentsAt, readyAt };
}
