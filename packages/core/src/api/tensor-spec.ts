/**
 * What a tensor is to the run API: its declaration in a kernel (shape, element type, distribution)
 * and the ranks it spans. Every rank holds a whole copy of the shape (the local kernel's view); a
 * sharded tensor's rank owns one block of it, and the rest of its copy is where chunks land.
 */
import { ownedBox, type Box, type DType, type Distribution, type Shape, type TensorDecl } from '@syncopate/ir';

export interface TensorSpec {
  /** Named in errors; a kernel binds tensors by its own names (Program.run). */
  readonly name: string;
  readonly shape: Shape;
  readonly dtype: DType;
  readonly distribution: Distribution;
  readonly ranks: number;
}

export const specOf = (decl: TensorDecl, ranks: number): TensorSpec => ({ name: decl.name, shape: decl.shape, dtype: decl.dtype, distribution: decl.distribution, ranks });

/** Elements of one rank's whole copy. */
export const elementsOf = (spec: TensorSpec): number => spec.shape.reduce((n, d) => n * d, 1);

/** The block `rank` owns: its shard of a sharded tensor; the whole shape otherwise. */
export const ownedRegion = (spec: TensorSpec, rank: number): Box => ownedBox(spec.shape, spec.distribution, spec.ranks, rank);

export const boxElements = (box: Box): number => box.lo.reduce((n, lo, i) => n * Math.max(0, box.hi[i]! - lo), 1);

export const formatShape = (shape: Shape): string => `[${shape.join(', ')}]`;

export function formatDistribution(d: Distribution): string {
  return d.kind === 'sharded' ? `sharded on axis ${d.axis}` : d.kind === 'partial' ? 'partial sums' : 'replicated';
}

/** Whether two specs describe the same buffer layout: shape, element type and ranks. */
export function sameLayout(a: TensorSpec, b: TensorSpec): boolean {
  return a.dtype === b.dtype && a.ranks === b.ranks && a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);
}
