/** Slabs of a tensor along one axis: the regions plan templates move. */
import { shardRange, type Box, type ChunkSpec, type CommBackend, type ChunkKind } from '@syncopate/ir';

export interface TensorLike {
  readonly name: string;
  readonly shape: readonly number[];
}

export interface TemplateOptions {
  readonly ranks: number;
  readonly tensor: TensorLike;
  /** The axis the tensor is sharded on. */
  readonly axis: number;
  /** Each rank's shard is cut into this many chunks along `axis`, moved separately (default 1). */
  readonly chunksPerRank?: number;
  readonly backend?: CommBackend;
}

/** The box of `tensor` whose `axis` runs over `[lo, hi)`, every other axis whole. */
export function slab(tensor: TensorLike, axis: number, lo: number, hi: number): Box {
  const boxLo = tensor.shape.map((_, i) => (i === axis ? lo : 0));
  const boxHi = tensor.shape.map((d, i) => (i === axis ? hi : d));
  return { lo: boxLo, hi: boxHi };
}

/** The regions of `shard`'s chunks: its slab cut into `chunksPerRank` balanced, non-empty pieces. */
export function shardPieces(o: TemplateOptions, shard: number): Box[] {
  const extent = o.tensor.shape[o.axis];
  if (extent === undefined) throw new RangeError(`template: axis ${o.axis} is out of range for @${o.tensor.name}`);
  const [lo, hi] = shardRange(extent, o.ranks, shard);
  const pieces = Math.min(o.chunksPerRank ?? 1, hi - lo);
  return Array.from({ length: pieces }, (_, p) => {
    const [a, b] = shardRange(hi - lo, pieces, p);
    return slab(o.tensor, o.axis, lo + a, lo + b);
  });
}

/** Checks what every template needs: a positive rank count and an axis of the tensor. */
export function validateRanksAndAxis(name: string, o: Omit<TemplateOptions, 'chunksPerRank'>): void {
  if (!Number.isInteger(o.ranks) || o.ranks < 1) {
    throw new RangeError(`${name}(@${o.tensor.name}): ranks must be a positive integer, got ${o.ranks}`);
  }
  if (!Number.isInteger(o.axis) || o.axis < 0 || o.axis >= o.tensor.shape.length) {
    throw new RangeError(`${name}(@${o.tensor.name}): axis ${o.axis} is not an axis of a rank-${o.tensor.shape.length} tensor`);
  }
}

/** Also checks chunks per rank, and that every rank gets a non-empty shard. */
export function validateTemplateOptions(name: string, o: TemplateOptions): void {
  validateRanksAndAxis(name, o);
  const cpr = o.chunksPerRank ?? 1;
  if (!Number.isInteger(cpr) || cpr < 1) {
    throw new RangeError(`${name}(@${o.tensor.name}): chunksPerRank must be a positive integer, got ${cpr}`);
  }
  if (o.tensor.shape[o.axis]! < o.ranks) {
    throw new RangeError(`${name}(@${o.tensor.name}): axis ${o.axis} has ${o.tensor.shape[o.axis]} elements, fewer than ${o.ranks} ranks`);
  }
}

export function chunk(
  o: TemplateOptions,
  region: Box,
  src: number,
  dst: number,
  step: number,
  kind: ChunkKind,
): ChunkSpec {
  return { tensor: o.tensor.name, region, src, dst, step, kind, backend: o.backend ?? 'auto' };
}

export const mod = (a: number, n: number): number => ((a % n) + n) % n;
