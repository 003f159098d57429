/**
 * Waits by cache line, not by element. A GPU's L1 is not coherent with writes from other SMs and
 * WGSL has no device-scope fence, so a load that pulls in a cache line part of which a chunk has not
 * yet written keeps the stale part in L1: a later load of those elements on that SM, after its wait
 * for the chunk, hits the stale line. On the H100 ring attention went wrong this way in every fuzz
 * case whose shards did not end on a 32-byte sector (47 of 47 wrong ring-attn cases of
 * benchmarks/results/fuzz-2026-11-28, none of the 87 with aligned shards): a tile reading key row 23
 * of a 24x1 K pulled rows 16–23 into L1 before the chunk holding rows 16 and 17 had landed.
 *
 * So a load waits for every chunk that writes into a cache line it reads: the chunk's region is
 * widened to the elements that can share a line with it (`lineHull`) before alignment intersects it
 * with the tiles' reads. Only tensors the kernel never stores into and whose chunks are all copies
 * (gathered inputs: K and V, ag-gemm's A): their chunks are published by the data alone (tokens and
 * forwarding), never by tiles, so an extra wait cannot close a cycle. Lines that span two ranks'
 * copies (a copy need not start on a line) are not covered.
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
