/**
 * Checking a tensor-parallel layer's output: each rank's own rows of the output against an expected
 * answer (the CPU reference, or another variant's output), as an error relative to the answer's size.
 */
import type { TpLayerShape } from './config.js';

/**
 * The largest |output − expected| a layer may show, relative to max |expected| (about 1.6 with
 * `tpLayerInputs`: X uniform in [−1, 1), every weight scaled by 1/√fan-in).
 *
 * f32: 1e-5. Each value passes through two RMSNorms, five GEMMs, a softmax and a SiLU; f32 rounds by
 * u = 6e-8 a step, a K-term sum by about √K·u, WGSL's exp and inverseSqrt by a few ulp. Measured at
 * S = 16, H = 32: 1.1e-7 to 1.8e-7. A step done wrong moves the output by far more (attention without
 * its causal mask: about 0.1).
 *
 * f16: 8·2⁻¹¹ ≈ 3.9e-3. Inputs are halves on both sides; what differs is what the GPU stores in f16
 * and the reference does not round: the output (2⁻¹¹ relative), X1 (added straight into the output)
 * and the three GEMM inputs Xn, O and SiLU·up (2⁻¹¹ each, carried through weights of unit norm):
 * about 5·2⁻¹¹ at worst. Measured at S = 16, H = 32: 5.4e-4 and 7.1e-4.
 *
 * Attention on subgroup matrices rounds four more things to f16 and keeps the bound: V and P (each
 * half an ulp, 2⁻¹¹ of itself: O moves by at most 2⁻¹¹·max |V| each, as rounding O does; l sums the
 * unrounded P), and Q and K, which move a score by at most 2·2⁻¹¹·Σ|q_c·k_c|/√d and O by about twice
 * that times max |V|: about 2⁻¹¹ each with these inputs (q and k entries of about 0.6, so
 * Σ|q_c·k_c|/√d ≈ 0.2·√d, whose rounding errors mostly cancel across a row of P). The float64
 * reference with every f16 store rounded as the GPU rounds it (P online, in the kernel's block
 * order) differs from this one by 0.29·2⁻¹¹ at S = 128, d = 64 and 0.28·2⁻¹¹ at S = 512, d = 128
 * (Q, K, V and P alone: 0.27·2⁻¹¹ and 0.24·2⁻¹¹), well inside 8·2⁻¹¹; the GPU's own check at
 * S = 512 is in benchmarks/results/tp-layer-2026-11-28b.
 */
export const TP_LAYER_TOLERANCE = { f32: 1e-5, f16: 8 * 2 ** -11 } as const;

/** Each rank's own S/R rows of the output, from the whole [S, H] copy each rank holds. */
export function ownRows(copies: readonly Float32Array[], shape: TpLayerShape): Float32Array[] {
  const rows = shape.shard * shape.hidden;
  return copies.map((copy, rank) => copy.subarray(rank * rows, (rank + 1) * rows));
}

/** `ownRows` of the ranks a process holds (`Tensor.readRanks`), by rank. */
export function ownRowsByRank(copies: ReadonlyMap<number, Float32Array>, shape: TpLayerShape): Map<number, Float32Array> {
  const rows = shape.shard * shape.hidden;
  return new Map([...copies].map(([rank, copy]) => [rank, copy.subarray(rank * rows, (rank + 1) * rows)]));
}

export interface LayerError {
  /** The largest |actual − expected|. */
  readonly maxAbs: number;
  /** The largest |expected|. */
  readonly scale: number;
  /** maxAbs / scale; NaN where any value is NaN. */
  readonly relative: number;
}

/** How far `actual` is from `expected`, rank by rank (each rank's own rows). */
export function layerError(actual: readonly ArrayLike<number>[], expected: readonly ArrayLike<number>[]): LayerError {
  if (actual.length !== expected.length) throw new RangeError(`layerError: ${actual.length} ranks against ${expected.length}`);
  let maxAbs = 0;
  let scale = 0;
  actual.forEach((got, rank) => {
    const want = expected[rank]!;
    if (got.length !== want.length) throw new RangeError(`layerError: rank ${rank} has ${got.length} values against ${want.length}`);
    for (let i = 0; i < got.length; i++) {
      const e = Math.abs(got[i]! - want[i]!);
      if (Number.isNaN(e) || e > maxAbs) maxAbs = e; // once NaN, it stays: e > NaN is false
      scale = Math.max(scale, Math.abs(want[i]!));
    }
  });
  return { maxAbs, scale, relative: Number.isNaN(maxAbs) ? NaN : maxAbs / scale };
}

/**
 * The error over every rank from the errors over disjoint sets of ranks (each process's own): the
 * largest maxAbs and the largest scale, NaN if any piece's is, as `layerError` over all the ranks at
 * once gives them; `relative` from the combined two. Exact: a maximum does not depend on grouping.
 */
export function combineLayerErrors(pieces: readonly LayerError[]): LayerError {
  if (pieces.length === 0) throw new RangeError('combineLayerErrors: no pieces');
  const largest = (xs: number[]) => (xs.some(Number.isNaN) ? NaN : Math.max(...xs));
  const maxAbs = largest(pieces.map((p) => p.maxAbs));
  const scale = largest(pieces.map((p) => p.scale));
  return { maxAbs, scale, relative: Number.isNaN(maxAbs) ? NaN : maxAbs / scale };
}
