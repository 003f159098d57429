/**
 * The gpu-signal backend's bookkeeping. Each chunk is cut into parts so that many workgroups move it
 * at once: a chunk that tiles store through one site is cut at the storing tiles' rows and columns
 * (`tiles`, the default: a part is one tile's output, published by the last of the tiles that write
 * it), unless its tensor has a region rewritten after a chunk read it (`rereadTensors`); any other
 * chunk into slices along the first axis of about PART_BYTES (`rows`, which a codegen
 * option can also ask for). A part is
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
import { BoxIndex, dtypeBytes, evalAffine, intersect, type AffineExpr, type Box, type ChunkDecl, type Module, type Op } from '@syncopate/ir';
import { arrivalTiles, landingIn, landingMeeting, type AccessSite } from '@syncopate/passes';
import { alignedModule } from './alignment.js';

/**
 * About this many bytes a part cut in rows, whatever its dtype: enough work to be worth a workgroup.
 * On one H100, ag-gemm's ring gather ran fastest at 64 KiB parts in f16 and in f32 (f32's 128 KiB parts,
 * when parts were 32,768 elements, cost its fused kernel 2%: benchmarks/README.md, 2026-11-27).
 */
export const PART_BYTES = 65536;

/** Elements of a part of `tensor` cut in rows (PART_BYTES of them). */
function partElementsOf(module: Module, tensor: string): number {
  return PART_BYTES / dtypeBytes(module.tensors.find((t) => t.name === tensor)?.dtype ?? 'f32');
}

/** How chunks stored by tiles are cut into parts (see the header). */
export type PartShape = 'tiles' | 'rows';

/** Where along one axis a tile stores (or reads) a tensor, as the arrive (or wait) computes it on the GPU. */
export interface StoreRows {
  /** Offset of the access along the axis: affine in program ids only. */
  readonly offset: AffineExpr;
  readonly extent: number;
}

export interface ChunkEntry {
  readonly index: number;
  readonly chunk: ChunkDecl;
  readonly firstPart: number;
  /** Parts in all: row parts × column parts, numbered row by row. */
  readonly parts: number;
  readonly partRows: number;
  /**
   * The row the cut counts from (at or before the chunk's first): row parts start at rowOrigin +
   * k·partRows, the first clipped to the chunk. Cut at the tiles it is on their grid, so each part is
   * one tile's rows and waits for that tile alone; otherwise the chunk's first row.
   */
  readonly rowOrigin: number;
  /** Columns (axis 1) per part and parts across: the chunk's whole width and 1 unless cut at tiles. */
  readonly partCols: number;
  readonly colParts: number;
  /** Set when tiles arrive at the chunk: how each tile's stored rows map to parts. */
  readonly storeRows?: StoreRows;
  /** Set with column parts: the tile's stored columns. */
  readonly storeCols?: StoreRows;
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A copy of a (frozen) IR array: an index loop, since `slice` and spreads of frozen arrays take V8's slow path. */
function copyOf(xs: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < xs.length; i++) out.push(xs[i]!);
  return out;
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
  /** The rank it copies from, where not its chunk's source: a line edge's owner (line-edges.ts). */
  readonly src?: number;
}

export interface ChunkTable {
  readonly entries: readonly ChunkEntry[];
  readonly parts: readonly ChunkPart[];
  /** Parts ready at launch. */
  readonly ready: readonly number[];
  /**
   * Line edges (line-edges.ts): parts after the chunks' own, each a few rows of a chunk part copied
   * from the rows' owner, moved in a dispatch of their own before the one that runs the tiles.
   */
  readonly edges?: readonly number[];
  readonly locks: number;
  /** The most parts a workgroup can have queued at once (its pending list's size). */
  readonly maxPending: number;
}

/** `d` feeds `c`: `c` forwards elements that `d` delivered to `c`'s source at an earlier step. */
export function forwards(c: ChunkDecl, d: ChunkDecl): boolean {
  return d.dst === c.src && d.tensor === c.tensor && d.step < c.step && intersect(c.region, d.region) !== undefined;
}

const rowsOf = (b: Box): [number, number] => [b.lo[0]!, b.hi[0]!];
const colsOf = (b: Box): [number, number] => [b.lo[1] ?? 0, b.hi[1] ?? 1];
const boxKey = (b: Box): string => `${b.lo.join()}/${b.hi.join()}`;

/** A kernel body's program-id and rank-id values, by body: bodies are immutable, and siteRows runs once per chunk. */
const bodyValues = new WeakMap<readonly Op[], { readonly pids: ReadonlySet<number>; readonly ranks: ReadonlySet<number> }>();

function valuesOf(module: Module): { readonly pids: ReadonlySet<number>; readonly ranks: ReadonlySet<number> } {
  const known = bodyValues.get(module.kernel.body);
  if (known) return known;
  const pids = new Set<number>();
  const ranks = new Set<number>();
  const walk = (ops: readonly Op[]) =>
    ops.forEach((op) => {
      if (op.op === 'program_id') pids.add(op.result.id);
      if (op.op === 'rank_id') ranks.add(op.result.id);
      if (op.op === 'for') walk(op.body);
    });
  walk(module.kernel.body);
  const values = { pids, ranks };
  bodyValues.set(module.kernel.body, values);
  return values;
}

/**
 * Along `axis`, the single access site among `sites`, if its offset there depends on program ids only
 * once specialised to `rank` (every `rank_id` term folded in, as siteForRank does), where every tile
 * that evaluates it runs for that rank: a copy's stores on its source, a wait's loads on the
 * destination. Unspecialised, an offset such as a2a-gemm's `2176*%rank + 128*%pm` left its chunks
 * one part each, moved by one workgroup.
 */
export function siteRows(module: Module, sites: readonly AccessSite[], axis = 0, rank?: number): StoreRows | undefined {
  const first = sites[0];
  if (first === undefined || sites.some((s) => s !== first)) return undefined;
  const { pids, ranks } = valuesOf(module);
  const offset = first.offsets[axis];
  if (offset === undefined) return undefined;
  const folded =
    rank === undefined || !offset.terms.some((t) => ranks.has(t.value.id))
      ? offset
      : { constant: offset.constant + offset.terms.filter((t) => ranks.has(t.value.id)).reduce((n, t) => n + t.coeff * rank, 0), terms: offset.terms.filter((t) => !ranks.has(t.value.id)) };
  return folded.terms.every((t) => pids.has(t.value.id)) ? { offset: folded, extent: first.extent[axis]! } : undefined;
}

/** Rows and columns per part of `chunk`: the storing tile's where cut at tiles, else row slices of about `partElements`. */
function partCut(chunk: ChunkDecl, partElements: number, tile?: { rows: StoreRows; cols: number }): { partRows: number; partCols: number; rowOrigin: number } {
  const [lo, hi] = rowsOf(chunk.region);
  const [c0, c1] = colsOf(chunk.region);
  if (tile) {
    const { offset, extent } = tile.rows;
    // Tiles' rows start on a grid (every program id steps a multiple of the extent): cut on it.
    const onGrid = offset.terms.every((t) => t.coeff % extent === 0);
    const rowOrigin = onGrid ? lo - ((((lo - offset.constant) % extent) + extent) % extent) : lo;
    return { partRows: onGrid ? extent : Math.min(extent, hi - lo), partCols: Math.min(tile.cols, c1 - c0), rowOrigin };
  }
  const elements = chunk.region.hi.reduce((n, h, i) => n * (h - chunk.region.lo[i]!), 1);
  const count = Math.max(1, Math.min(hi - lo, Math.ceil(elements / partElements)));
  return { partRows: Math.ceil((hi - lo) / count), partCols: c1 - c0, rowOrigin: lo };
}

/**
 * Tensors where a region of a rank is read by a chunk (its source, or a reduce-add's target), then
 * rewritten by a later chunk, then read again by a chunk after that: a ring all-reduce's all-gather
 * forwarding what it wrote over what its reduce-scatter read. WGSL has no device-scope fence, and on
 * the H100 a workgroup forwarding such a region read stale data when parts were a tile each (fused
 * ring gemv-ar wrong in 3 of 6 runs, benchmarks/README.md); the bigger row parts never were, so these
 * tensors keep them. A one-shot all-reduce rewrites regions but never reads them again.
 */
function rereadTensors(chunks: readonly ChunkDecl[]): Set<string> {
  // The chunks that read each (tensor, rank), indexed: looked up per chunk, not a pass over all chunks
  // each. Tensor → rank → those chunks in plan order (no string or pair per chunk).
  const lists = new Map<string, Map<number, ChunkDecl[]>>();
  const add = (a: ChunkDecl, rank: number) => {
    let byRank = lists.get(a.tensor);
    if (!byRank) lists.set(a.tensor, (byRank = new Map()));
    const list = byRank.get(rank);
    if (list) list.push(a);
    else byRank.set(rank, [a]);
  };
  for (const a of chunks) {
    add(a, a.src);
    if (a.kind === 'reduce-add' && a.dst !== a.src) add(a, a.dst);
  }
  const readers = new Map<readonly ChunkDecl[], ReturnType<typeof readersOf>>();
  const tensors = new Set<string>();
  for (const b of chunks) {
    if (tensors.has(b.tensor)) continue;
    const list = lists.get(b.tensor)?.get(b.dst);
    let reading = list && readers.get(list);
    if (list && !reading) readers.set(list, (reading = readersOf(list)));
    // Only a chunk read both before and after it can be reread: most are not, and need no search.
    if (!reading || reading.firstStep >= b.step || reading.lastStep <= b.step) continue;
    const read = reading.index().meeting(b.region);
    if (read.some((a) => a.step < b.step) && read.some((c) => c.step > b.step)) tensors.add(b.tensor);
  }
  return tensors;
}

/** The chunks that read one rank's copy of a tensor: their first and last steps, and (made when asked) an index by region. */
function readersOf(chunks: readonly ChunkDecl[]): { firstStep: number; lastStep: number; index: () => BoxIndex<ChunkDecl> } {
  let [firstStep, lastStep] = [Infinity, -Infinity];
  for (const c of chunks) [firstStep, lastStep] = [Math.min(firstStep, c.step), Math.max(lastStep, c.step)];
  let index: BoxIndex<ChunkDecl> | undefined;
  return { firstStep, lastStep, index: () => (index ??= new BoxIndex(chunks, (c) => c.region)) };
}

/** `items` by `key`, each list in the order of `items`. */
function groupBy<T>(items: readonly T[], key: (x: T) => string | number): Map<string | number, T[]> {
  const groups = new Map<string | number, T[]>();
  for (const x of items) {
    const k = key(x);
    const list = groups.get(k);
    if (list) list.push(x);
    else groups.set(k, [x]);
  }
  return groups;
}

/**
 * Union-find over reduce-adds that land on overlapping elements of the same rank; −1 for copies and for
 * a reduce-add that shares its elements with no other (one publisher per part needs no lock: the
 * destination's own stores are counted before it runs).
 */
function reduceGroups(chunks: readonly ChunkDecl[]): number[] {
  const parent = chunks.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  // Only reduce-adds into the same rank and tensor can share elements: compare within those.
  const adds = groupBy(chunks.flatMap((c, i) => (c.kind === 'reduce-add' ? [i] : [])), (i) => `${chunks[i]!.tensor}/${chunks[i]!.dst}`);
  for (const list of adds.values()) {
    list.forEach((i, k) => {
      for (const j of list.slice(k + 1)) if (intersect(chunks[i]!.region, chunks[j]!.region)) parent[find(j)] = find(i);
    });
  }
  const members = new Map<number, number>();
  chunks.forEach((c, i) => c.kind === 'reduce-add' && members.set(find(i), (members.get(find(i)) ?? 0) + 1));
  return chunks.map((c, i) => (c.kind === 'reduce-add' && members.get(find(i))! > 1 ? find(i) : -1));
}

/** `partElements`: elements a part cut in rows, for every chunk (default: PART_BYTES of the chunk's tensor). */
export function chunkTable(module: Module, partElements?: number, shape: PartShape = 'tiles'): ChunkTable {
  const { alignment } = alignedModule(module);
  const chunks = module.chunks;
  const group = reduceGroups(chunks);
  const pidAxis = new Map<number, number>();
  for (const op of module.kernel.body) if (op.op === 'program_id') pidAxis.set(op.result.id, op.axis);

  // How each chunk is cut. Reduce-adds of a group must cut identical regions the same way, so that part
  // p of each covers the same elements (one lock, or one merged sum, per part index); otherwise they stay whole.
  const storesOf = groupBy(alignment.stores, (u) => u.chunk.value.id);
  const storeSites = chunks.map((c) => (storesOf.get(c.value.id) ?? []).map((u) => u.site));
  // A copy's arriving tiles all run for its source rank; a reduce-add's for both ends, which must
  // meet the same parts, so its stores are not specialised.
  const storeRank = (c: ChunkDecl) => (c.kind === 'copy' ? c.src : undefined);
  const storeRows = storeSites.map((sites, i) => siteRows(module, sites, 0, storeRank(chunks[i]!)));
  const reread = rereadTensors(chunks);
  const byTile = (c: ChunkDecl) => shape === 'tiles' && !reread.has(c.tensor) && c.region.lo.length >= 2;
  const storeCols = storeSites.map((sites, i) => (byTile(chunks[i]!) && storeRows[i] ? siteRows(module, sites, 1, storeRank(chunks[i]!)) : undefined));
  const whole = (c: ChunkDecl) => partCut(c, Infinity);
  const cuts = chunks.map((c, i) => {
    if (storeSites[i]!.length > 0 && !storeRows[i]) return whole(c);
    const cols = storeCols[i];
    return partCut(c, partElements ?? partElementsOf(module, c.tensor), cols ? { rows: storeRows[i]!, cols: cols.extent } : undefined);
  });
  const grouped: number[] = [];
  for (let j = 0; j < chunks.length; j++) if (group[j]! >= 0) grouped.push(j);
  const groups = groupBy(grouped, (j) => group[j]!);
  const membersOf = (g: number) => groups.get(g) ?? [];
  const merged = chunks.map(() => false);
  // Once per group (both tests compare every member with the first: they are equalities).
  for (const members of groups.values()) {
    const cutKey = (j: number) => {
      const { partRows, rowOrigin, partCols } = cuts[j]!;
      return `${rowsOf(chunks[j]!.region).join()}/${colsOf(chunks[j]!.region).join()}/${partRows}/${rowOrigin}/${partCols}`;
    };
    const first = cutKey(members[0]!);
    if (!members.every((j) => cutKey(j) === first)) members.forEach((j) => (cuts[j] = whole(chunks[j]!)));
    const box = boxKey(chunks[members[0]!]!.region);
    const same = members.every((j) => boxKey(chunks[j]!.region) === box);
    members.forEach((j) => (merged[j] = same));
  }

  const entries: ChunkEntry[] = [];
  const partList: { index: number; chunk: number; region: Box; need: number; arrivals: number; feeders: number; dependents: number[]; lock: number; lead: number; members: number[] }[] = [];
  const lockBase = new Map<number, number>();
  let locks = 0;
  chunks.forEach((chunk, index) => {
    const [lo, hi] = rowsOf(chunk.region);
    const [c0, c1] = colsOf(chunk.region);
    const { partRows, partCols, rowOrigin } = cuts[index]!;
    const rowParts = Math.ceil((hi - rowOrigin) / partRows);
    const colParts = Math.ceil((c1 - c0) / partCols);
    const count = rowParts * colParts;
    const g = group[index]!;
    if (g >= 0 && !merged[index] && !lockBase.has(g)) {
      lockBase.set(g, locks);
      locks += count;
    }
    const cols = colParts > 1 ? storeCols[index] : undefined;
    const rows = storeRows[index];
    // Thousands of chunks at 64 ranks: no spread of a temporary object or array per entry or part.
    const entry: Writable<ChunkEntry> = { index, chunk, firstPart: partList.length, parts: count, partRows, rowOrigin, partCols, colParts };
    if (rows) entry.storeRows = rows;
    if (cols) entry.storeCols = cols;
    entries.push(entry);
    const locked = g >= 0 && !merged[index];
    for (let p = 0; p < count; p++) {
      const r = Math.floor(p / colParts);
      const q = p % colParts;
      const lower = copyOf(chunk.region.lo);
      const upper = copyOf(chunk.region.hi);
      lower[0] = Math.max(lo, rowOrigin + r * partRows);
      upper[0] = Math.min(rowOrigin + (r + 1) * partRows, hi);
      if (colParts > 1) {
        lower[1] = c0 + q * partCols;
        upper[1] = Math.min(c0 + (q + 1) * partCols, c1);
      }
      partList.push({ index: partList.length, chunk: index, region: { lo: lower, hi: upper }, need: 0, arrivals: 0, feeders: 0, dependents: [], lock: locked ? lockBase.get(g)! + p : -1, lead: partList.length, members: [] });
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
  // Forwarding: a part of c waits for every part of a feeder chunk whose region it overlaps.
  // `d` feeds `c` only if it lands on c's source and meets its region: look those up rather than pass
  // over every pair. (Which feeder comes first does not matter: each counts on its own parts.)
  const entryOf = new Map<ChunkDecl, ChunkEntry>();
  for (const e of entries) entryOf.set(e.chunk, e);
  for (const c of entries) {
    const landed = landingIn(chunks, c.chunk.tensor, c.chunk.src);
    for (const k of landingMeeting(chunks, c.chunk.tensor, c.chunk.src, c.chunk.region)) {
      const d = entryOf.get(landed[k]!)!;
      if (!forwards(c.chunk, d.chunk)) continue;
      for (let q = 0; q < d.parts; q++) {
        const from = partList[d.firstPart + q]!;
        for (let p = 0; p < c.parts; p++) {
          const to = partList[c.firstPart + p]!;
          if (intersect(from.region, to.region)) {
            to.need++;
            to.feeders++;
            from.dependents.push(to.index);
          }
        }
      }
    }
  }
  // A merged lead's publication counts the dependents of all its members.
  // Folded, not spread into Math.max: at 256 ranks there are more parts than a call takes arguments.
  const fanOut = partList.reduce((most, p) => Math.max(most, (p.members.length > 0 ? p.members : [p.index]).reduce((n, m) => n + partList[m]!.dependents.length, 0)), 1);
  const chain = chunks.reduce((most, c) => Math.max(most, c.step + 1), 1);
  return {
    entries,
    parts: partList,
    ready: partList.filter((p) => p.need === 0).map((p) => p.index),
    locks,
    // A workgroup queues what its arrives complete, then, publishing depth-first, at most
    // fan-out − 1 more per link of a forwarding chain.
    maxPending: [...maxPerTile.values()].reduce((most, n) => Math.max(most, n), 1) + (fanOut - 1) * chain + 1,
  };
}

/** Part indices of `e` that `tile`'s stores meet (its rows, and with column parts its columns, ∩ the chunk's). */
export function partsStoredBy(e: ChunkEntry, tile: readonly number[], pidAxis: ReadonlyMap<number, number>): number[] {
  if (!e.storeRows) return [0]; // several store sites: the chunk is one part, every arriving tile counts
  const env = new Map([...pidAxis].map(([id, axis]) => [id, tile[axis] ?? 0]));
  // Parts along an axis of [lo, hi) cut every `size` from `origin`.
  const span = (access: StoreRows | undefined, [lo, hi]: [number, number], size: number, origin: number): number[] => {
    const start = access ? evalAffine(access.offset, env) : lo;
    const [a, b] = [Math.max(start, lo), Math.min(start + (access ? access.extent : hi - lo), hi)];
    if (a >= b) return [];
    const first = Math.floor((a - origin) / size);
    return Array.from({ length: Math.floor((b - 1 - origin) / size) - first + 1 }, (_, i) => first + i);
  };
  const rows = span(e.storeRows, rowsOf(e.chunk.region), e.partRows, e.rowOrigin);
  const cols = e.colParts > 1 ? span(e.storeCols, colsOf(e.chunk.region), e.partCols, colsOf(e.chunk.region)[0]) : [0];
  return rows.flatMap((r) => cols.map((q) => r * e.colParts + q));
}

function forEachTile(box: Box, visit: (tile: number[]) => void): void {
  const walk = (axis: number, tile: number[]) => {
    if (axis === box.lo.length) return visit(tile);
    for (let x = box.lo[axis]!; x < box.hi[axis]!; x++) walk(axis + 1, [...tile, x]);
  };
  walk(0, []);
}
