/**
 * The tensor-parallel layer on the CPU, in float64: per-rank inputs in (as `tpLayerInputs` makes
 * them, or a user's), each rank's S/R rows of the output out. It computes what the ten steps compute
 * (RMSNorm with the owner's γ, the heads of each rank, sums over ranks for the reduce-scatters), in
 * exact arithmetic up to float64 rounding; f16 inputs are read as the GPU reads them (rounded to the
 * nearest half), but nothing in between is rounded to f16.
 */
import { fromHalfBits, toHalfBits } from '../api/half.js';
import { UsageError } from '../workloads/index.js';
import { tpLayerShape, type TpLayerConfig, type TpLayerShape } from './config.js';
import type { TpLayerInputs } from './tp-layer.js';

/** One rank's array as the GPU reads it, in float64. */
function values(s: TpLayerShape, name: string, rank: number, array: Float32Array | Uint16Array | undefined, sizes: readonly number[]): Float64Array {
  if (!(array instanceof Float32Array || array instanceof Uint16Array)) throw new UsageError(`tp-layer reference: input ${name}, rank ${rank}: expected a Float32Array`);
  if (!sizes.includes(array.length)) throw new UsageError(`tp-layer reference: input ${name}, rank ${rank}: expected ${sizes.join(' or ')} elements, found ${array.length}`);
  const f32 = array instanceof Uint16Array ? fromHalfBits(array) : s.dtype === 'f16' ? fromHalfBits(toHalfBits(array)) : array;
  return Float64Array.from(f32);
}

/** C [m, n] = A [m, k] · B [k, n]. */
function matmul(a: Float64Array, b: Float64Array, m: number, k: number, n: number): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p]!;
      if (x === 0) continue;
      for (let j = 0; j < n; j++) c[i * n + j]! += x * b[p * n + j]!;
    }
  }
  return c;
}

/** Row i of X [S, H] normalised with γ of the rank that owns row i. */
function rmsNorm(s: TpLayerShape, x: Float64Array, gammas: readonly Float64Array[]): Float64Array {
  const { seq: S, hidden: H, shard } = s;
  const y = new Float64Array(S * H);
  for (let i = 0; i < S; i++) {
    let sum = 0;
    for (let c = 0; c < H; c++) sum += x[i * H + c]! ** 2;
    const inv = 1 / Math.sqrt(sum / H + s.eps);
    const gamma = gammas[Math.floor(i / shard)]!;
    for (let c = 0; c < H; c++) y[i * H + c] = x[i * H + c]! * inv * gamma[c]!;
  }
  return y;
}

/** Causal attention over one rank's heads: QKV [S, 3·H/R] → O [S, H/R]. */
function attention(s: TpLayerShape, qkv: Float64Array): Float64Array {
  const { seq: S, headDim: d, localHeads, localHidden: w } = s;
  const o = new Float64Array(S * w);
  const scores = new Float64Array(S);
  const scale = 1 / Math.sqrt(d);
  for (let h = 0; h < localHeads; h++) {
    for (let i = 0; i < S; i++) {
      let max = -Infinity;
      for (let j = 0; j <= i; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += qkv[i * 3 * w + h * d + c]! * qkv[j * 3 * w + w + h * d + c]!;
        scores[j] = dot * scale;
        max = Math.max(max, scores[j]!);
      }
      let sum = 0;
      for (let j = 0; j <= i; j++) sum += scores[j] = Math.exp(scores[j]! - max);
      for (let c = 0; c < d; c++) {
        let acc = 0;
        for (let j = 0; j <= i; j++) acc += scores[j]! * qkv[j * 3 * w + 2 * w + h * d + c]!;
        o[i * w + h * d + c] = acc / sum;
      }
    }
  }
  return o;
}

const silu = (x: number) => x / (1 + Math.exp(-x));

/** Each rank's S/R rows of the layer's output, [S/R, H] row-major, in float64. */
export function tpLayerReference(config: TpLayerConfig, inputs: TpLayerInputs): Float64Array[] {
  const s = tpLayerShape(config);
  const { seq: S, hidden: H, ranks: R, shard, localHidden: Hr, localFfn: Fr } = s;
  const perRank = (name: keyof TpLayerInputs, sizes: readonly number[]) => {
    const arrays = inputs[name];
    if (!Array.isArray(arrays) || arrays.length !== R) throw new UsageError(`tp-layer reference: input ${name}: expected one array for each of ${R} ranks`);
    return arrays.map((a, rank) => values(s, name, rank, a, sizes));
  };
  // X: each rank's rows, from its shard or from its rows of a whole copy.
  const x = new Float64Array(S * H);
  perRank('x', [shard * H, S * H]).forEach((a, r) => x.set(a.length === shard * H ? a : a.subarray(r * shard * H, (r + 1) * shard * H), r * shard * H));
  const [gamma1, gamma2] = [perRank('gamma1', [H]), perRank('gamma2', [H])];
  const [wqkv, wo, wgu, wd] = [perRank('wqkv', [H * 3 * Hr]), perRank('wo', [Hr * H]), perRank('wgu', [H * 2 * Fr]), perRank('wd', [Fr * H])];

  const sumOverRanks = (partial: (r: number) => Float64Array) => {
    const sum = new Float64Array(S * H);
    for (let r = 0; r < R; r++) partial(r).forEach((v, i) => (sum[i]! += v));
    return sum;
  };
  const xn = rmsNorm(s, x, gamma1);
  const y = sumOverRanks((r) => matmul(attention(s, matmul(xn, wqkv[r]!, S, H, 3 * Hr)), wo[r]!, S, Hr, H));
  const x1 = x.map((v, i) => v + y[i]!);
  const x1n = rmsNorm(s, x1, gamma2);
  const y2 = sumOverRanks((r) => {
    const gu = matmul(x1n, wgu[r]!, S, H, 2 * Fr);
    const a = new Float64Array(S * Fr);
    for (let i = 0; i < S; i++) for (let c = 0; c < Fr; c++) a[i * Fr + c] = silu(gu[i * 2 * Fr + c]!) * gu[i * 2 * Fr + Fr + c]!;
    return matmul(a, wd[r]!, S, Fr, H);
  });
  const out = x1.map((v, i) => v + y2[i]!);
  return Array.from({ length: R }, (_, r) => out.slice(r * shard * H, (r + 1) * shard * H));
}
