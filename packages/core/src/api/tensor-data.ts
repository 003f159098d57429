/**
 * Each rank's array of a tensor, checked against its spec and packed into the layout a fused kernel
 * binds: every rank's whole copy back to back, f32 or half bits.
 */
import { fromHalfBits, toHalfBits } from './half.js';
import { forEachRun } from './row-major.js';
import { TensorInputError } from './errors.js';
import { boxElements, elementsOf, formatDistribution, formatShape, ownedRegion, type TensorSpec } from './tensor-spec.js';

/**
 * One array per rank: its whole copy (every element of the shape), or, for a sharded tensor, the
 * block it owns (row-major). f32 tensors take Float32Array; f16 tensors Float32Array (rounded to the
 * nearest half) or Uint16Array (half bits as they are). Under an MPI job, a rank another process
 * runs may be left undefined (its copy here only receives chunks).
 */
export type RankArrays = readonly (Float32Array | Uint16Array | undefined)[];

/** What a new tensor holds: each rank's array, or one value everywhere (asked for, never assumed). */
export type TensorInit = RankArrays | { readonly fill: number };

const typeName = (x: unknown): string => (x === null ? 'null' : typeof x === 'object' ? (x.constructor?.name ?? 'object') : typeof x);

/** What each rank's array may hold, for messages. */
function expectedCounts(spec: TensorSpec, rank: number): string {
  const whole = `${elementsOf(spec)} elements (its whole copy, ${formatShape(spec.shape)})`;
  if (spec.distribution.kind !== 'sharded') return whole;
  const own = ownedRegion(spec, rank);
  return `${whole} or ${boxElements(own)} (the shard it owns, ${formatShape(own.hi.map((h, i) => h - own.lo[i]!))}: ${formatDistribution(spec.distribution)})`;
}

/**
 * Throws a TensorInputError unless `data` holds one fitting array per rank of `spec`; with `here`
 * (the ranks this process of an MPI job runs), the others' may be undefined.
 */
export function checkRankArrays(spec: TensorSpec, data: unknown, here?: ReadonlySet<number>): asserts data is RankArrays {
  if (!Array.isArray(data)) throw new TensorInputError(spec.name, undefined, `an array of ${spec.ranks} per-rank arrays`, typeName(data));
  if (data.length !== spec.ranks) throw new TensorInputError(spec.name, undefined, `data for ${spec.ranks} ranks (one array each)`, `${data.length}`);
  data.forEach((array: unknown, rank) => {
    if (array === undefined && here && !here.has(rank)) return;
    const types = spec.dtype === 'f16' ? ['Float32Array', 'Uint16Array'] : ['Float32Array'];
    const ok = array instanceof Float32Array || (spec.dtype === 'f16' && array instanceof Uint16Array);
    if (!ok) throw new TensorInputError(spec.name, rank, `${types.join(' or ')} for an ${spec.dtype} tensor`, typeName(array));
    const length = (array as Float32Array).length;
    const shard = spec.distribution.kind === 'sharded' ? boxElements(ownedRegion(spec, rank)) : -1;
    if (length !== elementsOf(spec) && length !== shard) throw new TensorInputError(spec.name, rank, expectedCounts(spec, rank), `${length} elements`);
  });
}

/** `data` (checked) as the kernel's buffer holds it: every rank's whole copy back to back. */
export function packRankArrays(spec: TensorSpec, data: RankArrays): Float32Array | Uint16Array {
  const elements = elementsOf(spec);
  const f16 = spec.dtype === 'f16';
  const out = f16 ? new Uint16Array(elements * spec.ranks) : new Float32Array(elements * spec.ranks);
  data.forEach((array, rank) => {
    if (array === undefined) return;
    const values = f16 && array instanceof Float32Array ? toHalfBits(array) : array;
    const copy = out.subarray(rank * elements, (rank + 1) * elements);
    if (values.length === elements) return copy.set(values);
    // A shard: its rows go to the block the rank owns.
    let at = 0;
    forEachRun(spec.shape, ownedRegion(spec, rank), (offset, length) => {
      copy.set(values.subarray(at, at + length), offset);
      at += length;
    });
  });
  return out;
}

/** What a tensor is made with or set to, checked against `spec` and packed (`here` as in checkRankArrays). */
export function initialData(spec: TensorSpec, init: TensorInit, here?: ReadonlySet<number>): Float32Array | Uint16Array {
  if (!Array.isArray(init) && typeof init === 'object' && init !== null && 'fill' in init) return filled(spec, init.fill);
  checkRankArrays(spec, init, here);
  return packRankArrays(spec, init);
}

/** Every rank's copy filled with `value`. */
function filled(spec: TensorSpec, value: number): Float32Array | Uint16Array {
  if (!Number.isFinite(value)) throw new TensorInputError(spec.name, undefined, 'a finite fill value', String(value));
  const all = new Float32Array(elementsOf(spec) * spec.ranks).fill(value);
  return spec.dtype === 'f16' ? toHalfBits(all) : all;
}

/** Rank `rank`'s whole copy out of a buffer as read back, as f32 (f16 converted exactly). */
export function unpackRank(spec: TensorSpec, buffer: ArrayBuffer, rank: number): Float32Array {
  return rankCopy(spec.dtype, buffer, elementsOf(spec), rank);
}

/** The `rank`-th run of `elements` values of a buffer holding every rank's copy back to back, as f32. */
export function rankCopy(dtype: 'f32' | 'f16', buffer: ArrayBuffer, elements: number, rank: number): Float32Array {
  if (dtype === 'f16') return fromHalfBits(new Uint16Array(buffer, rank * elements * 2, elements));
  return new Float32Array(buffer, rank * elements * 4, elements).slice();
}
