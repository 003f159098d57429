/**
 * Causal attention over one rank's heads, rank-local: QKV [S, 3·H/R] is the QKV GEMM's output (Q's
 * columns for the rank's heads, then K's, then V's; head h at h·d within each), O [S, H/R] the
 * heads' outputs side by side, in the element type the output projection reads.
 *
 * One tile per (query block, head): the online softmax of `ring-attn` (a running row max m, row sum l,
 * and an accumulator rescaled by exp(m_old − m_new)), over the KV blocks up to the tile's last query
 * row. The builder has no comparison op, so the causal mask is data: a tensor MASK [bq, 2·bq + bkv]
 * (`causalMask`) whose element (i, c) is −1e30 where c − bq > i and 0 elsewhere, loaded at column
 * j − q0 + bq for the KV block at row j and queries from q0. That puts key j + c' against query
 * q0 + i at column c = j − q0 + bq + c', masked exactly when j + c' > q0 + i; columns left of the
 * tensor read as 0 (a block wholly before the diagonal is unmasked). Block 0 always holds key 0,
 * which every query sees, so m is finite after it and a fully masked row of a later block adds
 * exp(−1e30 − m) = 0.
 *
 * The score tile [bq, bkv] is the register tile, so the output, d wide, is kept as d/bkv pieces of
 * [bq, bkv], each with its own slice of V: a KV block narrower than d keeps V's staged tiles small.
 *
 * Operands in f16 (`operands: 'f16'`, the tensor-core path): QKV is f16 (`qkvHalfKernel` rounds the QKV
 * GEMM's f32 output), so Q·Kᵀ and P·V multiply halves; the softmax stays f32 and P is cast to f16
 * for P·V, as ring-attn f16 does. On an adapter with subgroup matrices both products then lower to
 * them inside the SIMT kernel (backends wgsl/matrix-dots.ts); the casts and reductions stay SIMT.
 *
 * Query tiles run last-first: tile pm covers queries from (S/bq − 1 − pm)·bq, so the tiles with the
 * most KV blocks take the first tickets and the short ones fill in at the end (causal work grows
 * with the query row; in row order the longest tiles started last and ran alone).
 */
import { add, buildModule, mul, type AffineExpr, type AffineLike, type DType, type Module, type TileValue } from '@syncopate/ir';

export interface CausalAttentionShape {
  readonly seq: number;
  /** Heads on this rank. */
  readonly localHeads: number;
  readonly headDim: number;
  readonly ranks: number;
  /** Query rows per tile; divides seq. */
  readonly queryBlock: number;
  /** KV rows per step; divides headDim. */
  readonly kvBlock: number;
  /** Width of Q·Kᵀ's slices of headDim: all of it, or a divisor. */
  readonly sliceD: number;
  /** Element type of O. */
  readonly dtype: DType;
  /** Element type of QKV and of P in P·V (default f32); the softmax is f32 either way. */
  readonly operands?: 'f32' | 'f16';
}

/** A masked score: far below any real one, yet finite (an adapter may assume no infinities). */
export const MASKED_SCORE = -1e30;

/** The mask tensor's shape: [bq, 2·bq + bkv]. */
export const causalMaskShape = (s: Pick<CausalAttentionShape, 'queryBlock' | 'kvBlock'>): [number, number] => [s.queryBlock, 2 * s.queryBlock + s.kvBlock];

/** The mask's values, row-major: MASKED_SCORE at (i, c) where c − bq > i, else 0. */
export function causalMask(s: Pick<CausalAttentionShape, 'queryBlock' | 'kvBlock'>): Float32Array {
  const [rows, cols] = causalMaskShape(s);
  const mask = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let c = 0; c < cols; c++) if (c - s.queryBlock > i) mask[i * cols + c] = MASKED_SCORE;
  return mask;
}

type Matrix = TileValue<readonly [number, number], 'f32'>;

/** Tensors `QKV` [S, 3·H/R] (`operands`), `MASK` (f32, `causalMaskShape`), `O` [S, H/R] (dtype). */
export function causalAttentionKernel(s: CausalAttentionShape, name = 'attention'): Module {
  const { seq: S, localHeads: nh, headDim: d, ranks: R, queryBlock: bq, kvBlock: bkv, sliceD: dk, dtype } = s;
  const width = nh * d;
  const pieces = d / bkv;
  const operands = s.operands ?? 'f32';
  return buildModule(name, { ranks: R }, (mb) => {
    const QKV = mb.tensor('QKV', [S, 3 * width], operands);
    const MASK = mb.tensor('MASK', causalMaskShape(s), 'f32');
    const O = mb.tensor('O', [S, width], dtype);
    const tiles = S / bq;
    mb.kernel(name, [tiles, nh], (kb) => {
      const pm = kb.programId(0, 'pm');
      const ph = kb.programId(1, 'ph');
      // Last query tile first (see above): q0 = (tiles − 1 − pm)·bq.
      const q0 = add(mul(pm, -bq), (tiles - 1) * bq);
      const col = (part: number, extra: AffineLike = 0): AffineExpr => add(add(mul(ph, d), part * width), extra);
      const scale = kb.constant(1 / Math.sqrt(d), [1, 1], 'f32', 'scale');

      // One KV block at row j: the online-softmax update of (m, l, acc pieces).
      const block = (j: AffineLike, [m, l, ...acc]: readonly Matrix[]): Matrix[] => {
        const [qk] =
          dk >= d
            ? [kb.dotTransposeB(kb.load(QKV, [q0, col(0)], [bq, d], 'q'), kb.load(QKV, [j, col(1)], [bkv, d], 'k'), undefined, 'qk')]
            : kb.for(0, d, dk, [kb.zeros([bq, bkv], 'f32', 's0')], (c, [sAcc]) => {
                const q = kb.load(QKV, [q0, col(0, c)], [bq, dk], 'q');
                const k = kb.load(QKV, [j, col(1, c)], [bkv, dk], 'k');
                return [kb.dotTransposeB(q, k, sAcc as Matrix, 'qk')] as const;
              }, 'dc');
        // Column j − q0 + bq.
        const mask = kb.load(MASK, [0, add(j, mul(pm, bq), (2 - tiles) * bq)], [bq, bkv], 'mask');
        const scores = kb.add(kb.mulTile(qk, scale, 'scaled'), mask, 'scores');
        const mNew = kb.binary('max', m!, kb.reduce('max', scores, 1, 'row_max'), 'm_new');
        const p = kb.unary('exp', kb.binary('sub', scores, mNew, 'shifted'), 'p');
        const alpha = kb.unary('exp', kb.binary('sub', m!, mNew, 'm_delta'), 'alpha');
        const lNew = kb.add(kb.mulTile(l!, alpha, 'l_scaled'), kb.reduce('sum', p, 1, 'row_sum'), 'l_new');
        // P·V multiplies in the operands' type: P rounded to f16 where V is f16 (one cast for every piece).
        const pIn = operands === 'f32' ? p : kb.cast(p, operands, 'p_in');
        const accNew = acc.map((a, i) => kb.dot(pIn, kb.load(QKV, [j, col(2, i * bkv)], [bkv, bkv], `v${i}`), kb.mulTile(a, alpha, `acc${i}_scaled`), `pv${i}`));
        return [mNew, lNew, ...accNew];
      };

      const init: Matrix[] = [kb.constant(-Infinity, [bq, 1], 'f32', 'm'), kb.zeros([bq, 1], 'f32', 'l'), ...Array.from({ length: pieces }, (_, i) => kb.zeros([bq, bkv], 'f32', `acc${i}`))];
      // KV blocks from row 0 up to the tile's last query row: the diagonal block is the last.
      const [, l, ...acc] = kb.for(0, add(q0, bq), bkv, init, (j, carried) => block(j, carried), 'j');
      acc.forEach((a, i) => {
        const o = kb.binary('div', a, l!, `o${i}`);
        kb.store(O, [q0, col(0, i * bkv)], dtype === 'f32' ? o : kb.cast(o, dtype, `o${i}_out`));
      });
    });
  });
}
