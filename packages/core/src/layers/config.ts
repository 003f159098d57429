/**
 * What a tensor-parallel transformer layer is: its shape, its rank count and element type, checked
 * once, and the sizes every kernel of the layer derives from them (tiles included), in one place so
 * that the kernels' tensors line up from one step to the next.
 */
import { COLLECTIVE_PLANS, positiveInteger, UsageError, type GatherPlan, type ReductionPlan } from '../workloads/index.js';

export interface TpLayerConfig {
  /** Sequence length S: X is [S, H], its rows sharded over the ranks. */
  readonly seq: number;
  /** Hidden size H = heads · headDim. */
  readonly hidden: number;
  readonly heads: number;
  readonly headDim: number;
  /** FFN size F: each rank holds F/R columns of gate and of up, F/R rows of down. */
  readonly ffn: number;
  readonly ranks: number;
  /**
   * f32: every tensor f32. f16: X, the weights and the GEMMs' inputs f16; the GEMMs accumulate and
   * write f32 (as `gemmKernel` does), and the local kernels compute in f32, casting where they load
   * and store f16.
   */
  readonly dtype: 'f32' | 'f16';
  /** RMSNorm's ε (default 1e-6). */
  readonly eps?: number;
  /** How the all-gathers move X's rows (default ring). */
  readonly gather?: GatherPlan;
  /** How the reduce-scatters sum the partial outputs (default one-shot). */
  readonly reduction?: ReductionPlan;
  /** Each rank's shard moves as this many chunks in every collective (default 1). */
  readonly chunksPerRank?: number;
  /**
   * The attention kernel's tile (default: on SIMT 16 query rows, KV blocks and Q·Kᵀ slices of
   * min(32, d), within TP_ATTENTION_WORKGROUP_BYTES, which every adapter offers; on subgroup
   * matrices TP_ATTENTION_TENSOR_CORE_TILE). A tile given here serves both paths and may stage up
   * to TP_ATTENTION_MAX_WORKGROUP_BYTES (an H100's or H200's 48 KiB; lavapipe offers 32 KiB) on one
   * of them at least; the other is not taken where it does not fit.
   */
  readonly attention?: AttentionTile;
}

/** Query rows per tile (a divisor of S), KV rows per step and Q·Kᵀ's slice width (divisors of headDim). */
export interface AttentionTile {
  readonly queryBlock: number;
  readonly kvBlock: number;
  readonly sliceD: number;
}

/** Workgroup memory the attention kernel may stage (lavapipe offers 32 KiB; the rest is left to signalling). */
export const TP_ATTENTION_WORKGROUP_BYTES = 28 * 1024;
/** Workgroup memory a tile given in the config may stage: 48 KiB (H100, H200) less 1 KiB for the kernel's own words. */
export const TP_ATTENTION_MAX_WORKGROUP_BYTES = 47 * 1024;

/**
 * The tile attention on subgroup matrices takes unless the config gives one: 64 query rows (the SIMT
 * path's fastest, 64x32x16 on an H200), KV blocks of 32 (a [64, 32] product is 8 matrices of 16x16,
 * one for each of the 256 invocations' 8 subgroups) and Q·Kᵀ in slices of 64 (two products a block
 * at d = 128, not 8), 41 KiB staged (`tpAttentionMatrixBytes`). The fastest of eight tiles timed
 * alone at 8 ranks on an H200: 12.8 ms, against 14.1 for 64x32x32 and 14.9 for 64x32x16
 * (benchmarks/results/tp-layer-2026-11-28b/attention-sweep.jsonl).
 */
export const TP_ATTENTION_TENSOR_CORE_TILE: AttentionTile = { queryBlock: 64, kvBlock: 32, sliceD: 64 };

/** Sizes derived from a checked config: per-rank widths and the local kernels' tiles. */
export interface TpLayerShape extends Required<Omit<TpLayerConfig, 'attention'>> {
  /** Rows each rank owns: S/R. */
  readonly shard: number;
  /** Heads per rank, and their width H/R (Q, K and V each). */
  readonly localHeads: number;
  readonly localHidden: number;
  /** F/R: columns of gate (and of up) per rank. */
  readonly localFfn: number;
  /** Rows per tile of the row-wise kernels (RMSNorm, residual): a divisor of S/R, so a tile stays in its rank's rows. */
  readonly rowBlock: number;
  /** Columns per tile of the kernels over H columns (RMSNorm, residual). */
  readonly colBlock: number;
  /** Columns per tile of SiLU(gate)·up, over F/R columns. */
  readonly ffnBlock: number;
  /** Query rows per attention tile. */
  readonly queryBlock: number;
  /** KV rows per attention step, and the width of each piece of the output (headDim / kvBlock pieces). */
  readonly kvBlock: number;
  /** Width of the slices of headDim that Q·Kᵀ is accumulated over: all of it, or a divisor (a slice must not reach the next head). */
  readonly sliceD: number;
  /** The tile of attention on subgroup matrices (f16 only), or undefined where none fits: then attention stays SIMT. */
  readonly matrixAttention: AttentionTile | undefined;
  /** Whether the SIMT attention can take the tile (false only for a config tile that fits the matrix path alone). */
  readonly simtAttention: boolean;
}

const pow2AtMost = (x: number, cap: number): number => {
  let p = 1;
  while (p * 2 <= Math.min(x, cap)) p *= 2;
  return p;
};

/** The largest power of two up to `cap` that divides `n`. */
const pow2Dividing = (n: number, cap: number): number => {
  let p = pow2AtMost(cap, cap);
  while (n % p !== 0) p /= 2;
  return p;
};

/** Bytes of workgroup memory the attention kernel stages: Q and K slices, P, V's pieces, the row reductions' partials. */
export function tpAttentionWorkgroupBytes(s: Pick<TpLayerShape, 'headDim' | 'queryBlock' | 'kvBlock' | 'sliceD'>): number {
  const pieces = s.headDim / s.kvBlock;
  return 4 * (s.queryBlock * s.sliceD + s.kvBlock * s.sliceD + s.queryBlock * s.kvBlock + pieces * s.kvBlock * s.kvBlock + s.queryBlock * pow2Dividing(s.kvBlock, 16));
}

const paddedWords = (elements: number, perWord: number) => Math.ceil(elements / perWord) * perWord;

/**
 * Bytes of workgroup memory attention stages with its dots on subgroup matrices, as backends'
 * `matrixDotLayout` counts them: Q [bq, dk], Kᵀ (dk lines of bkv), P and V's pieces [·, bkv] in f16,
 * each line padded past a 16-byte word by 8 halves; the f32 product [bq, bkv]; the reductions'
 * partials; the ticket words.
 */
export function tpAttentionMatrixBytes(s: Pick<TpLayerShape, 'headDim'> & AttentionTile): number {
  const { headDim: d, queryBlock: bq, kvBlock: bkv, sliceD: dk } = s;
  const line = (length: number) => paddedWords(length, 8) + 8;
  const halves = bq * line(dk) + dk * line(bkv) + bq * line(bkv) + (d / bkv) * bkv * line(bkv);
  return 2 * halves + 4 * paddedWords(bq * bkv, 4) + 4 * paddedWords(bq * pow2Dividing(bkv, 16), 4) + 64;
}

/** Whether `tile` suits subgroup matrices of 16 (every side a multiple of 16) within the 47 KiB a config tile may stage. */
function fitsMatrices(tile: AttentionTile, headDim: number): boolean {
  return [tile.queryBlock, tile.kvBlock, tile.sliceD].every((x) => x % 16 === 0) && tpAttentionMatrixBytes({ headDim, ...tile }) <= TP_ATTENTION_MAX_WORKGROUP_BYTES;
}

/** `config` checked, with its derived sizes; throws `UsageError` naming the first constraint it breaks. */
export function tpLayerShape(config: TpLayerConfig): TpLayerShape {
  if (typeof config !== 'object' || config === null) throw new UsageError('tp-layer: config must be an object { seq, hidden, heads, headDim, ffn, ranks, dtype }');
  const { seq, hidden, heads, headDim, ffn, ranks, dtype } = config;
  positiveInteger('tp-layer: seq (S)', seq);
  positiveInteger('tp-layer: hidden (H)', hidden);
  positiveInteger('tp-layer: heads', heads);
  positiveInteger('tp-layer: headDim', headDim);
  positiveInteger('tp-layer: ffn (F)', ffn);
  positiveInteger('tp-layer: ranks (R)', ranks);
  if (dtype !== 'f32' && dtype !== 'f16') throw new UsageError(`tp-layer: dtype must be f32 or f16, got ${String(dtype)}`);
  if (hidden !== heads * headDim) throw new UsageError(`tp-layer: hidden (H = ${hidden}) must equal heads · headDim (${heads} · ${headDim} = ${heads * headDim})`);
  if (seq % ranks !== 0) throw new UsageError(`tp-layer: seq (S = ${seq}) must be divisible by ranks (R = ${ranks}): each rank owns S/R rows`);
  if (heads % ranks !== 0) throw new UsageError(`tp-layer: heads (${heads}) must be divisible by ranks (R = ${ranks}): each rank computes heads/R of them`);
  if (ffn % ranks !== 0) throw new UsageError(`tp-layer: ffn (F = ${ffn}) must be divisible by ranks (R = ${ranks}): each rank holds F/R columns of gate and up`);
  const eps = config.eps ?? 1e-6;
  if (!(Number.isFinite(eps) && eps > 0)) throw new UsageError(`tp-layer: eps must be a positive number, got ${eps}`);
  const gather = config.gather ?? 'ring';
  const reduction = config.reduction ?? 'one-shot';
  if (!COLLECTIVE_PLANS.includes(gather)) throw new UsageError(`tp-layer: gather must be 'ring' or 'one-shot', got ${String(gather)}`);
  if (!COLLECTIVE_PLANS.includes(reduction)) throw new UsageError(`tp-layer: reduction must be 'ring' or 'one-shot', got ${String(reduction)}`);
  const chunksPerRank = config.chunksPerRank ?? 1;
  positiveInteger('tp-layer: chunksPerRank', chunksPerRank);

  const shard = seq / ranks;
  // The attention tile's score and output pieces share the register tile [queryBlock, kvBlock].
  const kvBlock = pow2Dividing(headDim, 32);
  const tile = config.attention ?? { queryBlock: 16, kvBlock, sliceD: headDim <= 32 ? headDim : kvBlock };
  if (config.attention) checkAttentionTile(config.attention, seq, headDim);
  const shape: TpLayerShape = {
    seq, hidden, heads, headDim, ffn, ranks, dtype, eps, gather, reduction, chunksPerRank,
    shard,
    localHeads: heads / ranks,
    localHidden: hidden / ranks,
    localFfn: ffn / ranks,
    rowBlock: pow2Dividing(shard, 16),
    colBlock: Math.max(4, pow2AtMost(hidden, 64)),
    ffnBlock: Math.max(4, pow2AtMost(ffn / ranks, 64)),
    queryBlock: tile.queryBlock,
    kvBlock: tile.kvBlock,
    sliceD: tile.sliceD,
    matrixAttention: undefined,
    simtAttention: true,
  };
  const bytes = tpAttentionWorkgroupBytes(shape);
  const tensorCoreTile = config.attention ?? TP_ATTENTION_TENSOR_CORE_TILE;
  const divides = seq % tensorCoreTile.queryBlock === 0 && headDim % tensorCoreTile.kvBlock === 0 && headDim % tensorCoreTile.sliceD === 0;
  const matrixAttention = dtype === 'f16' && divides && fitsMatrices(tensorCoreTile, headDim) ? tensorCoreTile : undefined;
  if (config.attention && bytes > TP_ATTENTION_MAX_WORKGROUP_BYTES && matrixAttention) return { ...shape, matrixAttention, simtAttention: false };
  if (config.attention && bytes > TP_ATTENTION_MAX_WORKGROUP_BYTES) {
    const { queryBlock: q, kvBlock: k, sliceD: d } = config.attention;
    const onMatrices = dtype === 'f16' ? ` (${tpAttentionMatrixBytes({ headDim, ...config.attention })} on subgroup matrices)` : '';
    throw new UsageError(`tp-layer: attention tile ${q}x${k}x${d} stages ${bytes} bytes of workgroup memory${onMatrices}, more than ${TP_ATTENTION_MAX_WORKGROUP_BYTES}`);
  }
  if (!config.attention && bytes > TP_ATTENTION_WORKGROUP_BYTES) {
    throw new UsageError(`tp-layer: headDim ${headDim} makes the attention kernel stage ${bytes} bytes of workgroup memory, more than ${TP_ATTENTION_WORKGROUP_BYTES}`);
  }
  if (seq % shape.queryBlock !== 0) throw new UsageError(`tp-layer: seq (S = ${seq}) must be a multiple of the attention's ${shape.queryBlock} query rows per tile`);
  return { ...shape, matrixAttention };
}

/** A tile from the config: powers of two, queryBlock dividing S, kvBlock and sliceD dividing headDim. */
function checkAttentionTile(t: AttentionTile, seq: number, headDim: number): void {
  if (typeof t !== 'object' || t === null) throw new UsageError('tp-layer: attention must be an object { queryBlock, kvBlock, sliceD }');
  for (const key of ['queryBlock', 'kvBlock', 'sliceD'] as const) {
    const v = t[key];
    if (!(Number.isInteger(v) && v >= 1 && (v & (v - 1)) === 0)) throw new UsageError(`tp-layer: attention.${key} must be a power of two, got ${String(v)}`);
  }
  if (seq % t.queryBlock !== 0) throw new UsageError(`tp-layer: attention.queryBlock (${t.queryBlock}) must divide seq (S = ${seq})`);
  if (headDim % t.kvBlock !== 0) throw new UsageError(`tp-layer: attention.kvBlock (${t.kvBlock}) must divide headDim (${headDim}): the output is kept in headDim / kvBlock pieces`);
  if (headDim % t.sliceD !== 0) throw new UsageError(`tp-layer: attention.sliceD (${t.sliceD}) must divide headDim (${headDim}): a slice must not reach the next head`);
}
