/**
 * Plan validation, before any code is generated: every element a tile reads from another rank is
 * delivered by a chunk; no two chunks write the same elements of a rank ambiguously; no copy lands
 * where its destination's tiles store unless the plan orders it after those stores; every chunk's
 * source has its data when it sends; and the wait graph has no cycle, so no schedule can deadlock.
 * Each diagnostic names the chunk, the tile and the region.
 */
import {
  contains,
  cover,
  error,
  formatBox,
  intersect,
  overlaps,
  ownedBox,
  subtractAll,
  volume,
  type Box,
  type ChunkDecl,
  type Diagnostic,
  type Module,
  type TensorDecl,
} from '@syncopate/ir';
import { accessSites, siteForRank, siteValueName, type AccessSite } from './access-sites.js';
import { chunkLanding, landingIn, landingMeeting } from './landing.js';
import { alignChunks, tilesMeet } from './align.js';
import { siteRegions, type TileClassRegion } from './read-regions.js';
import { touch } from './touch.js';

const describeChunk = (c: ChunkDecl) =>
  `%${c.value.name} (@${c.tensor}${formatBox(c.region)} from rank ${c.src} to rank ${c.dst} at step ${c.step})`;
const chunkWhere = (c: ChunkDecl) => ({ op: 'chunk' as const, value: c.value.name });

/**
 * What the checks look up chunk by chunk, made once per module: what each rank owns of each tensor.
 * The chunks landing in each place come from `landing.ts`, so that checks comparing chunks look only
 * at those landing in the same place rather than at all pairs of the plan.
 */
interface PlanIndex {
  /** Tensor → rank → what the rank owns (`ownedBox`). */
  readonly owned: ReadonlyMap<string, readonly Box[]>;
  readonly tensors: ReadonlyMap<string, TensorDecl>;
}

const planIndexes = new WeakMap<Module, PlanIndex>();

function planIndex(module: Module): PlanIndex {
  const cached = planIndexes.get(module);
  if (cached) return cached;
  const tensors = new Map(module.tensors.map((t) => [t.name, t]));
  const owned = new Map(
    module.tensors.map((t) => [t.name, Array.from({ length: module.ranks }, (_, rank) => ownedBox(t.shape, t.distribution, module.ranks, rank))]),
  );
  const index = { owned, tensors };
  planIndexes.set(module, index);
  return index;
}

/** What `rank` owns of `tensor`; undefined for an unknown tensor. */
function owned(module: Module, index: PlanIndex, tensor: string, rank: number): Box | undefined {
  const t = index.tensors.get(tensor);
  return t && (index.owned.get(tensor)![rank] ?? ownedBox(t.shape, t.distribution, module.ranks, rank));
}

/**
 * Whether `mine` and the chunks landing in `rank`'s copy of `tensor` cover `target` once over: each
 * inside it, no two overlapping, their volumes adding up to its. Enough to know nothing is missing,
 * and cheaper than cutting `target` by each box; overlaps are looked up, not compared pair by pair.
 */
function partitions(module: Module, target: Box, mine: Box, tensor: string, rank: number): boolean {
  const delivered = landingIn(module.chunks, tensor, rank);
  let covered = volume(mine);
  if (!contains(target, mine)) return false;
  for (const chunk of delivered) {
    if (!contains(target, chunk.region)) return false;
    covered += volume(chunk.region);
  }
  if (covered !== volume(target)) return false;
  if (landingMeeting(module.chunks, tensor, rank, mine).length > 0) return false;
  return delivered.every((chunk, i) => landingMeeting(module.chunks, tensor, rank, chunk.region).every((j) => j === i));
}

/**
 * Every element a load reads that its rank does not own is delivered into that rank by some chunk.
 * Per rank, what it neither owns nor receives is worked out once (usually nothing); only when some is
 * left are the load's tile classes (one per row of tiles, say) checked against it, so a plan that
 * covers everything costs no work per tile class.
 */
export function checkCoverage(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  let index: PlanIndex | undefined;
  for (const site of accessSites(module)) {
    if (site.kind !== 'load' || site.tensor.distribution.kind !== 'sharded') continue;
    const tensorBox: Box = { lo: site.tensor.shape.map(() => 0), hi: [...site.tensor.shape] };
    let classes: TileClassRegion[] | undefined;
    index ??= planIndex(module);
    for (let rank = 0; rank < module.ranks; rank++) {
      const mine = owned(module, index, site.tensor.name, rank)!;
      // A plan usually delivers each rank exactly what it lacks: then nothing is missing.
      if (partitions(module, tensorBox, mine, site.tensor.name, rank)) continue;
      const delivered = landingIn(module.chunks, site.tensor.name, rank).map((chunk) => chunk.region);
      const holes = subtractAll(tensorBox, [mine, ...delivered]);
      if (holes.length === 0) continue;
      const mineSite = siteForRank(module, site, rank);
      classes = mineSite === site ? (classes ?? siteRegions(module, site)) : siteRegions(module, mineSite);
      // Class boxes are clipped to the tensor, so a class misses data exactly where it meets a hole.
      const short = classes.find(({ boxes }) => boxes.some((b) => holes.some((h) => overlaps(b, h))));
      if (short === undefined) continue;
      const missing = short.boxes.flatMap((b) => cover(b, [mine, ...delivered]).uncovered);
      out.push(
        error(
          'align/uncovered',
          `tile (${short.tile.join(', ')}) of rank ${rank} reads @${site.tensor.name}${formatBox(missing[0]!)}, which rank ${rank} ` +
            `does not own and no chunk delivers to it`,
          { op: site.op.op, value: siteValueName(site), ...(site.op.loc ? { loc: site.op.loc } : {}) },
        ),
      );
    }
  }
  return out;
}

/** Two chunks landing on the same elements of a rank: only reduce-adds of one step may share them. */
export function checkOverlaps(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  const index = planIndex(module);
  for (const a of module.chunks) {
    const t = index.tensors.get(a.tensor);
    const mine = t?.distribution.kind === 'sharded' ? owned(module, index, a.tensor, a.dst) : undefined;
    if (mine && overlaps(a.region, mine)) {
      const clash = intersect(a.region, mine)!;
      out.push(error('align/overlap', `chunk ${describeChunk(a)} overwrites @${a.tensor}${formatBox(clash)}, which rank ${a.dst} owns`, chunkWhere(a)));
    }
    // The later chunks of the plan landing on the same rank and tensor, in plan order.
    const sameLanding = landingIn(module.chunks, a.tensor, a.dst);
    const place = chunkLanding(module.chunks).place.get(a)!;
    for (const k of landingMeeting(module.chunks, a.tensor, a.dst, a.region)) {
      if (k <= place) continue;
      const b = sameLanding[k]!;
      const commuting = a.kind === 'reduce-add' && b.kind === 'reduce-add';
      const ordered = a.step !== b.step && (a.kind === 'reduce-add' || b.kind === 'reduce-add');
      if (commuting || ordered) continue;
      out.push(
        error(
          'align/overlap',
          `chunks ${describeChunk(a)} and ${describeChunk(b)} both write @${a.tensor}${formatBox(intersect(a.region, b.region)!)} of rank ${a.dst}`,
          chunkWhere(b),
        ),
      );
    }
  }
  return out;
}

/**
 * A copy forwards data its source owns, or received at an earlier step. Usually the region lies inside
 * what the source owns or inside one chunk it received (a ring forwards whole chunks), which is checked
 * first; only otherwise is the region cut by all of them.
 */
export function checkAvailability(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  const index = planIndex(module);
  for (const c of module.chunks) {
    if (c.kind !== 'copy') continue;
    const mine = owned(module, index, c.tensor, c.src);
    if (!mine || contains(mine, c.region)) continue;
    // Only chunks that meet the region can hold it or take part of it away.
    const landed = landingIn(module.chunks, c.tensor, c.src);
    const received: Box[] = [];
    let forwarded = false;
    for (const k of landingMeeting(module.chunks, c.tensor, c.src, c.region)) {
      const d = landed[k]!;
      if (d.step >= c.step) continue;
      received.push(d.region);
      forwarded ||= contains(d.region, c.region);
    }
    if (forwarded) continue;
    const missing = subtractAll(c.region, [mine, ...received]);
    if (missing.length > 0) {
      out.push(
        error(
          'align/unavailable',
          `chunk ${describeChunk(c)} sends @${c.tensor}${formatBox(missing[0]!)}, which rank ${c.src} neither owns nor receives before step ${c.step}`,
          chunkWhere(c),
        ),
      );
    }
  }
  return out;
}

/**
 * The parts of `chunk`'s region whose publication comes after every store `rank`'s tiles make there.
 * A part is published only once the tiles that complete it have stored: the source rank's (its
 * arrives), a reduce-add's destination rank's too (it adds onto their stores), and, through the parts
 * it forwards, whatever precedes those. So the region is all of the chunk's where `rank` is such a
 * side, and otherwise what the chunks it forwards (those landing on its source at earlier steps)
 * have of it. Memoised in `memo` per chunk and rank.
 */
function publishedAfterStores(module: Module, index: PlanIndex, chunk: ChunkDecl, rank: number, memo: Map<ChunkDecl, Map<number, Box[]>>): Box[] {
  const known = memo.get(chunk)?.get(rank);
  if (known) return known;
  const byRank = memo.get(chunk) ?? new Map<number, Box[]>();
  memo.set(chunk, byRank);
  let boxes: Box[] = [];
  // A reduce-add's destination-side arrives are counted with the source rank's tiles: only the same
  // tiles when the stores do not depend on the rank.
  const addsOnto = chunk.kind === 'reduce-add' && chunk.dst === rank && storesIgnoreRank(module, chunk.tensor);
  if (chunk.src === rank || addsOnto) boxes = [chunk.region];
  else {
    const landed = landingIn(module.chunks, chunk.tensor, chunk.src);
    for (const k of landingMeeting(module.chunks, chunk.tensor, chunk.src, chunk.region)) {
      const fed = landed[k]!;
      if (fed.step >= chunk.step) continue;
      for (const b of publishedAfterStores(module, index, fed, rank, memo)) {
        const part = intersect(b, chunk.region);
        if (part && !boxes.some((x) => contains(x, part))) boxes.push(part);
      }
      if (boxes.some((x) => contains(x, chunk.region))) {
        boxes = [chunk.region];
        break;
      }
    }
  }
  byRank.set(rank, boxes);
  return boxes;
}

/** No store of `tensor` has an offset that depends on `rank_id`. */
function storesIgnoreRank(module: Module, tensor: string): boolean {
  return accessSites(module).every((s) => s.kind !== 'store' || s.tensor.name !== tensor || siteForRank(module, s, 0) === s);
}

/**
 * A copy must not land where the destination's own tiles store unless it is published after those
 * stores; otherwise the final value depends on which comes last. It is after them when it forwards,
 * through a chain of chunks, data whose publication waited for them: in an all-reduce, the
 * all-gather copies each reduced shard onto rows where the destination stored its partial, and the
 * reduce-scatter chain that summed the shard started with (or added onto) those very stores.
 */
export function checkStoreConflicts(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  const index = planIndex(module);
  const memo = new Map<ChunkDecl, Map<number, Box[]>>();
  const regions = new Map<AccessSite, Box[]>();
  const reported = new Set<ChunkDecl>();
  for (const site of accessSites(module)) {
    if (site.kind !== 'store') continue;
    for (const c of module.chunks) {
      if (c.kind !== 'copy' || c.tensor !== site.tensor.name || reported.has(c)) continue;
      const mine = siteForRank(module, site, c.dst);
      const met = touch(module, mine, c.region);
      if (!met) continue;
      if (!regions.has(mine)) regions.set(mine, siteRegions(module, mine).flatMap((cls) => cls.boxes));
      const stored = regions.get(mine)!.flatMap((b) => intersect(b, c.region) ?? []);
      const ordered = publishedAfterStores(module, index, c, c.dst, memo);
      const racing = stored.flatMap((b) => subtractAll(b, ordered));
      if (racing.length === 0) continue;
      reported.add(c);
      out.push(
        error(
          'align/store-conflict',
          `chunk ${describeChunk(c)} copies into @${c.tensor}${formatBox(racing[0]!)}, which tiles (${met.tiles.lo.join(', ')}) ` +
            `of rank ${c.dst} also store, and nothing orders the copy after those stores (it forwards no chunk they complete)`,
          chunkWhere(c),
        ),
      );
    }
  }
  return out;
}

/**
 * The wait graph over chunks: c → d when c cannot be sent before d has arrived, because c forwards
 * d's data, because the tiles that complete c wait for d, or (reduce-add) because the destination
 * tiles that c adds onto wait for d. A cycle means a deadlock under every schedule.
 */
export function waitGraph(module: Module): Map<ChunkDecl, ChunkDecl[]> {
  const { waits, stores } = alignChunks(module);
  const graph = new Map<ChunkDecl, ChunkDecl[]>(module.chunks.map((c) => [c, []]));
  // A node with many targets keeps them as a set too: `includes` on the list made dense graphs
  // quadratic per node (most nodes have one or two, which a set per node would only slow down).
  const targets = new Map<ChunkDecl, Set<ChunkDecl>>();
  const edge = (c: ChunkDecl, d: ChunkDecl) => {
    const out = graph.get(c)!;
    if (out.length < 16) {
      if (!out.includes(d)) out.push(d);
      return;
    }
    let seen = targets.get(c);
    if (!seen) targets.set(c, (seen = new Set(out)));
    if (seen.has(d)) return;
    seen.add(d);
    out.push(d);
  };
  for (const c of module.chunks) {
    // The chunks received where c is sent from that meet it, in plan order.
    const landed = landingIn(module.chunks, c.tensor, c.src);
    for (const k of landingMeeting(module.chunks, c.tensor, c.src, c.region)) {
      if (landed[k]!.step < c.step) edge(c, landed[k]!);
    }
  }
  // The waits on each rank, in alignment order: a store meets only those of its chunk's two ends.
  const waitsOn = new Map<number, number[]>();
  waits.forEach((w, i) => {
    const list = waitsOn.get(w.chunk.dst);
    if (list) list.push(i);
    else waitsOn.set(w.chunk.dst, [i]);
  });
  for (const s of stores) {
    const c = s.chunk;
    const producer = waitsOn.get(c.src) ?? [];
    const landing = c.kind === 'reduce-add' && c.dst !== c.src ? (waitsOn.get(c.dst) ?? []) : [];
    for (const i of mergeAscending(producer, landing)) {
      if (tilesMeet(s, waits[i]!)) edge(c, waits[i]!.chunk);
    }
  }
  return graph;
}

/** Two ascending lists as one ascending list. */
function mergeAscending(a: readonly number[], b: readonly number[]): number[] {
  if (b.length === 0) return a as number[];
  const out: number[] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i]! < b[j]!) ? a[i++]! : b[j++]!);
  return out;
}

export function checkCycles(module: Module): Diagnostic[] {
  const graph = waitGraph(module);
  const state = new Map<ChunkDecl, 'open' | 'done'>();
  const stack: ChunkDecl[] = [];
  const visit = (c: ChunkDecl): ChunkDecl[] | undefined => {
    state.set(c, 'open');
    stack.push(c);
    for (const d of graph.get(c)!) {
      if (state.get(d) === 'open') return [...stack.slice(stack.indexOf(d)), d];
      if (!state.has(d)) {
        const cycle = visit(d);
        if (cycle) return cycle;
      }
    }
    stack.pop();
    state.set(c, 'done');
    return undefined;
  };
  for (const c of module.chunks) {
    if (state.has(c)) continue;
    const cycle = visit(c);
    if (cycle) {
      const path = cycle.map((x) => `%${x.value.name}`).join(' waits for ');
      return [error('align/cycle', `the plan can deadlock: ${path}; first: ${describeChunk(cycle[0]!)}`, chunkWhere(cycle[0]!))];
    }
  }
  return [];
}

/** All plan checks, in the order a user should fix them. */
export function validatePlan(module: Module): Diagnostic[] {
  return [
    ...checkOverlaps(module),
    ...checkAvailability(module),
    ...checkCoverage(module),
    ...checkStoreConflicts(module),
    ...checkCycles(module),
  ];
}
