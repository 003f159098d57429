/**
 * Chunk alignment: intersect every tile's accesses with every chunk. A load on rank r waits for the
 * chunks delivered into r that meet what it reads; a store on rank r contributes to the chunks sent
 * from r that meet what it writes. A tile that straddles chunk boundaries simply meets several chunks.
 */
import type { AffineRange, Box, ChunkDecl, Module } from '@syncopate/ir';
import { boundingBox, intersect, volume } from '@syncopate/ir';
import { accessSites, type AccessSite } from './access-sites.js';
import { touch, touchesByEnumeration } from './touch.js';

/** One access site meeting one chunk. */
export interface ChunkUse {
  readonly site: AccessSite;
  readonly chunk: ChunkDecl;
  /** When an execution of the site meets the chunk (program ids and loop variables). */
  readonly guard: readonly AffineRange[];
  /** Tiles for which some execution meets it. */
  readonly tiles: Box;
  readonly exact: boolean;
}

export interface Alignment {
  /** Loads × chunks: on rank `chunk.dst`, the load must wait for the chunk. */
  readonly waits: readonly ChunkUse[];
  /**
   * Stores × chunks: on rank `chunk.src` the store contributes to the chunk (an arrive follows it);
   * on rank `chunk.dst` it writes where the chunk lands.
   */
  readonly stores: readonly ChunkUse[];
  /** Chunk value id → number of tiles (of its source rank) that arrive at it (see `arrivalTiles`). */
  readonly producers: ReadonlyMap<number, number>;
}

const alignmentCache = new WeakMap<Module, Alignment>();

export function alignChunks(module: Module): Alignment {
  const cached = alignmentCache.get(module);
  if (cached) return cached;
  const waits: ChunkUse[] = [];
  const stores: ChunkUse[] = [];
  for (const site of accessSites(module)) {
    for (const chunk of module.chunks) {
      if (chunk.tensor !== site.tensor.name) continue;
      const t = touch(module, site, chunk.region);
      if (!t) continue;
      (site.kind === 'load' ? waits : stores).push({ site, chunk, ...t });
    }
  }
  const producers = new Map<number, number>();
  for (const chunk of module.chunks) {
    const uses = stores.filter((u) => u.chunk === chunk);
    producers.set(chunk.value.id, countTiles(uses));
  }
  const alignment = { waits, stores, producers };
  alignmentCache.set(module, alignment);
  return alignment;
}

/**
 * Tiles that arrive at the chunk: those in the bounding box of its stores' tile boxes. Barrier
 * insertion guards the chunk's one arrive per tile with exactly this box, so the count and the
 * arrives agree even where the box is larger than the tiles that store into the chunk.
 */
function countTiles(uses: readonly ChunkUse[]): number {
  const box = boundingBox(uses.map((u) => u.tiles));
  return box ? volume(box) : 0;
}

/** The tile box an arrive at `chunk` is guarded by (see `countTiles`); undefined if no store meets it. */
export function arrivalTiles(alignment: Alignment, chunk: ChunkDecl): Box | undefined {
  return boundingBox(alignment.stores.filter((u) => u.chunk === chunk).map((u) => u.tiles));
}

/** Does some execution of the use's site, in `tile`, meet its chunk? */
export function useMeetsTile(module: Module, use: ChunkUse, tile: readonly number[]): boolean {
  const inBox = tile.every((x, i) => x >= use.tiles.lo[i]! && x < use.tiles.hi[i]!);
  if (!inBox) return false;
  return use.exact || touchesByEnumeration(module, use.site, use.chunk.region, tile);
}

/** The chunks `tile` of `rank` waits for, in the order of the plan. */
export function chunksWaitedBy(module: Module, rank: number, tile: readonly number[]): ChunkDecl[] {
  const uses = alignChunks(module).waits.filter((u) => u.chunk.dst === rank && useMeetsTile(module, u, tile));
  return module.chunks.filter((c) => uses.some((u) => u.chunk === c));
}

/** The chunks `tile` of `rank` arrives at. */
export function chunksProducedBy(module: Module, rank: number, tile: readonly number[]): ChunkDecl[] {
  const alignment = alignChunks(module);
  return module.chunks.filter((c) => {
    const box = c.src === rank ? arrivalTiles(alignment, c) : undefined;
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
