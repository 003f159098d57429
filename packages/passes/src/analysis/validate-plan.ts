/**
 * Plan validation, before any code is generated: every element a tile reads from another rank is
 * delivered by a chunk; no two chunks write the same elements of a rank ambiguously; every chunk's
 * source has its data when it sends; and the wait graph has no cycle, so no schedule can deadlock.
 * Each diagnostic names the chunk, the tile and the region.
 */
import {
  cover,
  error,
  formatBox,
  intersect,
  ownedBox,
  subtractAll,
  type Box,
  type ChunkDecl,
  type Diagnostic,
  type Module,
} from '@syncopate/ir';
import { accessSites } from './access-sites.js';
import { alignChunks, tilesMeet } from './align.js';
import { siteRegions } from './read-regions.js';

const describeChunk = (c: ChunkDecl) =>
  `%${c.value.name} (@${c.tensor}${formatBox(c.region)} from rank ${c.src} to rank ${c.dst} at step ${c.step})`;
const chunkWhere = (c: ChunkDecl) => ({ op: 'chunk' as const, value: c.value.name });

function owned(module: Module, tensor: string, rank: number): Box | undefined {
  const t = module.tensors.find((x) => x.name === tensor);
  return t && ownedBox(t.shape, t.distribution, module.ranks, rank);
}

/** Every element a load reads that its rank does not own is delivered into that rank by some chunk. */
export function checkCoverage(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const site of accessSites(module)) {
    if (site.kind !== 'load' || site.tensor.distribution.kind !== 'sharded') continue;
    const classes = siteRegions(module, site);
    for (let rank = 0; rank < module.ranks; rank++) {
      const mine = owned(module, site.tensor.name, rank)!;
      const delivered = module.chunks.filter((c) => c.dst === rank && c.tensor === site.tensor.name).map((c) => c.region);
      for (const { tile, boxes } of classes) {
        const missing = boxes.flatMap((b) => cover(b, [mine, ...delivered]).uncovered);
        if (missing.length === 0) continue;
        const name = site.op.op === 'load' ? site.op.result.name : '';
        out.push(
          error(
            'align/uncovered',
            `tile (${tile.join(', ')}) of rank ${rank} reads @${site.tensor.name}${formatBox(missing[0]!)}, which rank ${rank} ` +
              `does not own and no chunk delivers to it`,
            { op: 'load', value: name, ...(site.op.loc ? { loc: site.op.loc } : {}) },
          ),
        );
        break; // one tile per rank and load says enough
      }
    }
  }
  return out;
}

/** Two chunks landing on the same elements of a rank: only reduce-adds of one step may share them. */
export function checkOverlaps(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  const cs = module.chunks;
  for (let i = 0; i < cs.length; i++) {
    const a = cs[i]!;
    const t = module.tensors.find((x) => x.name === a.tensor);
    if (t?.distribution.kind === 'sharded') {
      const clash = intersect(a.region, owned(module, a.tensor, a.dst)!);
      if (clash) {
        out.push(error('align/overlap', `chunk ${describeChunk(a)} overwrites @${a.tensor}${formatBox(clash)}, which rank ${a.dst} owns`, chunkWhere(a)));
      }
    }
    for (let j = i + 1; j < cs.length; j++) {
      const b = cs[j]!;
      if (a.tensor !== b.tensor || a.dst !== b.dst) continue;
      const both = intersect(a.region, b.region);
      if (!both) continue;
      const commuting = a.kind === 'reduce-add' && b.kind === 'reduce-add';
      const ordered = a.step !== b.step && (a.kind === 'reduce-add' || b.kind === 'reduce-add');
      if (commuting || ordered) continue;
      out.push(
        error(
          'align/overlap',
          `chunks ${describeChunk(a)} and ${describeChunk(b)} both write @${a.tensor}${formatBox(both)} of rank ${a.dst}`,
          chunkWhere(b),
        ),
      );
    }
  }
  return out;
}

/** A copy forwards data its source owns, or received at an earlier step. */
export function checkAvailability(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const c of module.chunks) {
    if (c.kind !== 'copy') continue;
    const mine = owned(module, c.tensor, c.src);
    if (!mine) continue;
    const received = module.chunks.filter((d) => d.dst === c.src && d.tensor === c.tensor && d.step < c.step).map((d) => d.region);
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

/** A copy must not land where the destination's own tiles store: the final value would be a race. */
export function checkStoreConflicts(module: Module): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const use of alignChunks(module).stores) {
    if (use.chunk.kind !== 'copy') continue;
    out.push(
      error(
        'align/store-conflict',
        `chunk ${describeChunk(use.chunk)} copies into elements that tiles (${use.tiles.lo.join(', ')}) of rank ${use.chunk.dst} also store`,
        chunkWhere(use.chunk),
      ),
    );
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
  const edge = (c: ChunkDecl, d: ChunkDecl) => {
    const out = graph.get(c)!;
    if (!out.includes(d)) out.push(d);
  };
  for (const c of module.chunks) {
    for (const d of module.chunks) {
      if (d.dst === c.src && d.tensor === c.tensor && d.step < c.step && intersect(c.region, d.region)) edge(c, d);
    }
  }
  for (const s of stores) {
    const c = s.chunk;
    for (const w of waits) {
      const d = w.chunk;
      const producerWaits = d.dst === c.src;
      const landingWaits = c.kind === 'reduce-add' && d.dst === c.dst;
      if ((producerWaits || landingWaits) && tilesMeet(s, w)) edge(c, d);
    }
  }
  return graph;
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
