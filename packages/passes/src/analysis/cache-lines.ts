/**
 * Waits by cache line, not by element. A GPU's L1 is not coherent with writes from other SMs and
 * WGSL has no device-scope fence, so a load that pulls in a cache line part of which a chunk has not
 * yet written keeps the stale part in L1: a later load of those elements on that SM, after its wait
 * for the chunk, hits the stale line. On the H100 ring attention went wrong this way in every fuzz
 * case whose shards did not end on a 32-byte sector (47 of 47 wrong ring-attn cases of
 * benchmarks/results/fuzz-2026-11-28 at commit 99bd4e5, in git history; none of the 87 with aligned shards): a tile reading key row 23
 * of a 24x1 K pulled rows 16–23 into L1 before the chunk holding rows 16 and 17 had landed.
 *
 * So a load waits for every chunk that writes into a cache line it reads: the chunk's region is
 * widened to the elements that can share a line with it (`lineHull`) before alignment intersects it
 * with the tiles' reads. Only tensors the kernel never stores into and whose chunks are all copies
 * (gathered inputs: K and V, ag-gemm's A): their chunks are published by the data alone (tokens and
 * forwarding), never by tiles, so an extra wait cannot close a cycle.
 *
 * A device buffer holds every rank's copy back to back (rank r's at r·elements, not on a line), so a
 * line can also hold the end of one rank's copy and the start of the next's: a tile of rank q that
 * reads the last rows of its copy caches the first rows of rank q + 1's, which a chunk bound for
 * q + 1 may not have written yet, and q + 1's tile on that compute unit then reads them stale after
 * its own wait. So a load of rank q also waits for the chunks landing in a neighbouring rank's copy
 * whose bytes share a line with what it reads (`neighbourLines`; a wait `on rank q`). The same
 * argument keeps these waits from closing a cycle: every chunk of such a tensor is a copy, published
 * by token workgroups and the forwarding of parts from them (lowest tickets of a phase), never by a
 * tile's arrive, since no tile stores into the tensor; a neighbour on another device has its own
 * buffer, so only ranks placed together wait (the backends drop the rest).
 */
import { dtypeBytes, type Box, type ChunkDecl, type Module, type TensorDecl } from '@syncopate/ir';

/** Bytes of the cache line waits are widened to (NVIDIA's and AMD's L1 lines; NVIDIA fills 32-byte sectors of them). */
export const CACHE_LINE_BYTES = 128;

/** How a chunk region of a 2-D row-major tensor widens to whole lines: rows either side, or columns to line edges. */
export interface LineSpill {
  /** Rows either side a line can reach (then every column). */
  readonly rows: number;
  /** Elements per line, where rows are whole lines (rows = 0): columns widen to multiples of it. */
  readonly lineElements: number;
  readonly shape: readonly [number, number];
}

/** The spill of `tensor`'s chunks, or undefined where none is needed (not 2-D). */
export function lineSpill(tensor: TensorDecl): LineSpill | undefined {
  if (tensor.shape.length !== 2) return undefined;
  const [rows, cols] = tensor.shape as [number, number];
  const lineElements = Math.max(1, Math.floor(CACHE_LINE_BYTES / dtypeBytes(tensor.dtype)));
  // Rows of whole lines keep lines within a row (a copy of R·C elements then starts on a line too).
  if ((cols * dtypeBytes(tensor.dtype)) % CACHE_LINE_BYTES === 0) return { rows: 0, lineElements, shape: [rows, cols] };
  // A line holding element f spans at most f − (lineElements − 1) .. f + (lineElements − 1).
  return { rows: Math.ceil((lineElements - 1) / cols), lineElements, shape: [rows, cols] };
}

/** `region` widened to every element that can share a cache line with it, within the tensor. */
export function lineHull(region: Box, spill: LineSpill): Box {
  const [R, C] = spill.shape;
  const [r0, c0] = region.lo as [number, number];
  const [r1, c1] = region.hi as [number, number];
  if (spill.rows === 0) {
    const w = spill.lineElements;
    return { lo: [r0, Math.floor(c0 / w) * w], hi: [r1, Math.min(C, Math.ceil(c1 / w) * w)] };
  }
  return { lo: [Math.max(0, r0 - spill.rows), 0], hi: [Math.min(R, r1 + spill.rows), C] };
}

/** A rank whose copy shares cache lines with a chunk's bytes, and the region of its copy in those lines. */
export interface NeighbourLines {
  readonly rank: number;
  readonly region: Box;
}

/**
 * The ranks other than `chunk.dst` whose copies of `tensor` (2-D, row-major, rank r's copy at element
 * r·rows·cols of the buffer) share a cache line with the chunk's bytes, each with the rows (all
 * columns, or the columns within one row) of its copy in those lines.
 */
export function neighbourLines(tensor: TensorDecl, ranks: number, chunk: ChunkDecl): NeighbourLines[] {
  if (tensor.shape.length !== 2) return [];
  const [R, C] = tensor.shape as [number, number];
  const size = dtypeBytes(tensor.dtype);
  const copy = R * C * size;
  if (copy === 0) return [];
  const [r0, c0] = chunk.region.lo as [number, number];
  const [r1, c1] = chunk.region.hi as [number, number];
  if (r1 <= r0 || c1 <= c0) return [];
  // The chunk's first and last bytes in the buffer, and the lines they lie in.
  const first = chunk.dst * copy + (r0 * C + c0) * size;
  const last = chunk.dst * copy + ((r1 - 1) * C + c1) * size - 1;
  const from = Math.floor(first / CACHE_LINE_BYTES) * CACHE_LINE_BYTES;
  const to = (Math.floor(last / CACHE_LINE_BYTES) + 1) * CACHE_LINE_BYTES;
  const out: NeighbourLines[] = [];
  for (let q = Math.max(0, Math.floor(from / copy)); q < Math.min(ranks, Math.ceil(to / copy)); q++) {
    if (q === chunk.dst) continue;
    // Lines strictly inside the destination's copy hold none of q's bytes: q's part is at the ends.
    const a = Math.max(from, q * copy) / size - q * R * C;
    const b = Math.ceil(Math.min(to, (q + 1) * copy) / size) - q * R * C;
    if (b <= a) continue;
    // Whole rows, as a chunk's own waits are: the wait then sits with the tile's others, before its
    // loops, rather than in the iteration that reads the shared line (a second wait point per step).
    out.push({ rank: q, region: { lo: [Math.floor(a / C), 0], hi: [Math.floor((b - 1) / C) + 1, C] } });
  }
  return out;
}

/** Tensors whose chunks' waits widen to cache lines: 2-D, never stored into by the kernel, every chunk a copy. */
export function lineWaitTensors(module: Module, stored: ReadonlySet<string>): Map<string, LineSpill> {
  const copiesOnly = new Map<string, boolean>();
  for (const c of module.chunks as readonly ChunkDecl[]) copiesOnly.set(c.tensor, (copiesOnly.get(c.tensor) ?? true) && c.kind === 'copy');
  const out = new Map<string, LineSpill>();
  for (const t of module.tensors) {
    if (!copiesOnly.get(t.name) || stored.has(t.name)) continue;
    const spill = lineSpill(t);
    if (spill) out.set(t.name, spill);
  }
  return out;
}
