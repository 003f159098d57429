/** Row-major dense tensors on the host: the contiguous runs of a box, and the per-rank data sessions take. */
import { formatBox, type Box, type Shape } from '@syncopate/ir';

/**
 * Per tensor name, per rank: the tensor's full logical shape, row-major, as f32 (f16 tensors hold
 * values that f16 represents exactly).
 */
export type TensorData = Record<string, Float32Array[]>;

/** Row-major strides of `shape`. */
export function strides(shape: Shape): number[] {
  const s = shape.map(() => 1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

/**
 * Calls `visit(offset, length)` for each contiguous run of `region` (its innermost axis) in a
 * row-major tensor of `shape`, in increasing offset order. An empty region visits nothing.
 */
export function forEachRun(shape: Shape, region: Box, visit: (offset: number, length: number) => void): void {
  const rank = shape.length;
  if (region.lo.length !== rank || region.hi.length !== rank) {
    throw new RangeError(`region ${formatBox(region)} does not have the rank of shape [${shape.join(', ')}]`);
  }
  region.lo.forEach((lo, i) => {
    if (lo < 0 || region.hi[i]! > shape[i]!) throw new RangeError(`region ${formatBox(region)} lies outside shape [${shape.join(', ')}]`);
  });
  if (rank === 0) return visit(0, 1);
  if (region.lo.some((lo, i) => region.hi[i]! <= lo)) return;
  const st = strides(shape);
  const inner = rank - 1;
  const length = region.hi[inner]! - region.lo[inner]!;
  const at = [...region.lo];
  for (;;) {
    visit(at.reduce((o, x, i) => o + x * st[i]!, 0), length);
    let axis = inner - 1;
    while (axis >= 0 && ++at[axis]! >= region.hi[axis]!) at[axis] = region.lo[axis--]!;
    if (axis < 0) return;
  }
}
