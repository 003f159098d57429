/**
 * The gpu-signal backend's bookkeeping. Each chunk is cut into parts (slices of its region along the
 * first axis, about PART_ELEMENTS elements each) so that many workgroups move it at once. A part is
 * published (copied or added into the destination rank's region) by whichever workgroup completes
 * its last requirement:
 *  - each tile of the source rank whose stores meet the part's rows (its `arrive`),
 *  - for a reduce-add, each tile of the destination rank whose stores meet them (it adds onto them),
 *  - each part of an earlier chunk into the source rank whose rows it forwards.
 * A part with no requirement is ready at launch and published by one of the first workgroups. A
 * chunk's flag counts its published parts; a wait spins until all are.
 *
 * Reduce-adds onto the same elements of one rank (a one-shot reduce-scatter's R − 1 adds into each
 * shard) are merged: their parts count their requirements on one counter, that of the group's lead
 * part, and the workgroup that counts the last one (the last tile to finish, as split-K fix-ups do)
 * adds every source into the destination in one pass and publishes them all. No lock, no second
 * read-modify-write of the destination. Only reduce-adds whose regions overlap without being equal
 * (cut differently) still take a lock per part.
 */
import { evalAffine, intersect, type AffineExpr, type Box, type ChunkDecl, type Module } from '@syncopate/ir';
import { alignChunks, arrivalTiles, type AccessSite } from '@syncopate/passes';

/** About this many elements per part (128 KiB of f32): enough work to be worth a workgroup. */
export const PART_ELEMENTS = 32768;

/** Rows of a tensor that one tile stores (or reads), as the arrive (or wait) computes them on the GPU. */
export interface StoreRows {
  /** Offset of the store along axis 0: affine in program ids only. */
  readonly offset: AffineExpr;
  readonly extent: number;
}

export interface ChunkEntry {
  readonly index: number;
  readonly chunk: ChunkDecl;
  readonly firstPart: number;
  readonly parts: number;
  readonly partRows: number;
  /** Set when tiles arrive at the chunk: how each tile's stored rows map to parts. */
  readonly storeRows?: StoreRows;
}

export interface ChunkPart {
  readonly index: number;
  readonly chunk: number;
  readonly region: Box;
  /** Requirements before the part can be published when every rank shares one device: arrivals × sides + feeders. */
  readonly need: number;
  /** Tiles of one side (the source rank's, and as many of a reduce-add's destination) whose stores meet the part. */
  readonly arrivals: number;
  /** Parts of earlier chunks whose data this part forwards. */
  readonly feeders: number;
  /** Parts whose requirements this part's publication counts towards. */
  readonly dependents: readonly number[];
  /** Reduce-adds onto overlapping (but not equal) elements of one rank share a lock; −1 otherwise. */
  readonly lock: number;
  /** The part whose counter this part's requirements count on: itself unless it is a merged add. */
  readonly lead: number;
  /** For the lead of merged reduce-adds: every part of the group, itself among them, summed in one pass. */
  readonly members: readonly number[];
}

export interface ChunkTable {
  readonly entries: readonly ChunkEntry[];
  readonly parts: readonly ChunkPart[];
  /** Parts ready at launch. */
  readonly ready: readonly number[];
  readonly locks: number;
  /** The most parts a workgroup can have queued at once (its pending list's size). */
  readonly maxPending: number;
}

/** `d` feeds `c`: `c` forwards elements that `d` delivered to `c`'s source at an earlier step. */
export function forwards(c: ChunkDecl, d: ChunkDecl): boolean {
  return d.dst === c.src && d.tensor === c.tensor && d.step < c.step && intersect(c.region, d.region) !== undefined;
}

const rowsOf = (b: Box): [number, number] => [b.lo[0]!, b.hi[0]!];
const boxKey = (b: Box): string => `${b.lo.join()}/${b.hi.join()}`;
const overlap = (a: [number, number], b: [number, number]) => Math.max(a[0], b[0]) < Math.min(a[1], b[1]);

/** The rows of the single access site among `sites`, if its axis-0 offset depends on program ids only. */
export function siteRows(module: Module, sites: readonly AccessSite[]): StoreRows | undefined {
  const distinct = [...new Set(sites)];
  if (distinct.length !== 1) return undefined;
  const site = distinct[0]!;
  const pids = new Set(module.kernel.body.flatMap((op) => (op.op === 'program_id' ? [op.result.id] : [])));
  const offset = site.offsets[0]!;
  return offset.terms.every((t) => pids.has(t.value.id)) ? { offset, extent: site.extent[0]! } : undefined;
}

function partCount(chunk: ChunkDecl, partElements: number): number {
  const rows = chunk.region.hi[0]! - chunk.region.lo[0]!;
  const elements = chunk.region.hi.reduce((n, h, i) => n * (h - chunk.region.lo[i]!), 1);
  return Math.max(1, Math.min(rows, Math.ceil(elements / partElements)));
}

/**
 * Union-find over reduce-adds that land on overlapping elements of the same rank; −1 for copies and for
 * a reduce-add that shares its elements with no other (one publisher per part needs no lock: the
 * destination's own stores are counted before it runs).
 */
function reduceGroups(chunks: readonly ChunkDecl[]): number[] {
  const parent = chunks.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  chunks.forEach((a, i) => {
    chunks.forEach((b, j) => {
      if (j <= i || a.kind !== 'reduce-add' || b.kind !== 'reduce-add') return;
      if (a.dst === b.dst && a.tensor === b.tensor && intersect(a.region, b.region)) parent[find(j)] = find(i);
    });
  });
  const members = new Map<number, number>();
  chunks.forEach((c, i) => c.kind === 'reduce-add' && members.set(find(i), (members.get(find(i)) ?? 0) + 1));
  return chunks.map((c, i) => (c.kind === 'reduce-add' && members.get(find(i))! > 1 ? find(i) : -1));
}

export function chunkTable(module: Module, partElements = PART_ELEMENTS): ChunkTable {
  const alignment = alignChunks(module);
  const chunks = module.chunks;
  const group = reduceGroups(chunks);
  const pidAxis = new Map(module.kernel.body.flatMap((op) => (op.op === 'program_id' ? [[op.result.id, op.axis] as const] : [])));

  // Parts per chunk. Reduce-adds of a group must cut identical regions the same way, so that part p of
  // each covers the same elements (one lock, or one merged sum, per part index); otherwise they stay whole.
  const storeRows = chunks.map((c) => siteRows(module, alignment.stores.filter((u) => u.chunk === c).map((u) => u.site)));
  const hasStores = chunks.map((c) => alignment.stores.some((u) => u.chunk === c));
  const parts = chunks.map((c, i) => (hasStores[i] && !storeRows[i] ? 1 : partCount(c, partElements)));
  const membersOf = (g: number) => chunks.map((_, j) => j).filter((j) => group[j] === g);
  const merged = chunks.map(() => false);
  chunks.forEach((c, i) => {
    if (group[i]! < 0) return;
    const members = membersOf(group[i]!);
    const sameRows = members.every((j) => rowsOf(chunks[j]!.region).join() === rowsOf(c.region).join() && parts[j] === parts[i]);
    if (!sameRows) members.forEach((j) => (parts[j] = 1));
    merged[i] = members.every((j) => boxKey(chunks[j]!.region) === boxKey(c.region));
  });

  const entries: ChunkEntry[] = [];
  const partList: { index: number; chunk: number; region: Box; need: number; arrivals: number; feeders: number; dependents: number[]; lock: number; lead: number; members: number[] }[] = [];
  const lockBase = new Map<number, number>();
  let locks = 0;
  chunks.forEach((chunk, index) => {
    const [lo, hi] = rowsOf(chunk.region);
    const partRows = Math.ceil((hi - lo) / parts[index]!);
    const count = Math.ceil((hi - lo) / partRows);
    const g = group[index]!;
    if (g >= 0 && !merged[index] && !lockBase.has(g)) {
      lockBase.set(g, locks);
      locks += count;
    }
    entries.push({ index, chunk, firstPart: partList.length, parts: count, partRows, ...(storeRows[index] ? { storeRows: storeRows[index] } : {}) });
    for (let p = 0; p < count; p++) {
      const region = { lo: [lo + p * partRows, ...chunk.region.lo.slice(1)], hi: [Math.min(lo + (p + 1) * partRows, hi), ...chunk.region.hi.slice(1)] };
      const locked = g >= 0 && !merged[index];
      partList.push({ index: partList.length, chunk: index, region, need: 0, arrivals: 0, feeders: 0, dependents: [], lock: locked ? lockBase.get(g)! + p : -1, lead: partList.length, members: [] });
    }
  });
  // Merged reduce-adds: part p of every member counts on part p of the group's first chunk.
  entries.forEach((e) => {
    if (!merged[e.index] || group[e.index] !== e.index) return;
    const others = membersOf(e.index).map((j) => entries[j]!);
    for (let p = 0; p < e.parts; p++) {
      const lead = partList[e.firstPart + p]!;
      lead.members = others.map((m) => m.firstPart + p);
      for (const m of lead.members) partList[m]!.lead = lead.index;
    }
  });

  // Tile arrivals: the same arithmetic as the arrive code (emitArrive) on the GPU.
  const maxPerTile = new Map<string, number>();
  entries.forEach((e) => {
    const box = arrivalTiles(alignment, e.chunk);
    if (!box) return;
    const sides = e.chunk.kind === 'reduce-add' ? 2 : 1;
    forEachTile(box, (tile) => {
      const counted = partsStoredBy(e, tile, pidAxis);
      for (const p of counted) {
        partList[e.firstPart + p]!.need += sides;
        partList[e.firstPart + p]!.arrivals++;
      }
      const key = tile.join();
      maxPerTile.set(key, (maxPerTile.get(key) ?? 0) + counted.length);
    });
  });
  // Forwarding: a part of c waits for every part of a feeder chunk whose rows it overlaps.
  for (const c of entries) {
    for (const d of entries) {
      if (!forwards(c.chunk, d.chunk)) continue;
      for (let q = 0; q < d.parts; q++) {
        const from = partList[d.firstPart + q]!;
        for (let p = 0; p < c.parts; p++) {
          const to = partList[c.firstPart + p]!;
          if (overlap(rowsOf(from.region), rowsOf(to.region))) {
            to.need++;
            to.feeders++;
            from.dependents.push(to.index);
          }
        }
      }
    }
  }
  // A merged lead's publication counts the dependents of all its members.
  const fanOut = Math.max(1, ...partList.map((p) => (p.members.length > 0 ? p.members : [p.index]).reduce((n, m) => n + partList[m]!.dependents.length, 0)));
  const chain = Math.max(1, ...chunks.map((c) => c.step + 1));
  return {
    entries,
    parts: partList,
    ready: partList.filter((p) => p.need === 0).map((p) => p.index),
    locks,
    // A workgroup queues what its arrives complete, then, publishing depth-first, at most
    // fan-out − 1 more per link of a forwarding chain.
    maxPending: Math.max(1, ...maxPerTile.values()) + (fanOut - 1) * chain + 1,
  };
}

/** Part indices of `e` that `tile`'s stores meet (rows of the store ∩ rows of the chunk). */
export function partsStoredBy(e: ChunkEntry, tile: readonly number[], pidAxis: ReadonlyMap<number, number>): number[] {
  if (!e.storeRows) return [0]; // several store sites: the chunk is one part, every arriving tile counts
  const env = new Map([...pidAxis].map(([id, axis]) => [id, tile[axis] ?? 0]));
  const start = evalAffine(e.storeRows.offset, env);
  const [lo, hi] = rowsOf(e.chunk.region);
  const r0 = Math.max(start, lo);
  const r1 = Math.min(start + e.storeRows.extent, hi);
  if (r0 >= r1) return [];
  const first = Math.floor((r0 - lo) / e.partRows);
  const last = Math.floor((r1 - 1 - lo) / e.partRows);
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

function forEachTile(box: Box, visit: (tile: number[]) => void): void {
  const walk = (axis: number, tile: number[]) => {
    if (axis === box.lo.length) return visit(tile);
    for (let x = box.lo[axis]!; x < box.hi[axis]!; x++) walk(axis + 1, [...tile, x]);
  };
  walk(0, []);
}
