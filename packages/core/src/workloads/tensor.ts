/** Row-major dense tensors on the host: filling boxes, comparing on a region, and the reference GEMM. */
import type { Box, Shape } from '@syncopate/ir';
import { forEachRun } from '../api/row-major.js';
import { UsageError } from './errors.js';
import type { TensorData } from './types.js';

export { forEachRun };

/** Fills `region` of a row-major tensor with values from `next`, in row-major order. */
export function fillRegion(data: Float32Array, shape: Shape, region: Box, next: () => number): void {
  forEachRun(shape, region, (offset, length) => {
    for (let i = 0; i < length; i++) data[offset + i] = next();
  });
}

/** The largest |actual − expected| over `region` of a row-major tensor of `shape` (0 for an empty region; NaN if any is NaN). */
export function maxAbsError(actual: Float32Array, expected: Float32Array, region: Box, shape: Shape): number {
  const size = shape.reduce((n, d) => n * d, 1);
  if (actual.length !== size || expected.length !== size) {
    throw new RangeError(`maxAbsError: shape [${shape.join(', ')}] has ${size} elements, got ${actual.length} and ${expected.length}`);
  }
  let worst = 0;
  forEachRun(shape, region, (offset, length) => {
    for (let i = offset; i < offset + length && !Number.isNaN(worst); i++) {
      const e = Math.abs(actual[i]! - expected[i]!);
      if (!(e <= worst)) worst = e; // NaN too: a NaN anywhere in the region is the answer
    }
  });
  return worst;
}

/**
 * `c[rows] += a[rows] · b` for row-major a [M,K], b [K,N], c [M,N], on rows `[rowLo, rowHi)` (those
 * `keep` holds, where given). The i-k-j loop order walks b and c along rows, which keeps it fast
 * enough for test shapes.
 */
export function gemmAccumulate(
  c: Float32Array,
  a: Float32Array,
  b: Float32Array,
  shape: { m: number; n: number; k: number },
  rows: readonly [number, number] = [0, shape.m],
  keep?: (row: number) => boolean,
): void {
  const { n, k } = shape;
  for (let i = rows[0]; i < rows[1]; i++) {
    if (keep && !keep(i)) continue;
    const cRow = i * n;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p]!;
      if (aip === 0) continue;
      const bRow = p * n;
      for (let j = 0; j < n; j++) c[cRow + j]! += aip * b[bRow + j]!;
    }
  }
}

/** `inputs[name]`, checked to hold `ranks` arrays of `size` elements; throws `UsageError` otherwise. */
export function tensorOf(inputs: TensorData, name: string, ranks: number, size: number): Float32Array[] {
  const data = inputs[name];
  if (!data || data.length !== ranks || data.some((d) => d.length !== size)) {
    throw new UsageError(`inputs: tensor ${name} needs ${ranks} arrays of ${size} elements`);
  }
  return data;
}
