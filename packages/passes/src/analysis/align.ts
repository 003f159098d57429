/**
 * Chunk alignment: intersect every tile's accesses with every chunk. A load on rank r waits for the
 * chunks delivered into r that meet what it reads; a store on rank r contributes to the chunks sent
 * from r that meet what it writes. A tile that straddles chunk boundaries simply meets several chunks.
 * A load of a gathered input meets the chunks that write into the cache lines it reads, not only
 * those that write the elements it reads (cache-lines.ts: L1 is not coherent), and, on a neighbouring
 * rank whose copy shares a line with a chunk's bytes, that rank's loads of those lines wait too.
 */
import type { AffineRange, Box, ChunkDecl, Module } from '@syncopate/ir';
import { boundingBox, intersect, volume } from '@syncopate/ir';
import { accessSites, siteForRank, type AccessSite } from './access-sites.js';
import { touch, touchesByEnumeration, type Touch } from './touch.js';
import { lineHull, lineWaitTensors, neighbourLines } from './cache-lines.js';

/** One access site meeting one chunk. */
export interface ChunkUse {
  readonly site: AccessSite;
  readonly chunk: ChunkDecl;
  /** When an execution of the site meets the chunk (program ids and loop variables). */
  readonly guard: readonly AffineRange[];
  /** Tiles for which some execution meets it. */
  readonly tiles: Box;
  readonly exact: boolean;
  /**
   * The region the use meets, where it is wider than the chunk's (a load's cache lines: cache-lines.ts);
   * with `rank`, the region of that rank's copy whose lines hold the chunk's bytes.
   */
  readonly reach?: Box;
  /**
   * The rank whose load waits, where it is not the chunk's destination: a neighbour whose copy shares
   * a cache line with the chunk's bytes on their device (cache-lines.ts `neighbourLines`).
   */
  readonly rank?: number;
}

/** The rank on which a wait use waits: its `rank`, else the chunk's destination. */
export const waiterOf = (use: ChunkUse): number => use.rank ?? use.chunk.dst;

export interface Alignment {
  /** Loads × chunks: on rank `waiterOf(use)` (`chunk.dst` unless a neighbour's), the load must wait for the chunk. */
  readonly waits: readonly ChunkUse[];
  /**
   * Stores × chunks: on rank `chunk.src` the store contributes to the chunk (an arrive follows it);
   * on rank `chunk.dst` it writes where the chunk lands.
   */
  readonly stores: readonly ChunkUse[];
  /** Chunk value id → number of tiles (of its source rank) that arrive at it (see `arrivalTiles`). */
  readonly producers: ReadonlyMap<number, number>;
}

/**
 * Alignments by chunk list, each with what else it was computed from: the sites (kernel body and
 * tensors) and the grid. Passes that leave those alone (`reorder-tiles` changes only the tile order)
 * hand on modules that share them, so the passes after need not align again.
 */
const alignmentCache = new WeakMap<readonly ChunkDecl[], { readonly sites: readonly AccessSite[]; readonly grid: readonly number[]; readonly alignment: Alignment }[]>();

export function alignChunks(module: Module): Alignment {
  const sites = accessSites(module);
  const entries = alignmentCache.get(module.chunks) ?? [];
  alignmentCache.set(module.chunks, entries);
  const cached = entries.find((e) => e.sites === sites && e.grid === module.kernel.grid);
  if (cached) return cached.alignment;
  const waits: ChunkUse[] = [];
  const stores: ChunkUse[] = [];
  const lines = lineWaitTensors(module, new Set(sites.filter((s) => s.kind === 'store').map((s) => s.tensor.name)));
  for (const site of sites) {
    const spill = site.kind === 'load' ? lines.get(site.tensor.name) : undefined;
    // An all-gather sends each shard to every other rank: where the site does not depend on the
    // rank, the chunks of one region touch it alike, so each region is worked out once: by the
    // site's offsets as the rank runs it, then the region's numbers (a trie, no string per chunk).
    const touches = new Map<string, TouchMemo>();
    // Per rank, the site as that rank runs it and its memo (ranks number a few hundred).
    const mineOf: AccessSite[] = [];
    const memoOf: TouchMemo[] = [];
    for (const chunk of module.chunks) {
      if (chunk.tensor !== site.tensor.name) continue;
      // A load waits on the chunk's destination rank, a store completes it on its source rank. (A
      // reduce-add's landing stores, on its destination, are taken to be the same tiles: true for
      // kernels whose stores do not depend on the rank.)
      const rank = site.kind === 'load' ? chunk.dst : chunk.src;
      let mine = mineOf[rank];
      if (mine === undefined) {
        mine = mineOf[rank] = siteForRank(module, site, rank);
        const key = mine === site ? '' : mine.offsets.map((e) => e.constant).join();
        let memo = touches.get(key);
        if (!memo) touches.set(key, (memo = new Map()));
        memoOf[rank] = memo;
      }
      const reach = spill ? lineHull(chunk.region, spill) : undefined;
      const t = memoised(memoOf[rank]!, chunk.region, () => touch(module, mine, reach ?? chunk.region));
      if (!t) continue;
      (site.kind === 'load' ? waits : stores).push(reach ? { site, chunk, ...t, reach } : { site, chunk, ...t });
    }
    if (!spill) continue;
    // Ranks whose copies share a line with a chunk's bytes wait for it before reading that line.
    for (const chunk of module.chunks) {
      if (chunk.tensor !== site.tensor.name) continue;
      for (const { rank, region } of neighbourLines(site.tensor, module.ranks, chunk)) {
        const t = touch(module, siteForRank(module, site, rank), region);
        if (t) waits.push({ site, chunk, ...t, reach: region, rank });
      }
    }
  }
  const arrivals = arrivalBoxes(module.chunks, stores);
  const producers = new Map<number, number>();
  for (const chunk of module.chunks) {
    const box = arrivals.get(chunk);
    producers.set(chunk.value.id, box ? volume(box) : 0);
  }
  const alignment = { waits, stores, producers };
  arrivalsOf.set(alignment, arrivals);
  entries.push({ sites, grid: module.kernel.grid, alignment });
  return alignment;
}

/** Touches by a region's numbers, lo then hi: a trie whose leaf is under NaN (no coordinate is NaN). */
type TouchMemo = Map<number, unknown>;

function memoised(memo: TouchMemo, region: Box, make: () => Touch | undefined): Touch | undefined {
  let node = memo;
  const n = region.lo.length;
  for (let i = 0; i < 2 * n; i++) {
    const x = i < n ? region.lo[i]! : region.hi[i - n]!;
    let next = node.get(x) as TouchMemo | undefined;
    if (!next) node.set(x, (next = new Map()));
    node = next;
  }
  if (node.has(NaN)) return node.get(NaN) as Touch | undefined;
  const t = make();
  node.set(NaN, t);
  return t;
}

/**
 * Tiles that arrive at each chunk: those in the bounding box of its stores' tile boxes. Barrier
 * insertion guards the chunk's one arrive per tile with exactly this box, so the count and the
 * arrives agree even where the box is larger than the tiles that store into the chunk. One pass over
 * the stores, not one per chunk.
 */
function arrivalBoxes(chunks: readonly ChunkDecl[], stores: readonly ChunkUse[]): Map<ChunkDecl, Box> {
  const tiles = new Map<ChunkDecl, Box[]>();
  for (const use of stores) {
    const boxes = tiles.get(use.chunk);
    if (boxes) boxes.push(use.tiles);
    else tiles.set(use.chunk, [use.tiles]);
  }
  const arrivals = new Map<ChunkDecl, Box>();
  for (const chunk of chunks) {
    const box = boundingBox(tiles.get(chunk) ?? []);
    if (box) arrivals.set(chunk, box);
  }
  return arrivals;
}

const arrivalsOf = new WeakMap<Alignment, Map<ChunkDecl, Box>>();

/** The tile box an arrive at `chunk` is guarded by (see `arrivalBoxes`); undefined if no store meets it. */
export function arrivalTiles(alignment: Alignment, chunk: ChunkDecl): Box | undefined {
  const known = arrivalsOf.get(alignment);
  if (known) return known.get(chunk);
  // An alignment made elsewhere (a test's, say): work it out.
  return boundingBox(alignment.stores.filter((u) => u.chunk === chunk).map((u) => u.tiles));
}

/** Does some execution of the use's site, in `tile`, meet its chunk? */
export function useMeetsTile(module: Module, use: ChunkUse, tile: readonly number[]): boolean {
  const inBox = tile.every((x, i) => x >= use.tiles.lo[i]! && x < use.tiles.hi[i]!);
  if (!inBox) return false;
  const site = use.rank === undefined ? use.site : siteForRank(module, use.site, use.rank);
  return use.exact || touchesByEnumeration(module, site, use.reach ?? use.chunk.region, tile);
}

/** The chunks `tile` of `rank` waits for (its own and its neighbours' that share its lines), in the order of the plan. */
export function chunksWaitedBy(module: Module, rank: number, tile: readonly number[]): ChunkDecl[] {
  const uses = alignChunks(module).waits.filter((u) => waiterOf(u) === rank && useMeetsTile(module, u, tile));
  return module.chunks.filter((c) => uses.some((u) => u.chunk === c));
}

/** The chunks `tile` of `rank` arrives at: those it sends, and the reduce-adds into it (whose parts need its own stores too). */
export function chunksProducedBy(module: Module, rank: number, tile: readonly number[]): ChunkDecl[] {
  const alignment = alignChunks(module);
  return module.chunks.filter((c) => {
    const box = c.src === rank || (c.kind === 'reduce-add' && c.dst === rank) ? arrivalTiles(alignment, c) : undefined;
    return box !== undefined && tile.every((x, i) => x >= box.lo[i]! && x < box.hi[i]!);
  });
}

export function allTiles(grid: readonly number[]): number[][] {
  let tiles: number[][] = [[]];
  for (const n of grid) tiles = tiles.flatMap((t) => Array.from({ length: n }, (_, i) => [...t, i]));
  return tiles;
}

/** Tile boxes of two uses meet (both are boxes over the same grid). */
export function tilesMeet(a: ChunkUse, b: ChunkUse): boolean {
  return intersect(a.tiles, b.tiles) !== undefined;
}
