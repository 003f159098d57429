/**
 * The gpu-signal backend's bookkeeping per chunk. A chunk is published (copied or added into its
 * destination rank's region, then flagged) by whichever workgroup completes its last requirement:
 *  - each tile of the source rank that stores into it (its `arrive`),
 *  - for a reduce-add, each tile of the destination rank that stores where it lands (it adds onto them),
 *  - each earlier chunk into the source rank whose data it forwards (published before it).
 * A chunk with no requirement is ready at launch and published by one of the first workgroups.
 */
import { intersect, type ChunkDecl, type Module } from '@syncopate/ir';
import { alignChunks } from '@syncopate/passes';

export interface ChunkEntry {
  readonly index: number;
  readonly chunk: ChunkDecl;
  /** Requirements before the chunk can be published. */
  readonly need: number;
  /** Chunks whose publication counts towards this one's requirements. */
  readonly dependents: readonly number[];
  /** Reduce-adds into overlapping elements of one rank share a lock; −1 for copies. */
  readonly lock: number;
}

export interface ChunkTable {
  readonly entries: readonly ChunkEntry[];
  /** Indices of chunks ready at launch. */
  readonly ready: readonly number[];
  readonly locks: number;
}

/** `d` feeds `c`: `c` forwards elements that `d` delivered to `c`'s source at an earlier step. */
export function forwards(c: ChunkDecl, d: ChunkDecl): boolean {
  return d.dst === c.src && d.tensor === c.tensor && d.step < c.step && intersect(c.region, d.region) !== undefined;
}

export function chunkTable(module: Module): ChunkTable {
  const { producers } = alignChunks(module);
  const chunks = module.chunks;
  const lockOf = lockGroups(chunks);
  const entries = chunks.map((chunk, index) => {
    const tiles = producers.get(chunk.value.id) ?? 0;
    const landing = chunk.kind === 'reduce-add' ? tiles : 0;
    const feeders = chunks.filter((d) => forwards(chunk, d)).length;
    const dependents = chunks.flatMap((c, i) => (forwards(c, chunk) ? [i] : []));
    return { index, chunk, need: tiles + landing + feeders, dependents, lock: lockOf[index]! };
  });
  return {
    entries,
    ready: entries.filter((e) => e.need === 0).map((e) => e.index),
    locks: Math.max(0, ...lockOf) + 1,
  };
}

/** Union-find over reduce-adds that land on overlapping elements of the same rank. */
function lockGroups(chunks: readonly ChunkDecl[]): number[] {
  const parent = chunks.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  chunks.forEach((a, i) => {
    chunks.forEach((b, j) => {
      if (j <= i || a.kind !== 'reduce-add' || b.kind !== 'reduce-add') return;
      if (a.dst === b.dst && a.tensor === b.tensor && intersect(a.region, b.region)) parent[find(j)] = find(i);
    });
  });
  const ids = new Map<number, number>();
  return chunks.map((c, i) => {
    if (c.kind !== 'reduce-add') return -1;
    const root = find(i);
    if (!ids.has(root)) ids.set(root, ids.size);
    return ids.get(root)!;
  });
}
