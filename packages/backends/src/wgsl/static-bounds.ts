/**
 * What codegen can prove about a tile's place before the kernel runs: the values of every program id
 * (its grid axis) and of every loop variable with constant bounds, and from them whether a tile lies
 * inside its tensor for every workgroup and step. A tile proved inside needs no edge path: the
 * subgroup-matrix staging then emits neither the element-wise fallback nor the runtime test, and a
 * store proved whole needs no scratch (subgroup-matrix.ts).
 */
import { affineRange, type AffineExpr, type ForOp, type Module } from '@syncopate/ir';
import { walkOps } from './walk-ops.js';

/** The values `first, first + step, …, last` an index takes. */
export interface ValueRange {
  readonly first: number;
  readonly last: number;
  readonly step: number;
}

export type ValueRanges = ReadonlyMap<number, ValueRange>;

/** The values a loop variable takes, where its bounds are constants. */
export function loopRange(op: ForOp): ValueRange | undefined {
  if (op.lower.terms.length > 0 || op.upper.terms.length > 0 || op.upper.constant <= op.lower.constant) return undefined;
  const trips = Math.ceil((op.upper.constant - op.lower.constant) / op.step);
  return { first: op.lower.constant, last: op.lower.constant + (trips - 1) * op.step, step: op.step };
}

/** Program ids over their grid axes and loop variables over `loopRange`, for the whole kernel. */
export function valueRanges(module: Module): Map<number, ValueRange> {
  const ranges = new Map<number, ValueRange>();
  walkOps(module.kernel.body, (op) => {
    if (op.op === 'program_id') ranges.set(op.result.id, { first: 0, last: module.kernel.grid[op.axis]! - 1, step: 1 });
    if (op.op !== 'for') return;
    const r = loopRange(op);
    if (r) ranges.set(op.inductionVar.id, r);
  });
  return ranges;
}

/** Whether `e` is a multiple of `m` for every value in `ranges` (false where it uses a value without one). */
export function alwaysMultipleOf(e: AffineExpr, ranges: ValueRanges, m: number): boolean {
  return (
    e.constant % m === 0 &&
    e.terms.every((t) => {
      const r = ranges.get(t.value.id);
      return r !== undefined && (t.coeff * r.first) % m === 0 && (t.coeff * r.step) % m === 0;
    })
  );
}

/**
 * Whether the `extent` tile at `offsets` lies inside `shape` for every value in `ranges` (false where
 * an offset uses a value without a range) and, with `multipleOf`, its last offset is always a multiple
 * of it (a tile fetched by 16-byte words starts on a word).
 */
export function alwaysInside(offsets: readonly AffineExpr[], extent: readonly number[], shape: readonly number[], ranges: ValueRanges, multipleOf = 1): boolean {
  if (offsets.some((o) => o.terms.some((t) => !ranges.has(t.value.id)))) return false;
  const bounds = new Map([...ranges].map(([id, r]) => [id, [r.first, r.last] as const]));
  const inside = offsets.every((o, axis) => {
    const [lo, hi] = affineRange(o, bounds);
    return lo >= 0 && hi + extent[axis]! <= shape[axis]!;
  });
  return inside && alwaysMultipleOf(offsets[offsets.length - 1]!, ranges, multipleOf);
}
