/**
 * Line edges: rows that a chunk part lands in a cache line which another part's move reads, copied
 * from their owner in a dispatch of their own, before the one that runs the tiles and the moves.
 *
 * A workgroup publishing a part reads its source with plain loads, which fill its compute unit's L1
 * (not coherent with other compute units; WGSL has no device-scope fence). Where the source's lines
 * also hold bytes that another part lands in the same dispatch, the line enters that L1 before those
 * bytes have landed, and a tile that later runs on the same compute unit, after waiting for that part,
 * reads them from the stale line. A one-shot gather's shard s ends in the line where, in rank s's copy,
 * shard s + 1 begins: each move of s's last rows caches s + 1's first rows in rank s's copy before they
 * land. On one H200, ring-attn at 7 ranks, M 126, N 9, two chunks a rank (GPU fuzz #338 of
 * benchmarks/results/suite-2026-11-28) was wrong in 122 of 200 runs from fresh inputs; the gathered
 * copies were right in memory every time, and each wrong output is what the reference gives with one
 * 32-byte sector of V, next to the rank's own shard, left as it was before its rows landed.
 *
 * Tiles' loads already wait by cache line (passes' cache-lines.ts), but a move cannot wait for what
 * lands in its source's lines: shards s and s + 1's moves each read the lines the other's fill, and in
 * a ring a shard's first hop reads a line its last hop fills. So those rows are put in place first:
 * every row of a part whose bytes share a line with the source of another part's move (other than a
 * part that move forwards, which it waits for) is copied in a first dispatch from the row's owner, the
 * source of the token part that the data starts from. Between dispatches L1 is invalidated; in the
 * second every line a move reads holds final bytes and those of the parts it forwards, which it waits
 * for. The parts still copy those rows again (the same values). Only gathered inputs (lineWaitTensors:
 * 2-D, never stored into, every chunk a copy), whose data is there at launch; rows of whole lines
 * never share one, so their kernels keep a single dispatch. One device only: over several, a phase's
 * moves begin from data that peer copies land between phases.
 */
import { BoxIndex, dtypeBytes, intersect, type Box, type ChunkDecl, type Module } from '@syncopate/ir';
import { accessSites, CACHE_LINE_BYTES, lineWaitTensors } from '@syncopate/passes';
import type { ChunkPart, ChunkTable } from './chunk-table.js';

/**
 * `table` with the line edges of its gathered inputs as parts after its own (`ChunkTable.edges`), each
 * a box of rows of one part copied from their owner; `table` itself where there are none.
 */
export function withLineEdges(module: Module, table: ChunkTable): ChunkTable {
  const stored = new Set(accessSites(module).flatMap((s) => (s.kind === 'store' ? [s.tensor.name] : [])));
  const tensors = lineWaitTensors(module, stored);
  if (tensors.size === 0) return table;
  const chunkOf = (p: ChunkPart): ChunkDecl => table.entries[p.chunk]!.chunk;
  // The parts each part forwards (its feeders): its move waits for them.
  const feeders = new Map<number, number[]>();
  for (const p of table.parts) {
    for (const d of p.dependents) {
      const list = feeders.get(d);
      if (list) list.push(p.index);
      else feeders.set(d, [p.index]);
    }
  }
  const originMemo = new Map<number, { src: number; box: Box }[]>();
  const edges: ChunkPart[] = [];
  for (const [name, spill] of tensors) {
    // Rows of whole lines: a line holds bytes of one row, which only one part lands in any copy.
    if (spill.rows === 0) continue;
    const [, cols] = spill.shape;
    const size = dtypeBytes(module.tensors.find((t) => t.name === name)!.dtype);
    const rowBytes = cols * size;
    const copyBytes = spill.shape[0] * rowBytes;
    const parts = table.parts.filter((p) => chunkOf(p).tensor === name);
    const landing = new Map<number, BoxIndex<ChunkPart>>();
    for (const [dst, list] of groupBy(parts, (p) => chunkOf(p).dst)) landing.set(dst, new BoxIndex(list, (p) => p.region));
    const rows = new Map<ChunkPart, [number, number][]>();
    // A one-shot gather moves each source region to every other rank: the lines are worked out once a region.
    for (const movers of groupBy(parts, (p) => sourceKey(chunkOf(p).src, p.region)).values()) {
      const { lo, hi } = movers[0]!.region;
      const [r0, c0] = lo as [number, number];
      const [r1, c1] = hi as [number, number];
      if (r1 <= r0 || c1 <= c0) continue;
      // The lines the moves read: those of the region in the source's copy, at buffer byte offsets.
      const base = chunkOf(movers[0]!).src * copyBytes;
      const from = Math.floor((base + (r0 * cols + c0) * size) / CACHE_LINE_BYTES) * CACHE_LINE_BYTES;
      const to = (Math.floor((base + ((r1 - 1) * cols + c1) * size - 1) / CACHE_LINE_BYTES) + 1) * CACHE_LINE_BYTES;
      // The copies those lines reach: the source's, and a neighbour's where they cross its edge.
      for (let q = Math.max(0, Math.floor(from / copyBytes)); q < Math.min(module.ranks, Math.ceil(to / copyBytes)); q++) {
        const index = landing.get(q);
        if (!index) continue;
        const a = Math.max(from, q * copyBytes) - q * copyBytes;
        const b = Math.min(to, (q + 1) * copyBytes) - q * copyBytes;
        for (const part of index.meeting({ lo: [Math.floor(a / rowBytes), 0], hi: [Math.floor((b - 1) / rowBytes) + 1, cols] })) {
          // A move waits for the parts it forwards, and reads its own lines before it writes them.
          if (movers.every((m) => part === m || feeders.get(m.index)?.includes(part.index))) continue;
          // Rows i of the part whose bytes, [(i·cols + w0)·size, (i·cols + w1)·size), meet [a, b).
          const [p0, w0] = part.region.lo as [number, number];
          const [p1, w1] = part.region.hi as [number, number];
          const first = Math.max(p0, Math.floor((a - w1 * size) / rowBytes) + 1);
          const end = Math.min(p1, Math.ceil((b - w0 * size) / rowBytes));
          if (first >= end) continue;
          const list = rows.get(part);
          if (list) list.push([first, end]);
          else rows.set(part, [[first, end]]);
        }
      }
    }
    for (const [part, ranges] of rows) {
      const [, w0] = part.region.lo as [number, number];
      const [, w1] = part.region.hi as [number, number];
      for (const [first, end] of merged(ranges)) {
        for (const { src, box } of origins(part, { lo: [first, w0], hi: [end, w1] })) {
          const index = table.parts.length + edges.length;
          edges.push({ index, chunk: part.chunk, region: box, need: 0, arrivals: 0, feeders: 0, dependents: [], lock: -1, lead: index, members: [], src });
        }
      }
    }
  }
  if (edges.length === 0) return table;
  return { ...table, parts: [...table.parts, ...edges], edges: edges.map((e) => e.index) };

  /** Where `box` of `part`'s rows starts from: its source, or (forwarded) its feeders' origins. */
  function origins(part: ChunkPart, box: Box): { src: number; box: Box }[] {
    return originsOf(part).flatMap(({ src, box: from }) => {
      const meet = intersect(box, from);
      return meet ? [{ src, box: meet }] : [];
    });
  }

  /** The sources of the data a part copies, each with the region of the part it covers (memoised: a ring's hops form chains). */
  function originsOf(part: ChunkPart): { src: number; box: Box }[] {
    let known = originMemo.get(part.index);
    if (known) return known;
    const fed = feeders.get(part.index);
    known = fed ? fed.flatMap((f) => origins(table.parts[f]!, part.region)) : [{ src: chunkOf(part).src, box: part.region }];
    originMemo.set(part.index, known);
    return known;
  }
}

/** Row ranges [first, end) merged where they meet or overlap, in order. */
function merged(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [first, end] of sorted) {
    const last = out[out.length - 1];
    if (last && first <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([first, end]);
  }
  return out;
}

const sourceKey = (src: number, region: Box): string => `${src}/${region.lo.join()}/${region.hi.join()}`;

function groupBy<T, K>(items: readonly T[], key: (x: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const x of items) {
    const k = key(x);
    const list = groups.get(k);
    if (list) list.push(x);
    else groups.set(k, [x]);
  }
  return groups;
}
