/**
 * Ring attention (`ring-attn`): context-parallel attention over a sequence of S tokens split into R
 * shards of S/R. Rank r holds its queries Q_r [S/R, D] and its shard of the keys and values K, V
 * [S, D] (sharded on rows); a ring all-gather moves every K and V shard around the ring, and each rank
 * computes O_r = softmax(Q_r·Kᵀ/√D)·V over the whole sequence with an online softmax (a running row
 * max m, row sum l and an accumulator rescaled by exp(m_old − m_new)), so that a KV block is used as
 * soon as it has arrived.
 *
 * Tile order cannot help here: every query tile reads every KV block, so `reorder-tiles` has nothing
 * to choose (it orders tiles, not a loop's iterations). What overlaps the ring is the order of the KV
 * loop, which the kernel writes itself: on rank r shard r is there at launch and shard r − 1 − s
 * arrives at step s, so shards come in descending order, wrapping around. The loop walks the rows
 * from S down to 0: after shard R − 1 (step r) every block it reads next has arrived, or is the next
 * to arrive. The exact ring order needs the wrap, i.e. two loops (from the end of shard r down to 0,
 * then from S down to the end of shard r, bounds in `rank_id`), which doubles the staged workgroup
 * memory (each load has its own array: 52 KiB at the default shape, over lavapipe's 32 KiB) and the
 * shader code lavapipe compiles (measured 8 s to 42 s at a 32x16 tile). Barrier insertion guards each
 * block's wait by the iterations that read it, so a tile waits for a block only just before it.
 *
 * In f16 (ring-attn-f16.ts) Q, K and V are f16, the softmax stays f32 and P is cast to f16 for P·V;
 * on an adapter with subgroup matrices both products run on them (backends wgsl/matrix-dots.ts).
 */
import { add, buildModule, dtypeBytes, mul, ownedBox, replicated, sharded, type AffineExpr, type Box, type ChunkPlan, type Module, type TileValue } from '@syncopate/ir';
import { fromHalfBits, toHalfBits } from '../api/half.js';
import { attentionReferenceF16 } from './ring-attn-f16.js';
import { gatherTemplate } from './gather.js';
import { checkRank, positiveInteger, UsageError } from './errors.js';
import { fillRegion, tensorOf } from './tensor.js';
import { mulberry32, streamSeed } from './random.js';
import type { BlockShape, TensorData, Workload, WorkloadOptions } from './types.js';

/** Query rows per tile the workload accepts. */
export const ATTENTION_BLOCK_M = [16, 32, 64] as const;
/** The largest head dimension: V's [D, D] block alone takes D²·4 bytes of workgroup memory. */
export const MAX_HEAD_DIM = 64;
/**
 * Workgroup memory the attention kernel may stage: lavapipe offers 32 KiB (an H100 48 KiB); the rest
 * is left to the signalling state (a ticket, the queue of parts to publish).
 */
export const ATTENTION_WORKGROUP_BYTES = 28 * 1024;

/**
 * Largest |O − reference| that verifies. Outputs are convex combinations of V's values in [−1, 1], so
 * errors are absolute. f32 with WGSL's `exp` (a few ulp) measures about 1e-7 at the test shapes; a
 * KV block left out moves outputs by about 1e-2 (a test checks), so 1e-4 passes rounding with room
 * to spare and still catches a block read before it arrived. f16 is checked against a reference that
 * rounds P to f16 where the kernel does (ring-attn-f16.ts), so what differs is the f32 arithmetic and
 * the few P that round the other way, each moving O by at most 2^-10 of its weight p/l (l is about
 * 0.9·S at these inputs): measured 9.8e-6 on lavapipe (S 64), 3.3e-7 to 5.1e-6 on the H100's tensor
 * cores (benchmarks/results/ring-attn-f16-2026-11-28), so the same bound holds.
 */
export const RING_ATTN_TOLERANCE = 1e-4;

export interface RingAttentionShape {
  /** Sequence length S, split evenly over the ranks. */
  readonly seq: number;
  /** Head dimension D. */
  readonly headDim: number;
  readonly ranks: number;
  /** Query rows per tile. */
  readonly blockM: number;
  /** Width of the slices of D that Q·Kᵀ is accumulated over (bounds the staged Q and K tiles). */
  readonly sliceD: number;
  /** Element type of Q, K, V and of P in P·V (default f32); the softmax and O are f32. */
  readonly dtype?: 'f32' | 'f16';
}

/**
 * The kernel's staged workgroup memory in bytes on the SIMT path: a Q and a K slice, P and V (both
 * [D, D]-wide: the KV block is D rows, see `ringAttentionKernel`) in the input type, and the f32
 * partials of the row reductions.
 */
export function attentionWorkgroupBytes(s: Pick<RingAttentionShape, 'headDim' | 'blockM' | 'sliceD' | 'dtype'>): number {
  const d = s.headDim;
  let threadsAlongD = 16;
  while (d % threadsAlongD !== 0) threadsAlongD /= 2;
  return dtypeBytes(s.dtype ?? 'f32') * (s.blockM * s.sliceD + d * s.sliceD + s.blockM * d + d * d) + 4 * s.blockM * threadsAlongD;
}

/** Workgroup memory of the H100 (`maxComputeWorkgroupStorageSize`), which the tensor-core block is sized for. */
const TENSOR_CORE_WORKGROUP_BYTES = 48 * 1024;

/**
 * The tile for f16 on subgroup matrices: one slice of D (Q·Kᵀ in one product, no loop of partial
 * products through workgroup memory), and the most query rows, up to the shard, whose staged tiles
 * (rows padded by 8 halves), f32 product and reduction partials fit the H100's 48 KiB: 32 at D = 64.
 * Undefined in f32, or where D is not whole 16-wide matrices.
 */
export function ringAttentionTensorCoreBlock(o: WorkloadOptions): BlockShape | undefined {
  const D = o.shape.n;
  if (o.dtype !== 'f16' || D % 16 !== 0 || D > MAX_HEAD_DIM || o.shape.m % o.ranks !== 0) return undefined;
  const shard = o.shape.m / o.ranks;
  const padded = (rows: number) => rows * (D + 8) * 2;
  const fits = (bm: number) =>
    attentionWorkgroupBytes({ headDim: D, blockM: bm, sliceD: D, dtype: 'f16' }) <= ATTENTION_WORKGROUP_BYTES &&
    2 * padded(bm) + 2 * padded(D) + 4 * bm * D + 4 * bm * 16 + 64 <= TENSOR_CORE_WORKGROUP_BYTES;
  const blockM = [...ATTENTION_BLOCK_M].reverse().find((b) => b <= Math.max(16, shard) && fits(b));
  return blockM === undefined ? undefined : { m: blockM, n: D, k: D };
}

/**
 * The local kernel of one rank: query tile `pm` of its S/R queries against all S keys. The KV block
 * is D rows, so that the score tile [BM, D] and the output tile [BM, D] share the WGSL backend's one
 * register layout. Per block: S = (Q·Kᵀ)·(1/√D) accumulated over slices of D, then
 * m' = max(m, rowmax S), P = exp(S − m'), α = exp(m − m'), l' = α·l + rowsum P, acc' = α·acc + P·V.
 */
export function ringAttentionKernel(s: RingAttentionShape): Module {
  const { seq: S, headDim: D, ranks: R, blockM: bm, sliceD: dk } = s;
  const dtype = s.dtype ?? 'f32';
  const shard = S / R;
  const kv = D;
  return buildModule('ring_attn', { ranks: R }, (mb) => {
    // Q and O are rank-local: each rank holds its own queries and outputs.
    const Q = mb.tensor('Q', [shard, D], dtype, replicated());
    const K = mb.tensor('K', [S, D], dtype, sharded(0));
    const V = mb.tensor('V', [S, D], dtype, sharded(0));
    const O = mb.tensor('O', [shard, D], 'f32', replicated());
    mb.kernel('attention', [Math.ceil(shard / bm)], (kb) => {
      const pm = kb.programId(0, 'pm');
      const scale = kb.constant(1 / Math.sqrt(D), [1, 1], 'f32', 'scale');
      type Matrix = TileValue<readonly [number, number], 'f32'>;
      type Carried = readonly [Matrix, Matrix, Matrix];

      // One KV block, at `row`: the online-softmax update of (m, l, acc).
      const block = (row: AffineExpr, [m, l, acc]: Carried): Carried => {
        // One slice covering D needs no loop (and so no second copy of its loads, to fetch ahead).
        const [qk] =
          dk >= D
            ? [kb.dotTransposeB(kb.load(Q, [mul(pm, bm), 0], [bm, D], 'q'), kb.load(K, [row, 0], [kv, D], 'k'), undefined, 'qk')]
            : kb.for(0, D, dk, [kb.zeros([bm, kv], 'f32', 's0')], (d, [sAcc]) => {
                const q = kb.load(Q, [mul(pm, bm), d], [bm, dk], 'q');
                const k = kb.load(K, [row, d], [kv, dk], 'k');
                return [kb.dotTransposeB(q, k, sAcc as Matrix, 'qk')] as const;
              }, 'd');
        const scores = kb.binary('mul', qk, scale, 'scores');
        const mNew = kb.binary('max', m, kb.reduce('max', scores, 1, 'row_max'), 'm_new');
        const p = kb.unary('exp', kb.binary('sub', scores, mNew, 'shifted'), 'p');
        const alpha = kb.unary('exp', kb.binary('sub', m, mNew, 'm_delta'), 'alpha');
        const lNew = kb.add(kb.mulTile(l, alpha, 'l_scaled'), kb.reduce('sum', p, 1, 'row_sum'), 'l_new');
        const v = kb.load(V, [row, 0], [kv, D], 'v');
        // P·V multiplies in the input type: P rounded to f16 where V is f16.
        const pIn = dtype === 'f32' ? p : kb.cast(p, dtype, 'p_in');
        const accNew = kb.dot(pIn, v, kb.mulTile(acc, alpha, 'acc_scaled'), 'pv');
        return [mNew, lNew, accNew];
      };

      const init: Carried = [kb.constant(-Infinity, [bm, 1], 'f32', 'm'), kb.zeros([bm, 1], 'f32', 'l'), kb.zeros([bm, D], 'f32', 'acc')];
      // KV blocks from the end of the sequence down to row 0: the order in which the ring delivers them.
      const [, l, acc] = kb.for(0, S, kv, init, (j, c) => block(add(S - kv, mul(j, -1)), c), 'j');
      kb.store(O, [mul(pm, bm), 0], kb.binary('div', acc, l, 'o'));
    });
  });
}


/** The kernel's shape for the options; throws `UsageError` naming the first problem. */
export function ringAttentionShape(o: WorkloadOptions): RingAttentionShape {
  positiveInteger('ranks', o.ranks);
  positiveInteger('ring-attn: M (the sequence length S)', o.shape.m);
  positiveInteger('ring-attn: N (the head dimension D)', o.shape.n);
  if (o.dtype !== 'f32' && o.dtype !== 'f16') throw new UsageError(`ring-attn: dtype must be f32 or f16 (the online softmax runs in f32 either way), got ${String(o.dtype)}`);
  const dtype = o.dtype;
  if (o.chunksPerRank !== undefined) positiveInteger('chunksPerRank', o.chunksPerRank);
  const { m: S, n: D } = o.shape;
  if (D > MAX_HEAD_DIM) throw new UsageError(`ring-attn: head dimension D = ${D} is larger than ${MAX_HEAD_DIM}: a [D, D] block of V would not fit in workgroup memory`);
  if (S % o.ranks !== 0) throw new UsageError(`ring-attn: sequence length S = ${S} must split evenly over the ${o.ranks} ranks`);
  const shard = S / o.ranks;
  if (S % D !== 0) {
    throw new UsageError(
      `ring-attn: sequence length S = ${S} must be a multiple of the KV block, D = ${D} rows: ` +
        `a partial block would need its missing keys masked out of the softmax`,
    );
  }
  const sliceD = o.block?.k ?? Math.min(16, D);
  const fits = (blockM: number) => attentionWorkgroupBytes({ headDim: D, blockM, sliceD, dtype }) <= ATTENTION_WORKGROUP_BYTES;
  const blockM = o.block?.m ?? [...ATTENTION_BLOCK_M].reverse().find((b) => b <= Math.max(16, shard) && fits(b)) ?? 16;
  if (o.block) {
    const { m, n, k } = o.block;
    if (!(ATTENTION_BLOCK_M as readonly number[]).includes(m)) throw new UsageError(`ring-attn: block m (query rows per tile) must be one of ${ATTENTION_BLOCK_M.join(', ')}, got ${m}`);
    if (n !== D) throw new UsageError(`ring-attn: block n (KV rows per step) must equal the head dimension D = ${D}, got ${n}`);
    if (!Number.isInteger(k) || k < 1 || k > D) throw new UsageError(`ring-attn: block k (the width of Q·Kᵀ's slices of D) must be an integer in [1, ${D}], got ${k}`);
  }
  const bytes = attentionWorkgroupBytes({ headDim: D, blockM, sliceD, dtype });
  if (bytes > ATTENTION_WORKGROUP_BYTES) {
    throw new UsageError(`ring-attn: block ${blockM}x${D}x${sliceD} stages ${bytes} bytes of workgroup memory, more than ${ATTENTION_WORKGROUP_BYTES}; use a smaller block m or k`);
  }
  return { seq: S, headDim: D, ranks: o.ranks, blockM, sliceD, dtype };
}

/** The block `ringAttentionShape` chooses, as a `BlockShape` (m query rows, n KV rows, k slice of D). */
export function ringAttentionBlock(o: WorkloadOptions): BlockShape {
  const s = ringAttentionShape(o);
  return { m: s.blockM, n: s.headDim, k: s.sliceD };
}

/** Uniform in [−1, 1): keeps scores within about ±1, where the softmax is well-conditioned; rounded to halves for f16. */
function uniformTensor(o: WorkloadOptions, seed: number, name: string, rows: number, cols: number, region: (rank: number) => Box): Float32Array[] {
  return Array.from({ length: o.ranks }, (_, rank) => {
    const data = new Float32Array(rows * cols);
    const next = mulberry32(streamSeed(seed, name, rank));
    fillRegion(data, [rows, cols], region(rank), () => 2 * next() - 1);
    return o.dtype === 'f16' ? fromHalfBits(toHalfBits(data)) : data;
  });
}


/**
 * softmax(q·Kᵀ·scale)·V for every row of `q` [rows, D], in float64 with the max subtracted first:
 * the CPU reference (and, with rows that skip a KV block, the tests' wrong answer).
 */
export function attentionReference(q: Float32Array, k: Float64Array | Float32Array, v: Float64Array | Float32Array, rows: number, seq: number, d: number, keep: (j: number) => boolean = () => true): Float32Array {
  const out = new Float32Array(rows * d);
  const scores = new Float64Array(seq);
  const acc = new Float64Array(d);
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < rows; i++) {
    let max = -Infinity;
    for (let j = 0; j < seq; j++) {
      if (!keep(j)) continue;
      let s = 0;
      for (let c = 0; c < d; c++) s += q[i * d + c]! * k[j * d + c]!;
      scores[j] = s * scale;
      max = Math.max(max, scores[j]!);
    }
    acc.fill(0);
    let sum = 0;
    for (let j = 0; j < seq; j++) {
      if (!keep(j)) continue;
      const p = Math.exp(scores[j]! - max);
      sum += p;
      for (let c = 0; c < d; c++) acc[c]! += p * v[j * d + c]!;
    }
    for (let c = 0; c < d; c++) out[i * d + c] = acc[c]! / sum;
  }
  return out;
}

/** The whole of K or V: each shard's rows from the rank that owns it. */
export function gatherShards(shards: readonly Float32Array[], seq: number, d: number): Float64Array {
  const ranks = shards.length;
  const whole = new Float64Array(seq * d);
  shards.forEach((data, rank) => {
    const { lo, hi } = ownedBox([seq, d], sharded(0), ranks, rank);
    whole.set(data.subarray(lo[0]! * d, hi[0]! * d), lo[0]! * d);
  });
  return whole;
}

export const ringAttn: Workload = {
  name: 'ring-attn',
  description: 'Ring attention: O_r = softmax(Q_r·Kᵀ/√D)·V, K and V [S,D] sharded on rows and ring-all-gathered, online softmax; M = S (sequence), N = D (head dim), K unused',
  defaults: { m: 256, n: 64, k: 256 },
  defaultRanks: 4,
  outputs: ['O'],
  tensorCoreBlock: ringAttentionTensorCoreBlock,
  // f16 too: the reference rounds P where the kernel does (ring-attn-f16.ts; RING_ATTN_TOLERANCE says why it holds).
  tolerance: () => RING_ATTN_TOLERANCE,
  build(o): { kernel: Module; plan: ChunkPlan } {
    const s = ringAttentionShape(o);
    const plan = (name: string) =>
      gatherTemplate(o)({ ranks: o.ranks, tensor: { name, shape: [s.seq, s.headDim] }, axis: 0, chunksPerRank: o.chunksPerRank ?? 1 });
    const k = plan('K');
    const v = plan('V');
    return { kernel: ringAttentionKernel(s), plan: { name: `${k.name} + ${v.name}`, ranks: o.ranks, chunks: [...k.chunks, ...v.chunks] } };
  },
  inputs(o, seed) {
    const { seq: S, headDim: D, ranks } = ringAttentionShape(o);
    const shard = S / ranks;
    const own = (rank: number) => ownedBox([S, D], sharded(0), ranks, rank);
    const local: Box = { lo: [0, 0], hi: [shard, D] };
    return {
      Q: uniformTensor(o, seed, 'Q', shard, D, () => local),
      K: uniformTensor(o, seed, 'K', S, D, own),
      V: uniformTensor(o, seed, 'V', S, D, own),
      O: Array.from({ length: ranks }, () => new Float32Array(shard * D)),
    };
  },
  reference(o, inputs) {
    const { seq: S, headDim: D, ranks } = ringAttentionShape(o);
    const shard = S / ranks;
    const K = gatherShards(tensorOf(inputs, 'K', ranks, S * D), S, D);
    const V = gatherShards(tensorOf(inputs, 'V', ranks, S * D), S, D);
    const Q = tensorOf(inputs, 'Q', ranks, shard * D);
    if (o.dtype === 'f16') return { O: Q.map((q) => attentionReferenceF16(q, K, V, shard, S, D, D)) };
    return { O: Q.map((q) => attentionReference(q, K, V, shard, S, D)) };
  },
  checkedRegion(o, tensor, rank) {
    if (tensor !== 'O') throw new UsageError(`ring-attn: ${tensor} is not an output; the output is O`);
    checkRank(rank, o.ranks);
    const { seq, headDim, ranks } = ringAttentionShape(o);
    return { lo: [0, 0], hi: [seq / ranks, headDim] };
  },
};
